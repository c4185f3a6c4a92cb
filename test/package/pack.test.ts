/**
 * The npm package (issue 32, item 7): what `npm pack` puts in the tarball, and the tarball's own bin run from a
 * folder outside the checkout: `connect` pays a call of a paid service on anvil, `mcp --sim` lists its tools,
 * `call` pays one request; `marketgate/client` resolves through the package's exports, with types; `npm publish
 * --dry-run` accepts the tarball; `manifest/server.json` names the package.
 *
 * Packing skips the build (`--ignore-scripts`) when dist/ is newer than every file it is built from, else builds
 * first (`npm run build`, a minute or more). The tarball's dependencies come from the checkout's node_modules
 * (linked as the unpacked package's own): `npx ./marketgate-<v>.tgz` would install them from the registry, over a
 * minute on a cold cache, which the case at the end does when MARKETGATE_NPX_INSTALL=1.
 */
import { execFile, spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, copyFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { distIsFresh } from "../helpers/dist.js";
import { tempDir } from "../helpers/scratch.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);

interface Packed {
  filename: string;
  files: Array<{ path: string; mode: number }>;
}

describe("the npm package", { timeout: 120_000 }, () => {
  const cleanup: Array<() => void> = [];
  let dir: string;
  let tarball: string;
  let packed: Packed;
  /** The unpacked package, as npm installs it under a project's node_modules. */
  let pkgDir: string;
  /** A project folder outside the checkout with the package installed, and its `.bin/marketgate`. */
  let app: string;
  let bin: string;
  let pkg: { name: string; version: string; mcpName: string; bin: Record<string, string>; exports: Record<string, Record<string, string>> };
  let stack: OfflineStack;

  beforeAll(async () => {
    dir = tempDir(cleanup, "mg-pack-");
    if (!distIsFresh()) await run("npm", ["run", "build"], { cwd: ROOT, timeout: 300_000 });
    const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: ROOT, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
    packed = (JSON.parse(stdout) as Packed[])[0]!;
    tarball = join(dir, packed.filename);
    app = join(dir, "app");
    mkdirSync(join(app, "node_modules", ".bin"), { recursive: true });
    await run("tar", ["xzf", tarball, "-C", join(app, "node_modules")]);
    pkgDir = join(app, "node_modules", "marketgate");
    await run("mv", [join(app, "node_modules", "package"), pkgDir]);
    // The dependencies an install would fetch: the checkout's, at the locked versions.
    symlinkSync(join(ROOT, "node_modules"), join(pkgDir, "node_modules"));
    pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as typeof pkg;
    bin = join(app, "node_modules", ".bin", "marketgate");
    // What npm does on install: link the bin and make its target executable.
    symlinkSync(relative(join(app, "node_modules", ".bin"), join(pkgDir, pkg.bin.marketgate!)), bin);
    chmodSync(join(pkgDir, pkg.bin.marketgate!), 0o755);
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000" } });
  }, 400_000);
  afterAll(async () => {
    await stack?.close();
    for (const c of cleanup) c();
  });

  it("holds the built CLI with its shebang, every exported file with its types, the manifests, and no sources or tests", () => {
    const paths = new Set(packed.files.map((f) => f.path));
    expect(pkg.name).toBe("marketgate");
    expect(paths.has(pkg.bin.marketgate!)).toBe(true);
    expect(readFileSync(join(pkgDir, pkg.bin.marketgate!), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    for (const rel of ["dist/src/bridge/main.js", "dist/src/client/mcp.js", "dist/mcp/stdio.js", "dist/src/cli/client.js", "manifest/server.json", "README.md"])
      expect(paths, rel).toContain(rel);
    const client = pkg.exports["./client"]!;
    expect(Object.keys(client)).toEqual(["types", "default"]);
    for (const target of Object.values(client)) expect(paths, target).toContain(target.replace(/^\.\//, ""));
    expect([...paths].filter((p) => p.startsWith("test/") || p.startsWith("src/") || p.startsWith("bin/") || p.startsWith("node_modules/"))).toEqual([]);
  });

  it("manifest/server.json names the package, its version and the ownership proof (mcpName)", () => {
    const server = JSON.parse(readFileSync(join(pkgDir, "manifest/server.json"), "utf8")) as {
      name: string;
      version: string;
      packages: Array<{ registryType: string; identifier: string; version: string }>;
    };
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    expect(server.packages).toContainEqual(expect.objectContaining({ registryType: "npm", identifier: pkg.name, version: pkg.version }));
  });

  it("npm publish --dry-run accepts the tarball", async () => {
    const r = await run("npm", ["publish", "--dry-run", "--ignore-scripts", "--json", tarball], { cwd: dir, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
    // npm 11 keys its JSON by the package name; older npm prints the package's fields at the top.
    const out = JSON.parse(r.stdout) as { name?: string; marketgate?: { name: string; version: string } };
    expect(out.marketgate ?? out).toMatchObject({ name: "marketgate", version: pkg.version });
    // Only the notice that a real publish needs a login; no complaint about bin, files or exports.
    expect(r.stderr.split("\n").filter((l) => /warn|err/i.test(l) && !/requires you to be logged in/.test(l))).toEqual([]);
  });

  it("marketgate/client resolves through the package's exports, with its types", async () => {
    const r = await run(process.execPath, ["--input-type=module", "-e", "const c = await import('marketgate/client'); console.log(typeof c.createClient)"], { cwd: app });
    expect(r.stdout.trim()).toBe("function");
    writeFileSync(join(app, "check.ts"), 'import { createClient } from "marketgate/client";\nexport const make: typeof createClient = createClient;\n');
    writeFileSync(join(app, "package.json"), '{ "type": "module" }\n');
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ["check.ts"] }),
    );
    await run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", app], { cwd: app });
  });

  it("its bin runs from any folder: connect (usage error, then paying a call), mcp --sim, call", async () => {
    const elsewhere = tempDir(cleanup, "mg-elsewhere-");
    const env = { PATH: process.env.PATH ?? "", HOME: elsewhere };
    const bad = await run(bin, ["connect", "ftp://x/mcp"], { cwd: elsewhere, env }).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/^marketgate connect: the URL must be http\(s\), got ftp:; usage: .*\n$/) });

    const payer = stack.payers[8]!;
    const bridge = new Client({ name: "host", version: "0" });
    await bridge.connect(
      new StdioClientTransport({
        command: bin,
        args: ["connect", `${stack.url}/mcp`, "--pay", "x402"],
        env: { ...env, X402_PRIVATE_KEY: payer.privateKey },
        cwd: elsewhere,
        stderr: "pipe",
      }),
    );
    try {
      const before = await stack.balanceOf(payer.address);
      const r = await bridge.callTool({ name: "funding_rate", arguments: { symbol: "SOL" } });
      expect(r._meta?.["marketgate/cost"]).toMatchObject({ method: "x402", price_usd: "0.02" });
      expect(before - (await stack.balanceOf(payer.address))).toBe(20_000n);
    } finally {
      await bridge.close();
    }

    const mcp = new Client({ name: "host", version: "0" });
    await mcp.connect(new StdioClientTransport({ command: bin, args: ["mcp", "--sim"], env, cwd: elsewhere, stderr: "ignore" }));
    try {
      expect((await mcp.listTools()).tools.length).toBeGreaterThan(10);
    } finally {
      await mcp.close();
    }

    const call = await run(bin, ["call", "/funding-rate/ETH"], { cwd: elsewhere, env: { ...env, MARKETGATE_URL: stack.url, X402_PRIVATE_KEY: payer.privateKey } });
    expect(call.stderr).toMatch(/^GET \/funding-rate\/ETH -> 200\ncost: 0\.02 USDC \(x402 on eip155:8453, tx 0x[0-9a-f]{64}\)\n$/);
  });

  // The real thing, as a user runs it: npx installs the tarball's dependencies from the registry (over a minute cold).
  it.skipIf(!process.env.MARKETGATE_NPX_INSTALL)("npx --yes ./marketgate-<v>.tgz connect runs the tarball after installing it", { timeout: 600_000 }, async () => {
    const folder = tempDir(cleanup, "mg-npx-");
    copyFileSync(tarball, join(folder, packed.filename));
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn("npx", ["--yes", `./${packed.filename}`, "connect"], { cwd: folder, stdio: "ignore" });
      child.once("exit", (c) => resolve(c));
    });
    expect(code).toBe(2);
  });
});
