/**
 * The host configurations of docs/mcp.md ("Connect from a host"), launched as each host would: the Claude Code
 * commands parsed like `claude mcp add` reads them, the JSON files (Claude Desktop, Cursor, VS Code) read like
 * their hosts read them; a stdio entry is started with its command, arguments and environment and lists its tools
 * over stdio with the MCP SDK client; a remote entry is reached at its URL with its headers (a credits session
 * token as `Authorization: Bearer`) and pays a call from credits. Placeholders point at a paid test service on
 * anvil: the URL, the wallet key, the session token. `npx -y marketgate` is the published package; until it is
 * published, an `npx` first on PATH runs the checkout's bin for exactly those arguments (test/package/ runs the
 * packed tarball through the real npx).
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientMain } from "../../src/cli/client.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { cleanupAfterEach, tempDir } from "../helpers/scratch.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOC_URL = "https://data.example.com/mcp";

/** A server entry as a host launches it. */
type Launch = { kind: "stdio"; command: string; args: string[]; env: Record<string, string> } | { kind: "http"; url: string; headers: Record<string, string> };

/** The fenced blocks of each `###` host of the "Connect from a host" section. */
function hostBlocks(): Map<string, Array<{ lang: string; code: string }>> {
  const page = readFileSync(join(ROOT, "docs/mcp.md"), "utf8");
  const start = page.indexOf("\n## Connect from a host");
  expect(start).toBeGreaterThan(0);
  const end = page.indexOf("\n## ", start + 1);
  const out = new Map<string, Array<{ lang: string; code: string }>>();
  for (const part of page.slice(start, end).split("\n### ").slice(1)) {
    const host = part.slice(0, part.indexOf("\n")).trim();
    out.set(
      host,
      [...part.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! })),
    );
  }
  return out;
}

/** Shell words of one command line (double and single quotes; no expansions). */
function shellWords(line: string): string[] {
  return [...line.trim().matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** A `claude mcp add …` command as Claude Code reads it: options, the name, then the URL or `-- command args…`. */
function claudeMcpAdd(line: string): Launch {
  const w = shellWords(line);
  expect(w.slice(0, 3)).toEqual(["claude", "mcp", "add"]);
  let transport = "stdio";
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 3; i < w.length; i++) {
    const a = w[i]!;
    if (a === "--") return { kind: "stdio", command: w[i + 1]!, args: w.slice(i + 2), env };
    if (a === "--transport" || a === "-t") transport = w[++i]!;
    else if (a === "--env" || a === "-e") {
      const [k, ...v] = w[++i]!.split("=");
      env[k!] = v.join("=");
    } else if (a === "--header" || a === "-H") {
      const h = w[++i]!;
      headers[h.slice(0, h.indexOf(":")).trim()] = h.slice(h.indexOf(":") + 1).trim();
    } else if (a === "--scope" || a === "-s") i++;
    else positional.push(a);
  }
  expect(transport).toBe("http");
  expect(positional).toHaveLength(2);
  return { kind: "http", url: positional[1]!, headers };
}

/** The servers of a JSON host file: `mcpServers` (Claude Desktop, Cursor) or `servers` (VS Code), `${input:…}` filled from `inputs`. */
function jsonServers(code: string, inputValue: (id: string) => string): Launch[] {
  const doc = JSON.parse(code) as {
    inputs?: Array<{ id: string; password?: boolean }>;
    mcpServers?: Record<string, Record<string, unknown>>;
    servers?: Record<string, Record<string, unknown>>;
  };
  const inputs = new Set((doc.inputs ?? []).map((i) => i.id));
  const fill = (v: string) =>
    v.replace(/\$\{input:([^}]+)\}/g, (_, id: string) => {
      expect(inputs.has(id), `input ${id} is declared`).toBe(true);
      return inputValue(id);
    });
  const servers = doc.mcpServers ?? doc.servers ?? {};
  return Object.values(servers).map((s) => {
    if (typeof s.url === "string") {
      if (doc.servers) expect(s.type).toBe("http");
      return { kind: "http", url: s.url, headers: Object.fromEntries(Object.entries((s.headers ?? {}) as Record<string, string>).map(([k, v]) => [k, fill(v)])) };
    }
    if (doc.servers) expect(s.type).toBe("stdio");
    return {
      kind: "stdio",
      command: s.command as string,
      args: (s.args as string[]) ?? [],
      env: Object.fromEntries(Object.entries((s.env ?? {}) as Record<string, string>).map(([k, v]) => [k, fill(v)])),
    };
  });
}

