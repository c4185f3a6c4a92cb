import { readFileSync } from "node:fs";

/**
 * Where a venue's recorded payload lives: `<venue>/<file>` is `src/venues/<venue>/fixtures/<file>` (each
 * venue folder keeps its fixtures and their provenance README). @throws Error for a path without a venue.
 */
export function fixtureUrl(path: string): URL {
  const slash = path.indexOf("/");
  if (slash <= 0) throw new Error(`a fixture path is <venue>/<file>, got ${path}`);
  return new URL(`../../src/venues/${path.slice(0, slash)}/fixtures/${path.slice(slash + 1)}`, import.meta.url);
}

/** The text of a venue fixture (`<venue>/<file>`, see {@link fixtureUrl}), e.g. an `.ndjson` recording. */
export function fixtureText(path: string): string {
  return readFileSync(fixtureUrl(path), "utf8");
}

/** Reads a venue's JSON fixture (`<venue>/<file>`, see {@link fixtureUrl}). */
export function fixture(path: string): unknown {
  return JSON.parse(fixtureText(path));
}
