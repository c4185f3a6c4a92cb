/**
 * `marketgate mcp --sim` belongs to its client: it runs against the in-process simulator with no venue
 * variables, and exits 0 when the client closes stdin (or never had one) or sends SIGTERM, having closed
 * the service (streams, alerts, Redis, credits) and the simulator.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { selectTools } from "../../mcp/toolsets.js";
import { TOOLS } from "../../tools/index.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARGS = ["--import", "tsx", "bin/marketgate.ts", "mcp", "--sim"];
/** Only what any MCP client passes (no venue, data mode or directory variables), with logs on for the assertions. */
const ENV = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "info" };

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

/** Spawns the server directly (not through the SDK), collecting stderr; resolves `exited` with its exit. */
function spawnServer(stdin: "ignore" | "pipe") {
  const child: ChildProcess = spawn(process.execPath, ARGS, { cwd: ROOT, env: ENV, stdio: [stdin, "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return { child, exited, stderr: () => stderr };
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Each test starts a server process through tsx: slow on a loaded machine.
describe("marketgate mcp --sim over stdio: lifecycle", { timeout: 90_000 }, () => {
  it("serves the SDK's stdio client against the built-in simulator, and exits by itself when the client closes stdin", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: ARGS, cwd: ROOT, env: ENV, stderr: "pipe" });
    let stderr = "";
    transport.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const client = new Client({ name: "lifecycle-test", version: "0" });
    await client.connect(transport);
    const pid = transport.pid!;
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(selectTools(TOOLS, undefined).map((t) => t.name));
      const r = (await client.callTool({ name: "cex_market", arguments: { id: "bitcoin" } })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ success: true, data: { id: "bitcoin", source: "coingecko (simulated)" } });
      expect(r._meta).toMatchObject({ "marketgate/data-source": "simulated" });
    } finally {
      // Ends the child's stdin, waits up to 2 s, then SIGTERM: the log tells which one stopped it.
      await client.close();
    }
    await waitFor(() => gone(pid), 10_000, "the server process to exit");
    expect(stderr).toMatch(/"reason":"stdin ended","msg":"marketgate MCP server stopped"/);
  });

  it("exits 0 at once when started with stdin already closed (</dev/null)", async () => {
    const s = spawnServer("ignore");
    try {
      // Startup (tsx compiling, simulator, service) is most of the wait: the process stops as soon as it has started.
      await waitFor(() => s.child.exitCode !== null || s.child.signalCode !== null, 60_000, "the server to exit on its own");
      expect(await s.exited).toMatchObject({ code: 0, signal: null });
      expect(s.stderr()).toMatch(/"reason":"stdin (ended|closed)","msg":"marketgate MCP server stopped"/);
    } finally {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
    }
  });

  it("exits 0 within a few seconds of SIGTERM while its client keeps stdin open", async () => {
    const s = spawnServer("pipe");
    try {
      await waitFor(() => s.stderr().includes("marketgate MCP server on stdio"), 60_000, "the server to start");
      const sent = Date.now();
      s.child.kill("SIGTERM");
      const exit = await s.exited;
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(exit.at - sent).toBeLessThan(5000);
      expect(s.stderr()).toMatch(/"reason":"SIGTERM","msg":"marketgate MCP server stopped"/);
    } finally {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
    }
  });
});
