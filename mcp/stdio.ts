import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { loadConfig } from "../src/config.js";
import { logger } from "../src/lib/log.js";
import { simEnv } from "../src/sandbox/sim-env.js";
import { createService } from "../src/service.js";
import { startSimulator } from "../src/sim/server.js";
import { createMcpServer } from "./server.js";

/** Options of {@link runStdio}. */
export interface StdioOptions {
  /**
   * `marketgate mcp --sim`: start the venue simulator in this process and point every venue at it
   * (`DATA_MODE=sim`, answers labelled simulated), so no venue variable has to be set.
   */
  sim?: boolean;
  /** Longest wait for the orderly shutdown before the process exits anyway (ms, default 5000). */
  shutdownTimeoutMs?: number;
}

/**
 * MCP over stdio for the operator's own agent, on the MCP SDK v2's `serveStdio`: a client that opens with
 * `initialize` is served the `2025-11-25` protocol for the connection, one that sends `server/discover` (or any
 * request with the `2026-07-28` `_meta` envelope) the stateless `2026-07-28` one. Every tool callable (`MCP_TOOLSETS` chooses what `tools/list`
 * shows, default the default toolsets of mcp/toolsets.ts), payments off unless `MCP_PAYMENTS=true`
 * (then paid tools expect `_meta["x402/payment"]` as over HTTP), with the venue ingestion and the alert
 * scheduler running as under HTTP. Logs go to stderr only.
 *
 * The process belongs to its client: when stdin ends (the client closed the pipe or went away), the
 * transport closes, or SIGTERM/SIGINT arrives, the service is closed (alert scheduler, streams, alert
 * store, credits, Redis; the simulator with `sim`) and the process exits 0, at the latest after
 * `shutdownTimeoutMs`. A request to stop during startup is honoured once startup has finished.
 */
export async function runStdio(env: Record<string, string | undefined> = process.env, opts: StdioOptions = {}): Promise<void> {
  const closers: Array<{ name: string; close: () => Promise<void> }> = [];
  let startup: Promise<void> = Promise.resolve();
  let stopping: Promise<void> | undefined;

  const stop = (reason: string): void => {
    stopping ??= (async () => {
      logger.info({ reason }, "marketgate MCP server stopping");
      setTimeout(() => {
        logger.warn({ reason }, "marketgate MCP server did not stop in time; exiting");
        process.exit(0);
      }, opts.shutdownTimeoutMs ?? 5000).unref();
      await startup.catch(() => undefined);
      // Last opened, first closed: the MCP server, then the service, then the simulator it reads from.
      for (const c of closers.reverse()) {
        await c.close().catch((err: unknown) => logger.warn({ err, resource: c.name }, "close failed during shutdown"));
      }
      logger.info({ reason }, "marketgate MCP server stopped");
      process.exit(0);
    })();
  };

  // Installed first, so that a client going away during startup is not missed.
  const onSignal = (signal: NodeJS.Signals) => stop(signal);
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  process.stdin.once("end", () => stop("stdin ended"));
  process.stdin.once("close", () => stop("stdin closed"));
  // Writing to a client that went away: EPIPE on stdout.
  process.stdout.once("error", () => stop("stdout closed"));

  startup = (async () => {
    let baseEnv = env;
    if (opts.sim) {
      const sim = await startSimulator();
      closers.push({ name: "simulator", close: () => sim.close() });
      baseEnv = { ...env, ...simEnv(sim) };
    }
    const config = loadConfig(baseEnv);
    const service = await createService({ config, paymentsOff: !config.mcpStdioPayments });
    closers.push({ name: "service", close: () => service.close() });
    const info = { name: service.info.name, version: service.info.version };
    const toolsets = config.mcpToolsets;
    // MCP_TOOLSETS chooses what tools/list shows (mcp/toolsets.ts); an unknown name stops startup with the known ones.
    service.mcp.listFor(toolsets);
    // One server per era the client opens with (and one for a `server/discover` probe), all over the same catalogue.
    const handle = serveStdio(() => createMcpServer(service.mcp, info, (meta) => ({ meta }), { toolsets }), {
      transport: new StdioServerTransport(),
      onerror: (err) => logger.debug({ err: err.message }, "mcp stdio message refused"),
    });
    closers.push({ name: "mcp server", close: () => handle.close() });
    await service.startIngestion();
    // Alerts created over stdio are evaluated and delivered by this process too.
    service.alerts?.start();
    logger.info({ dataMode: config.dataMode, payments: config.mcpStdioPayments, simulator: opts.sim ?? false }, "marketgate MCP server on stdio");
  })();
  try {
    await startup;
  } catch (err) {
    // Startup failed: no shutdown from now on (the caller reports the error and exits); release what was opened.
    stopping ??= Promise.resolve();
    for (const c of closers.reverse()) await c.close().catch(() => undefined);
    closers.length = 0;
    process.removeListener("SIGTERM", onSignal);
    process.removeListener("SIGINT", onSignal);
    throw err;
  }
}
