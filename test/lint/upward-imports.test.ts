/**
 * Imports that run back up the layers (issue 33): a module below the venues, or beside them, importing a venue's own
 * code by path. The venues build on src/ingestion (their feeds extend its feed base, their backfills its backfill
 * base), and src/doctor checks them; both get the venues from the one list (src/venues/index.ts `VENUES`) instead.
 * Counted here as the issue counted them: imports (type-only ones too) by src/ingestion and src/doctor of anything in
 * src/venues except its venue-agnostic contracts (wire.ts, endpoint-types.ts, define.ts, perp/, dex/). 25 before the
 * venue definitions (24 imports of the eight venues' feeds and backfills and the doctor's createVenues), 13 a turn
 * earlier with four venues. The list below is every one left: a new one fails this test.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Layers that must not reach into a venue's own code. */
const LOWER = ["src/ingestion", "src/doctor"];
/** The venue-agnostic contracts of src/venues every layer may import. */
const SHARED = /^src\/venues\/(wire\.ts|endpoint-types\.ts|define\.ts|perp\/|dex\/)/;

/** Every `.ts` file under `dir` (repository-relative paths). */
function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return tsFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/**
 * The venue modules `text` (the source of repository file `file`) imports or re-exports, static, type-only or dynamic,
 * as repository paths: those in src/venues other than {@link SHARED}.
 */
function venueImports(file: string, text: string): string[] {
  const specs = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);
  return specs.map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)).replace(/\.js$/, ".ts")).filter((t) => t.startsWith("src/venues/") && !SHARED.test(t));
}

/** The upward imports of the tree: `importer -> imported` lines, sorted. */
function upwardImports(): string[] {
  return LOWER.flatMap((d) => tsFiles(d))
    .flatMap((f) => venueImports(f, readFileSync(join(ROOT, f), "utf8")).map((t) => `${f} -> ${t}`))
    .sort();
}

describe("imports running back up the layers", () => {
  it("are only the doctor's reads of the venue list and of the clients it builds", () => {
    expect(upwardImports()).toEqual([
      "src/doctor/checks.ts -> src/venues/create.ts",
      "src/doctor/checks.ts -> src/venues/index.ts",
      "src/doctor/readiness-venues.ts -> src/venues/index.ts",
    ]);
  });

  it("counts an import of a venue's own module, type-only included", () => {
    const planted = 'import type { BinanceFeed } from "../venues/binance/feed.js";\nimport { VENUES } from "../venues/index.js";\nimport { Num } from "../venues/wire.js";\n';
    expect(venueImports("src/ingestion/planted.ts", planted)).toEqual(["src/venues/binance/feed.ts", "src/venues/index.ts"]);
  });
});
