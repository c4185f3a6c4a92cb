import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** A marketgate service running in its own OS process. */
export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Sends `signal` (default SIGKILL) and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts the production entry (`src/main.ts`, through tsx) with `env` on top of this process's
 * environment, and resolves with its URL once it logs "marketgate listening". Its stderr is kept for
 * the error message when it fails to start within `timeoutMs`.
 */
export function startServiceProcess(env: Record<string, string>, opts: { timeoutMs?: number } = {}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { ...process.env, LOG_LEVEL: "info", ...env },
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
      reject(new Error(`service did not start within ${opts.timeoutMs ?? 30_000} ms:\n${log.slice(-20).join("\n")}`));
    }, opts.timeoutMs ?? 30_000);
    createInterface({ input: child.stderr! }).on("line", (line) => {
      log.push(line);
      if (log.length > 200) log.shift();
      if (!line.includes('"marketgate listening"')) return;
      clearTimeout(timer);
      resolve({ url: (JSON.parse(line) as { url: string }).url, child, kill });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening:\n${log.slice(-20).join("\n")}`));
    });
  });
}
