import { pino, type DestinationStream, type Logger } from "pino";
import { REDACTED, redactUrl, scrubSecrets, scrubUrls } from "./redact.js";

/** Payment and auth headers: never logged. */
const HEADER_PATHS = ['req.headers["payment-signature"]', 'req.headers["x-payment"]', "req.headers.authorization"];
/** Fields that hold a URL: logged as `scheme://host[:port]/…` (see {@link redactUrl}). */
const URL_FIELDS = ["url", "rpcUrl", "baseUrl", "redisUrl"];

/** `value` with every string in it (nested up to a few levels) passed through {@link scrubUrls}. */
function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubUrls(value);
  if (depth >= 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubDeep(v, depth + 1);
  return out;
}

/**
 * The `err` serializer: pino's standard one (type, message, stack, causes, own fields), then every URL in
 * any string of it redacted, registered or not. Libraries paste the URLs they called into errors: viem
 * into `message`, `shortMessage`, `details`, `metaMessages` and `url`, Node into `input` (bad URL).
 * A non-error value (`err: e.message`) is scrubbed the same way.
 */
export function serializeError(err: unknown): unknown {
  return scrubDeep(err instanceof Error ? pino.stdSerializers.err(err) : err);
}

/**
 * A logger with marketgate's settings writing JSON lines to `destination`: payment/auth headers redacted,
 * URL fields shown as `scheme://host/…`, errors serialized by {@link serializeError}, and every finished
 * line run through `scrubSecrets` (secrets registered from the configuration, e.g. an RPC key in a
 * message string). `level` default: `LOG_LEVEL`, else `info` (`silent` under vitest).
 */
export function createLogger(destination: DestinationStream, level = process.env.LOG_LEVEL ?? (process.env.VITEST ? "silent" : "info")): Logger {
  return pino(
    {
      level,
      redact: {
        paths: [...HEADER_PATHS, ...URL_FIELDS.flatMap((f) => [f, `*.${f}`])],
        censor: (value, path) => {
          if (!URL_FIELDS.includes(path.at(-1) ?? "")) return REDACTED;
          return typeof value === "string" && value.includes("://") ? redactUrl(value) : value;
        },
      },
      serializers: { err: serializeError },
      hooks: { streamWrite: scrubSecrets },
    },
    destination,
  );
}

/**
 * The process logger. Writes to stderr (fd 2) so that the MCP stdio transport keeps stdout for JSON-RPC.
 */
export const logger: Logger = createLogger(pino.destination(2));

export type { Logger };
