import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** tsconfig.build.json: what dist/ is built from. */
const BUILD_INCLUDE = ["src", "tools", "http", "mcp", "bin"];
const BUILD_EXCLUDE = ["src/sandbox", "src/sim", "src/payments/local-chain"];

/**
 * Whether every built source has an output in dist/ at least as new as itself: then `npm pack --ignore-scripts`
 * packs what `npm pack` would build (.ci/run builds once before the tests, so tests that pack never rebuild dist/
 * under another test's feet).
 */
export function distIsFresh(): boolean {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return BUILD_EXCLUDE.includes(p) ? [] : walk(p);
      return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [p] : [];
    });
  return BUILD_INCLUDE.flatMap(walk).every((src) => {
    try {
      return statSync(join(ROOT, "dist", src.replace(/\.ts$/, ".js"))).mtimeMs >= statSync(join(ROOT, src)).mtimeMs;
    } catch {
      return false;
    }
  });
}
