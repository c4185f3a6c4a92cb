/**
 * The import-cycle check of `npm run lint` (`lint:cycles`, madge): it must fail on a cycle, including one
 * closed by `import type` or `export type … from` alone and written with the `.js` specifiers of this
 * ESM TypeScript project, and it must pass on the real tree. The planted cycles are checked with the
 * script's own flags, so a flag that stopped counting type-only imports would fail here.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cleanupAfterEach, tempDir } from "../helpers/scratch.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MADGE = join(ROOT, "node_modules", ".bin", "madge");
const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
/** `lint:cycles` split into the folders it checks and its flags (with their values). */
const words = script["lint:cycles"]!.trim().split(/\s+/);
const isFolder = (w: string) => !w.startsWith("-") && existsSync(join(ROOT, w)) && statSync(join(ROOT, w)).isDirectory();
const folders = words.slice(1).filter(isFolder);
const flags = words.slice(1).filter((w) => !isFolder(w));

/** Runs madge from the repository root (its tsconfig.json); resolves exit code and output, never rejects. */
function madge(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(MADGE, args, { cwd: ROOT, timeout: 240_000, env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}\n${stderr}` });
    });
  });
}

describe("npm run lint: import cycles", () => {
  const cleanup = cleanupAfterEach();

  it("is part of npm run lint, over every source folder", () => {
    expect(script.lint).toContain("npm run lint:cycles");
    expect(words[0]).toBe("madge");
    expect(flags).toEqual(expect.arrayContaining(["--circular", "--ts-config", "tsconfig.json", "--extensions", "ts"]));
    expect(folders).toEqual(expect.arrayContaining(["src", "http", "mcp", "tools", "bin"]));
  });

  it("fails on a cycle closed by an `import type`", async () => {
    const dir = tempDir(cleanup, "mg-cycle-");
    writeFileSync(join(dir, "a.ts"), 'import type { B } from "./b.js";\nexport interface A { b?: B }\nexport const makeA = (): A => ({});\n');
    writeFileSync(join(dir, "b.ts"), 'import { makeA } from "./a.js";\nexport interface B { n: number }\nexport const a = makeA();\n');
    const r = await madge([...flags, dir]);
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toMatch(/Found 1 circular dependenc/);
    expect(r.out).toMatch(/a\.ts > b\.ts/);
  }, 240_000);

  it("fails on a cycle of type-only imports and re-exports", async () => {
    const dir = tempDir(cleanup, "mg-cycle-");
    writeFileSync(join(dir, "c.ts"), 'import type { D } from "./d.js";\nexport interface C { d?: D }\n');
    writeFileSync(join(dir, "d.ts"), 'export type { C } from "./c.js";\nexport interface D { n: number }\n');
    const r = await madge([...flags, dir]);
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toMatch(/c\.ts > d\.ts/);
  }, 240_000);

  it("passes on files that import each other one way only", async () => {
    const dir = tempDir(cleanup, "mg-cycle-");
    writeFileSync(join(dir, "e.ts"), 'import type { F } from "./f.js";\nexport interface E { f?: F }\n');
    writeFileSync(join(dir, "f.ts"), "export interface F { n: number }\n");
    const r = await madge([...flags, dir]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/No circular dependency found/);
  }, 240_000);

  it("keeps the caller types and ports (src/core/types.ts) on import-free type files", async () => {
    const r = await madge(["--json", ...flags.filter((f) => f !== "--circular"), "src/core/types.ts"]);
    expect(r.code, r.out).toBe(0);
    const graph = JSON.parse(r.out.slice(r.out.indexOf("{"), r.out.lastIndexOf("}") + 1)) as Record<string, string[]>;
    // Everything reachable from it, and what each of those imports: nothing outside this set.
    expect(Object.keys(graph).sort()).toEqual(["../alerts/types.ts", "../payments/credits/ledger.ts", "../payments/credits/types.ts", "types.ts"]);
    expect(graph["../alerts/types.ts"]).toEqual([]);
    expect(graph["../payments/credits/ledger.ts"]).toEqual([]);
  }, 240_000);

  it("passes on the repository", async () => {
    const r = await madge([...flags, ...folders]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/No circular dependency found/);
    // Every project file was read: the only files madge skips are packages it does not resolve (subpath exports).
    const processed = Number(/Processed (\d+) files/.exec(r.out)?.[1]);
    expect(processed).toBeGreaterThan(300);
  }, 240_000);
});
