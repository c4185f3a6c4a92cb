import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { distIsFresh } from "../helpers/dist.js";
import { CATALOG, type CatalogEntry } from "./snippet-catalog.js";
import { docPages, fillPlaceholders, missingOutput, snippetsOf, type Placeholders, type Snippet } from "./snippets.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The machine's TLS and proxy settings, which a stdio server started by npx needs to install from the registry. */
const NETWORK_ENV = /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy)$/;
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");

const ALL = docPages(ROOT).flatMap((page) => snippetsOf(ROOT, page));
const blocksOf = (entry: Pick<CatalogEntry, "file" | "has">) => ALL.filter((s) => s.file === entry.file && s.code.includes(entry.has));
const blockOf = (entry: Pick<CatalogEntry, "file" | "has">): Snippet => {
  const found = blocksOf(entry);
  if (found.length !== 1) throw new Error(`${entry.file}: ${found.length} blocks contain ${JSON.stringify(entry.has)} (want one)`);
  return found[0]!;
};

/** What a run printed (stdout and stderr as one stream), and how it ended. */
interface Ran {
  code: number | null;
  output: string;
  /** It printed `until` and was stopped then. */
  stopped: boolean;
}

/**
 * Runs `command` in its own process group in the checkout, with `input` on stdin; stops the whole group once
 * the output matches `until`, or after `timeoutMs` (then `code` is null).
 */
function run(command: string, args: string[], opts: { input?: string; env?: Record<string, string>; until?: RegExp; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...opts.env }, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    let stopped = false;
    const stop = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => stop("SIGKILL"), opts.timeoutMs ?? 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (opts.until && !stopped && opts.until.test(output)) {
        stopped = true;
        stop("SIGTERM");
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.stdin!.end(opts.input ?? "");
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output, stopped });
    });
  });
}

/** A free TCP port on loopback. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** The sandbox `npm run sandbox -- --no-demo` starts (its script, run directly), on ports of its own. */
interface Sandbox {
  child: ChildProcess;
  port: number;
  /** The funded payers' keys it printed, by payer number (#1..#9). */
  keys: Map<number, string>;
  /** Its local HTTPS webhook receiver. */
  webhooks: string;
}

