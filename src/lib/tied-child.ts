import { spawn, type ChildProcess } from "node:child_process";

/**
 * The watchdog a tied child runs under: `node -e WATCHDOG <graceMs> <command> [args...]`. It starts the command
 * (stdin ignored, stdout and stderr its own, which are the parent's pipes), and stops it (SIGTERM, SIGKILL after
 * `graceMs`) when its own stdin ends, which happens when the parent closes the pipe or dies in any way, a
 * segfault or SIGKILL included (the OS closes a dead process's pipes; no JS of the parent has to run). It also
 * stops the command on SIGTERM, SIGINT and SIGHUP, and exits as the command did. Plain CommonJS with no
 * dependencies, so that it starts fast on any Node.
 */
const WATCHDOG = `
const { spawn } = require("node:child_process");
const [grace, command, ...args] = process.argv.slice(1);
const child = spawn(command, args, { stdio: ["ignore", "inherit", "inherit"] });
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  child.kill("SIGTERM");
  setTimeout(() => child.kill("SIGKILL"), Number(grace)).unref();
};
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, stop);
child.on("error", (err) => {
  process.stderr.write(command + ": " + err.message + "\\n");
  process.exit(127);
});
child.on("exit", (code, signal) => {
  if (signal === null) process.exit(code === null ? 1 : code);
  for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.removeAllListeners(s);
  process.kill(process.pid, signal);
});
`;

/** How long the watchdog waits after SIGTERM before it SIGKILLs the command, in ms. */
const WATCHDOG_GRACE_MS = 1000;

/** A process that cannot outlive the one that started it: see {@link spawnTied}. */
export interface TiedChild {
  /**
   * The watchdog process (its pid is not the command's). Its stdout and stderr carry the command's, and its
   * `exit` event (code, or signal) is the command's exit.
   */
  readonly child: ChildProcess;
  /**
   * Stops the command (the watchdog sends SIGTERM, then SIGKILL after 1 s) and resolves once the watchdog has
   * exited, which it does after the command; SIGKILLs the watchdog if that takes over `graceMs` (default 5000).
   * Idempotent; resolves at once when it has exited already.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Spawns `command` with `args` under a small Node watchdog ({@link WATCHDOG}) that kills it when this process
 * goes away, however it goes: `process.on("exit")` hooks do not run when Node crashes (a native addon's segfault)
 * or is SIGKILLed, and Node offers no `PR_SET_PDEATHSIG`. The watchdog notices the end of its stdin, a pipe from
 * this process that the OS closes when this process dies. Works wherever Node does (no process groups or Linux
 * `prctl`). The watchdog gets this environment without `NODE_OPTIONS` (its own start stays small; the command
 * gets the same environment).
 *
 * @param output where the command's stdout and stderr go: `pipe` (read them from `child.stdout`/`child.stderr`),
 *   `inherit` or `ignore`.
 */
export function spawnTied(command: string, args: readonly string[], output: "pipe" | "inherit" | "ignore" = "pipe"): TiedChild {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ["-e", WATCHDOG, String(WATCHDOG_GRACE_MS), command, ...args], { stdio: ["pipe", output, output], env });
  // A write or close error of the pipe only means the watchdog is gone already.
  child.stdin?.on("error", () => undefined);
  let stopping: Promise<void> | undefined;
  return {
    child,
    stop(graceMs = 5000) {
      stopping ??= new Promise<void>((resolve) => {
        // pid is undefined when the spawn itself failed: there is no process to wait for.
        if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        child.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        child.stdin?.end();
      });
      return stopping;
    },
  };
}
