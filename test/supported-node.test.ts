import { execFile, execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SUPPORTED_NODE, unsupportedNodeMessage } from "../src/supported-node.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string }; bin: Record<string, string>; scripts: Record<string, string> };

/** The source file of a built path: `dist/x.js` and `.bench-dist/x.js` are compiled from `x.ts`. */
const sourceOf = (path: string) => path.replace(/^(\.bench-dist|dist)\//, "").replace(/\.js$/, ".ts");

/**
 * Every program package.json starts: its `bin`, and the file each script runs with `tsx` or `node` (whatever
 * the script's flags), as a source path.
 */
function entryPoints(): string[] {
  const files = new Set(Object.values(pkg.bin).map(sourceOf));
  for (const script of Object.values(pkg.scripts)) {
    for (const command of script.split("&&")) {
      const [program, ...args] = command.trim().split(/\s+/);
      if (program !== "tsx" && program !== "node") continue;
      const file = args.find((a) => /\.(ts|js)$/.test(a));
      if (file) files.add(sourceOf(file));
    }
  }
  return [...files].sort();
}

/** The first line of code of `source`: after a hashbang, comments and blank lines. */
function firstCode(source: string): string {
  const lines = source
    .replace(/^#!.*\n/, "")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .split("\n");
  return lines.map((l) => l.trim()).find((l) => l !== "" && !l.startsWith("//")) ?? "";
}

describe("the supported Node.js versions", () => {
  it("are package.json's engines", () => {
    expect(SUPPORTED_NODE).toBe(pkg.engines.node);
  });

  it("accept 22.13 and later 22s, and 24 on; refuse the rest in one line naming them and how to get one", () => {
    for (const v of ["22.13.0", "22.20.1", "24.0.0", "24.11.1", "25.2.0"]) expect(unsupportedNodeMessage(v), v).toBeUndefined();
    for (const v of ["18.20.8", "20.20.2", "22.12.0", "23.11.1"]) {
      const message = unsupportedNodeMessage(v)!;
      expect(message, v).toContain(`this is Node.js ${v}`);
      expect(message).toContain(`"${SUPPORTED_NODE}"`);
      expect(message).toMatch(/install Node\.js 24 from https:\/\/nodejs\.org\/\S+ or with a version manager/);
      expect(message).not.toContain("\n");
    }
  });

  it("are checked first by every entry point, before any other module (and so any native addon) is evaluated", () => {
    const entries = entryPoints();
    expect(entries).toEqual(expect.arrayContaining(["bin/marketgate.ts", "src/main.ts", "src/sandbox/main.ts", "test/fuzz/main.ts"]));
    const wrong = entries.filter((file) => {
      const first = firstCode(readFileSync(join(ROOT, file), "utf8"));
      const spec = /^import "(\.{1,2}\/[^"]+)";/.exec(first)?.[1];
      return !spec || resolve(ROOT, dirname(file), spec.replace(/\.js$/, ".ts")) !== join(ROOT, "src/supported-node.ts");
    });
    expect(wrong, "entry points whose first line of code is not the supported-node import").toEqual([]);
  });
});

/**
 * A Node.js marketgate does not support, to run the entry points with: `UNSUPPORTED_NODE`, else the system's
 * `/usr/bin/node` when it is one (Node 20 on the CI machine). Undefined when there is none.
 */
function unsupportedNode(): { path: string; version: string } | undefined {
  const path = process.env.UNSUPPORTED_NODE ?? "/usr/bin/node";
  if (!existsSync(path)) return undefined;
  const version = execFileSync(path, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();
  return unsupportedNodeMessage(version) ? { path, version } : undefined;
}

const oldNode = unsupportedNode();
if (!oldNode) {
  const why = "no unsupported Node.js to run the entry points with (set UNSUPPORTED_NODE to e.g. a Node 20 binary)";
  if (process.env.CI === "true") throw new Error(why);
  console.warn(`test/supported-node.test.ts: ${why}; skipped`);
}

describe.skipIf(!oldNode)("on an unsupported Node.js (Node 20: better-sqlite3 13 segfaults there)", () => {
  const node = oldNode!;
  const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");
  /** The old Node first in PATH, as a user who has only that one has it (npm and tsx's `env node` find it). */
  const env = { ...process.env, PATH: `${dirname(node.path)}${delimiter}${process.env.PATH}`, NODE_OPTIONS: "" };
  const run = (file: string, args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile(file, args, { cwd: ROOT, env, timeout: 120_000 }, (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }));
    });
  const refused = { code: 1, stdout: "", stderr: `${unsupportedNodeMessage(node.version)}\n` };

  it("npm run sandbox exits 1 with the one line (not 139 with nothing)", async () => {
    expect(await run("npm", ["run", "--silent", "sandbox", "--", "--no-demo", "--port", "0", "--chain-port", "0", "--solana-port", "0"])).toEqual(refused);
  }, 180_000);

  it("the service (npm start / npm run dev), npm run mcp and every marketgate command exit 1 with the one line", async () => {
    const runs = [
      ["src/main.ts"],
      ["bin/marketgate.ts"],
      ["bin/marketgate.ts", "mcp"],
      ["bin/marketgate.ts", "mcp", "--sim"],
      ["bin/marketgate.ts", "doctor"],
      ["bin/marketgate.ts", "call", "/funding-rate/BTC"],
      ["bin/marketgate.ts", "quote", "/funding-rate/BTC"],
      ["bin/marketgate.ts", "verify-receipt", "answer.http"],
    ];
    // One after another: each is a Node start of about a second, on a machine shared with other tests.
    for (const args of runs) expect(await run(node.path, [TSX, ...args]), args.join(" ")).toEqual(refused);
  }, 300_000);
});