async function startSandbox(): Promise<Sandbox> {
  const port = await freePort();
  const child = spawn(process.execPath, [TSX, "src/sandbox/main.ts", "--no-demo", "--port", String(port), "--chain-port", "0", "--solana-port", "0"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString("utf8")));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString("utf8")));
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (out.includes("serving until killed")) done();
    }, 100);
    const timeout = setTimeout(() => done(new Error(`the sandbox did not start in 180 s:\n${out}`)), 180_000);
    const done = (err?: Error) => {
      clearInterval(check);
      clearTimeout(timeout);
      child.removeListener("exit", exited);
      if (err) reject(err);
      else resolve();
    };
    const exited = () => done(new Error(`the sandbox exited:\n${out}`));
    child.once("exit", exited);
  });
  const keys = new Map([...out.matchAll(/^\s+#(\d) 0x[0-9a-fA-F]{40}\s+key (0x[0-9a-f]{64})$/gm)].map((m) => [Number(m[1]), m[2]!]));
  const webhooks = /^\s+webhooks\s+(https:\/\/\S+)/m.exec(out)![1]!;
  return { child, port, keys, webhooks };
}

/** The tarball `npm pack` makes in the checkout (it builds dist/ first unless fresh), made once, in a folder that stays. */
let packed: Promise<string> | undefined;
const tarball = () =>
  (packed ??= (async () => {
    // A fixed folder: npx installs a tarball once per path, and reuses the install on the next run.
    const dir = join(tmpdir(), "marketgate-docs-pack");
    mkdirSync(dir, { recursive: true });
    // A fresh dist/ (.ci/run builds it before the tests) is packed as it is: building again would rewrite it under
    // the package test, which packs it at the same time.
    const r = await run("npm", ["pack", "--silent", ...(distIsFresh() ? ["--ignore-scripts"] : []), "--pack-destination", dir], { timeoutMs: 600_000 });
    if (r.code !== 0) throw new Error(`npm pack failed:\n${r.output}`);
    return join(dir, r.output.trim().split("\n").at(-1)!.trim());
  })());

/*
 * Every command and snippet of README.md and docs/ that a reader copies, run as written against the sandbox
 * (test/docs/snippet-catalog.ts lists them all and says how each is run, or why it is not run here).
 */
describe("README.md and docs/: every snippet as written", () => {
  let sandbox: Sandbox;
  const scratch = mkdtempSync(join(tmpdir(), "marketgate-snippets-"));

  beforeAll(async () => {
    sandbox = await startSandbox();
  }, 200_000);
  afterAll(async () => {
    if (sandbox) {
      const exited = new Promise((r) => sandbox.child.once("exit", r));
      sandbox.child.kill("SIGTERM");
      await exited;
    }
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  const placeholders = (payer?: number): Placeholders => ({
    port: sandbox.port,
    key: payer === undefined ? undefined : sandbox.keys.get(payer),
    checkout: ROOT.replace(/\/$/, ""),
    serviceUrl: `http://127.0.0.1:${sandbox.port}`,
    webhookUrl: sandbox.webhooks,
  });

  it("lists every block of README.md and docs/ once, and pins the ones it does not run", () => {
    const named = new Map<Snippet, CatalogEntry[]>(ALL.map((s) => [s, []]));
    for (const entry of CATALOG) for (const s of blocksOf(entry)) named.get(s)!.push(entry);
    const unlisted = [...named].filter(([, e]) => e.length === 0).map(([s]) => `${s.file}:${s.line} (${s.lang}, sha ${s.sha}): ${s.first}`);
    expect(unlisted, "blocks no catalog entry names: add them to test/docs/snippet-catalog.ts").toEqual([]);
    const ambiguous = CATALOG.filter((e) => blocksOf(e).length !== 1).map((e) => `${e.file}: ${e.has} (${blocksOf(e).length} blocks)`);
    expect(ambiguous, "entries that do not name exactly one block").toEqual([]);
    const twice = [...named].filter(([, e]) => e.length > 1).map(([s]) => `${s.file}:${s.line}`);
    expect(twice, "blocks named by more than one entry").toEqual([]);
    const edited = CATALOG.flatMap((e) =>
      e.run === "pinned" && blockOf(e).sha !== e.sha ? [`${e.file}:${blockOf(e).line}: sha ${blockOf(e).sha} (pinned ${e.sha}); ${e.why}`] : [],
    );
    expect(edited, "pinned blocks that changed: check them by hand, then update their sha").toEqual([]);
  });

  for (const entry of CATALOG) {
    if (entry.run === "pinned") continue;
    const name = `${entry.file}: ${entry.run} block "${entry.has}"`;

    if (entry.run === "sh") {
      it(
        name,
        async () => {
          const block = blockOf(entry);
          const p = placeholders(entry.payer);
          // docs/cli.md's `marketgate` is the shell function the page gives for a checkout.
          const fn = /`(marketgate\(\) \{[^`]+\})`/.exec(readFileSync(join(ROOT, entry.file), "utf8"))?.[1];
          const script = join(scratch, `${block.file.replaceAll("/", "_")}-${block.line}.sh`);
          writeFileSync(script, `${fn ? `${fillPlaceholders(fn, p)}\n` : ""}${fillPlaceholders(block.code, p)}\n`);
          const r = await run("bash", ["-e", script], { timeoutMs: 240_000 });
          expect(r.code, r.output).toBe(entry.exitCode ?? 0);
          expect(missingOutput(block.code.replace(/\b(localhost|127\.0\.0\.1):4021\b/g, `$1:${sandbox.port}`), r.output), r.output).toEqual([]);
        },
        300_000,
      );
    }

    if (entry.run === "ts") {
      it(
        name,
        async () => {
          const block = blockOf(entry);
          const before = entry.after ? `${blockOf({ file: entry.file, has: entry.after }).code}\n` : "";
          const code = fillPlaceholders(before + block.code, placeholders(entry.payer));
          const env: Record<string, string> = entry.payer === undefined ? {} : { X402_PRIVATE_KEY: sandbox.keys.get(entry.payer)! };
          for (let i = 0; i < (entry.times ?? 1); i++) {
            const r = await run(process.execPath, [TSX], { input: code, env, until: entry.until, timeoutMs: 120_000 });
            if (entry.until) expect(r.stopped, r.output).toBe(true);
            else expect(r.code, `run ${i + 1}:\n${r.output}`).toBe(0);
          }
        },
        300_000,
      );
    }

    if (entry.run === "mcp-config") {
      it(
        name,
        async () => {
          const block = blockOf(entry);
          const p = block.code.includes("/path/to/marketgate-0.1.0.tgz") ? { ...placeholders(), tarball: await tarball() } : placeholders();
          const config = JSON.parse(fillPlaceholders(block.code, p)) as {
            mcpServers: Record<string, { url?: string; command?: string; args?: string[]; env?: Record<string, string> }>;
          };
          for (const [name, server] of Object.entries(config.mcpServers)) {
            const client = new Client({ name: "docs-test", version: "0" });
            let stderr = "";
            let transport: StreamableHTTPClientTransport | StdioClientTransport;
            if (server.url) transport = new StreamableHTTPClientTransport(new URL(server.url));
            else {
              // A host starts it from a folder of its own, with a small environment (the SDK's default: HOME, PATH, …),
              // the variables configured, and this machine's TLS and proxy settings (npx installs through them).
              const machine = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && NETWORK_ENV.test(k))) as Record<string, string>;
              transport = new StdioClientTransport({ command: server.command!, args: server.args, env: { ...machine, ...server.env }, cwd: tmpdir(), stderr: "pipe" });
              // Read (and keep the tail of) its log: a full stderr pipe would stop the server.
              transport.stderr?.on("data", (c: Buffer) => (stderr = (stderr + c.toString("utf8")).slice(-4000)));
            }
            try {
              // The first start of a tarball installs its dependencies.
              await client.connect(transport, { timeout: 300_000 });
              const { tools } = await client.listTools();
              expect(tools.length, name).toBeGreaterThan(10);
            } catch (err) {
              throw new Error(`${name}: ${(err as Error).message}\n${stderr}`, { cause: err });
            } finally {
              await client.close();
            }
          }
        },
        600_000,
      );
    }
  }
});