describe("docs/mcp.md host configurations, launched as the host would", { timeout: 120_000 }, () => {
  let stack: OfflineStack;
  let token: string;
  const cleanup = cleanupAfterEach();
  const blocks = hostBlocks();

  beforeAll(async () => {
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000" } });
    // The remote configurations' token: a top-up, then the session `marketgate call --credits` prints, as the page says.
    const payer = stack.payers[6]!;
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))).setSpendControls(false));
    const topUp = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"amount_usd":"1"}' });
    expect(topUp.status).toBe(200);
    const err: string[] = [];
    const code = await clientMain("call", ["/funding-rate/BTC", "--credits"], {
      stdout: () => undefined,
      stderr: (t) => err.push(t),
      env: { MARKETGATE_URL: stack.url, X402_PRIVATE_KEY: payer.privateKey },
    });
    expect(code).toBe(0);
    token = /X-Credits-Session: (\S+)/.exec(err.join(""))![1]!;
  });
  afterAll(() => stack?.close());

  /** The placeholders of the page, pointed at the test service. */
  const fill = (text: string) => text.replaceAll(DOC_URL, `${stack.url}/mcp`).replaceAll("0xYOUR_KEY", stack.payers[7]!.privateKey).replaceAll("YOUR_SESSION_TOKEN", token);

  /** An `npx` first on PATH: `npx -y marketgate …` runs the checkout's bin; any other use fails loudly. */
  function npxShim(): string {
    const dir = join(tempDir(cleanup, "mg-npx-"), "bin");
    mkdirSync(dir);
    const script = `#!/bin/sh\n[ "$1" = "-y" ] && [ "$2" = "marketgate" ] || { echo "npx shim: unexpected arguments: $*" >&2; exit 64; }\nshift 2\ncd '${ROOT}' && exec '${process.execPath}' --import tsx bin/marketgate.ts "$@"\n`;
    writeFileSync(join(dir, "npx"), script);
    chmodSync(join(dir, "npx"), 0o755);
    return dir;
  }

  /** Starts or reaches `launch` with the v2 SDK client; the tool names it lists (and the client, for more calls). */
  async function connect(launch: Launch): Promise<{ client: Client; names: string[]; stderr: () => string }> {
    const client = new Client({ name: "host", version: "0" });
    let log = "";
    if (launch.kind === "stdio") {
      const home = tempDir(cleanup, "mg-home-");
      const transport = new StdioClientTransport({
        command: launch.command,
        args: launch.args,
        // What a host passes: its small default environment, the entry's variables, and here the shim's PATH and a home of its own.
        env: { ...launch.env, PATH: `${npxShim()}:${process.env.PATH ?? ""}`, HOME: home },
        cwd: home,
        stderr: "pipe",
      });
      transport.stderr!.on("data", (c: Buffer) => (log += c.toString("utf8")));
      await client.connect(transport);
    } else {
      await client.connect(new StreamableHTTPClientTransport(new URL(launch.url), { requestInit: { headers: launch.headers } }));
    }
    const names = (await client.listTools()).tools.map((t) => t.name);
    return { client, names, stderr: () => log };
  }

  it("the page has the four hosts' configurations: Claude Code, Claude Desktop, Cursor and VS Code, stdio and remote", () => {
    expect([...blocks.keys()]).toEqual(["Claude Code", "Claude Desktop", "Cursor", "VS Code"]);
    expect(blocks.get("Claude Code")!.map((b) => b.lang)).toEqual(["sh", "sh"]);
    expect(blocks.get("Claude Desktop")!.map((b) => b.lang)).toEqual(["json"]);
    expect(blocks.get("Cursor")!.map((b) => b.lang)).toEqual(["json", "json"]);
    expect(blocks.get("VS Code")!.map((b) => b.lang)).toEqual(["json", "json"]);
  });

  /** Every entry of every block, with where it came from. */
  const launches = (): Array<{ where: string; launch: Launch }> =>
    [...blocks].flatMap(([host, list]) =>
      list.flatMap((b, i) => {
        const code = fill(b.code);
        const ls = b.lang === "sh" ? [claudeMcpAdd(code)] : jsonServers(code, () => stack.payers[7]!.privateKey);
        return ls.map((launch) => ({ where: `${host} #${i + 1}`, launch }));
      }),
    );

  it("each stdio entry starts `marketgate connect` with the wallet of its environment and lists the remote's tools", async () => {
    const stdio = launches().filter((l) => l.launch.kind === "stdio");
    expect(stdio.map((l) => l.where)).toEqual(["Claude Code #1", "Claude Desktop #1", "Cursor #1", "VS Code #1"]);
    const remote = new Client({ name: "direct", version: "0" });
    await remote.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
    const expected = (await remote.listTools()).tools.map((t) => t.name);
    await remote.close();
    for (const { where, launch } of stdio) {
      expect(launch.kind === "stdio" && launch.args.slice(0, 4)).toEqual(["-y", "marketgate", "connect", `${stack.url}/mcp`]);
      const { client, names, stderr } = await connect(launch);
      try {
        expect(names, where).toEqual(expected);
        expect(stderr(), where).toContain(`for wallet ${stack.payers[7]!.address}`);
      } finally {
        await client.close();
      }
    }
  });

  it("each remote entry reaches /mcp with its Authorization: Bearer header, lists the tools and pays a call from credits", async () => {
    const remote = launches().filter((l) => l.launch.kind === "http");
    expect(remote.map((l) => l.where)).toEqual(["Claude Code #2", "Cursor #2", "VS Code #2"]);
    // A different paid tool each time: a cache hit would be free and prove nothing.
    const tools = ["cex_market", "dex_price", "funding_rate"].map((n) => TOOLS.find((t) => t.name === n)!);
    for (const [i, { where, launch }] of remote.entries()) {
      expect(launch.kind === "http" && launch.headers).toEqual({ Authorization: `Bearer ${token}` });
      const { client, names } = await connect(launch);
      try {
        expect(names.length, where).toBeGreaterThan(10);
        const tool = tools[i]!;
        const r = await client.callTool({ name: tool.name, arguments: tool.example as Record<string, unknown> });
        expect(r.isError, `${where}: ${JSON.stringify(r.content)}`).toBeFalsy();
        expect(r._meta?.["marketgate/credits"], where).toMatchObject({ remaining_usd: expect.any(String) });
      } finally {
        await client.close();
      }
    }
  });
});
