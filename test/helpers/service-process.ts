import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { afterEach } from "vitest";

/** A marketgate service running in its own OS process. */
export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Sends `signal` (default SIGKILL) and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** The last 200 lines of its stderr (its logs), for failure messages. */
  stderr(): string;
}

/** How long a service process may take to log "marketgate listening": tsx compiles at startup, slowly on a loaded machine. */
export const SERVICE_START_TIMEOUT_MS = 120_000;

/** Entry of a payment-free service process (the production entry refuses to start without PAY_TO). */
export const FREE_SERVICE_ENTRY = "test/helpers/free-service-main.ts";

/**
 * Settings naming a service's state (shared Redis, its key prefix, lease identity, data directory): a
 * service process takes them from the test's `env` only, never from the test runner's environment, so an
 * "embedded" process never shares a Redis (or a `.data` directory) with other tests or earlier runs.
 */
export const STATE_ENV = ["REDIS_URL", "REDIS_PREFIX", "REPLICA_ID", "LEASE_TTL_MS", "DATA_DIR"] as const;

/** This process's environment without {@link STATE_ENV}, then `env`; `DATA_DIR` defaults to `:memory:`. */
export function serviceProcessEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const k of STATE_ENV) delete inherited[k];
  return { ...inherited, DATA_DIR: ":memory:", ...env };
}

/**
 * Starts a service in its own OS process (through tsx): the production entry `src/main.ts` by default,
 * or `opts.entry` (e.g. {@link FREE_SERVICE_ENTRY}), with `env` on top of this process's environment
 * minus its state settings ({@link serviceProcessEnv}).
 * Resolves with its URL once it logs "marketgate listening". Its stderr is kept for the error message
 * when it fails to start within `timeoutMs` (default {@link SERVICE_START_TIMEOUT_MS}).
 */
export function startServiceProcess(env: Record<string, string>, opts: { timeoutMs?: number; entry?: string } = {}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", opts.entry ?? "src/main.ts"], {
    // Info level: the "marketgate listening" line is how the URL is learnt.
    env: { ...serviceProcessEnv(env), LOG_LEVEL: "info" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    const log: string[] = [];
    const timer = setTimeout(() => {
      void kill();
      reject(new Error(`service did not start within ${opts.timeoutMs ?? SERVICE_START_TIMEOUT_MS} ms:\n${log.slice(-20).join("\n")}`));
    }, opts.timeoutMs ?? SERVICE_START_TIMEOUT_MS);
    createInterface({ input: child.stderr! }).on("line", (line) => {
      log.push(line);
      if (log.length > 200) log.shift();
      if (!line.includes('"marketgate listening"')) return;
      clearTimeout(timer);
      resolve({ url: (JSON.parse(line) as { url: string }).url, child, kill, stderr: () => log.join("\n") });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening:\n${log.slice(-20).join("\n")}`));
    });
  });
}

/**
 * Payment-free service processes for multi-process tests: the returned function starts one
 * ({@link FREE_SERVICE_ENTRY}, up to {@link SERVICE_START_TIMEOUT_MS} to start);
 * every process it started is SIGKILLed after each test of the calling file. Call it after `cleanupAfterEach()` so that the processes
 * are gone before their directories are removed.
 */
export function freeServiceProcesses(): (env: Record<string, string>) => Promise<ServiceProcess> {
  const running = new Set<ServiceProcess>();
  afterEach(async () => {
    await Promise.all([...running].map((p) => p.kill()));
    running.clear();
  });
  return async (env) => {
    const p = await startServiceProcess(env, { entry: FREE_SERVICE_ENTRY });
    running.add(p);
    return p;
  };
}
