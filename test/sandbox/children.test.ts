import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Every process below `root`, with its command name, from `ps` (Linux and macOS). */
function descendants(root: number): Array<{ pid: number; comm: string }> {
  const rows = execFileSync("ps", ["-A", "-o", "pid=,ppid=,comm="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .map(([pid, ppid, ...comm]) => ({ pid: Number(pid), ppid: Number(ppid), comm: comm.join(" ") }));
  const out: Array<{ pid: number; comm: string }> = [];
  const walk = (parent: number) => {
    for (const r of rows.filter((x) => x.ppid === parent)) {
      out.push({ pid: r.pid, comm: r.comm });
      walk(r.pid);
    }
  };
  walk(root);
  return out;
}

/** Whether `pid` runs: a zombie (exited, not yet reaped by whoever adopted it) does not. */
const alive = (pid: number) => {
  try {
    return !execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" })
      .trim()
      .startsWith("Z");
  } catch {
    return false; // ps exits 1 when there is no such process
  }
};

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

/** Polls `check` every 100 ms until it holds or `ms` pass; resolves to whether it held. */
async function eventually(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/*
 * The sandbox's child processes die with it however it ends. A crash (Node 20's segfault, SIGKILL) runs no JS
 * exit handler, so the children watch their parent instead (src/lib/tied-child.ts): killed with SIGKILL, the
 * sandbox leaves no anvil holding the chain port.
 */
describe.skipIf(process.platform === "win32")("npm run sandbox: its children die with it, on a crash too", () => {
  let sandbox: ChildProcess | undefined;
  const leftovers: number[] = [];
  afterAll(() => {
    sandbox?.kill("SIGKILL");
    // Only if the test failed: do not leave what it found running.
    for (const pid of leftovers) if (alive(pid)) process.kill(pid, "SIGKILL");
  });

  it("SIGKILL of the sandbox: anvil (and every other process it started) is gone, and the chain port is free", async () => {
    // The sandbox itself, not tsx's launcher process: this pid is the process that crashes.
    sandbox = spawn(process.execPath, ["--import", "tsx", "src/sandbox/main.ts", "--no-demo", "--port", "0", "--chain-port", "0", "--solana-port", "0"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    sandbox.stdout!.on("data", (c: Buffer) => (out += c.toString("utf8")));
    sandbox.stderr!.on("data", (c: Buffer) => (out += c.toString("utf8")));
    const exited = new Promise<NodeJS.Signals | null>((r) => sandbox!.once("exit", (_code, signal) => r(signal)));
    expect(await eventually(() => out.includes("serving until killed"), 120_000), out).toBe(true);

    const chainPort = Number(/chain RPC\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]);
    expect(await listening(chainPort)).toBe(true);
    const children = descendants(sandbox.pid!);
    leftovers.push(...children.map((c) => c.pid));
    expect(children.map((c) => c.comm)).toContain("anvil");

    sandbox.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    const gone = await eventually(() => children.every((c) => !alive(c.pid)), 15_000);
    expect(gone, `still running: ${JSON.stringify(children.filter((c) => alive(c.pid)))}`).toBe(true);
    expect(await listening(chainPort)).toBe(false);
  }, 180_000);
});
