import { readFileSync } from "node:fs";

/** The service's package version, read from package.json (works from `src/` under tsx and from `dist/src/`). */
export const VERSION: string = (() => {
  for (const rel of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "marketgate" && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return "0.0.0";
})();
