import { readFileSync } from "node:fs";

/** Reads a JSON fixture under `test/fixtures/`. */
export function fixture(path: string): unknown {
  return JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), "utf8"));
}
