import { pino, type Logger } from "pino";

/**
 * The process logger (JSON lines). Writes to stderr (fd 2) so that the MCP stdio transport keeps
 * stdout for JSON-RPC. Level from `LOG_LEVEL` (default `info`; `silent` in tests).
 */
export const logger: Logger = pino(
  {
    level: process.env.LOG_LEVEL ?? (process.env.VITEST ? "silent" : "info"),
    redact: ["req.headers[\"payment-signature\"]", "req.headers[\"x-payment\"]", "req.headers.authorization"],
  },
  pino.destination(2),
);

export type { Logger };
