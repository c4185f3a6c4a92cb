import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";

/** The bench folder of the checkout (benchmarks run compiled from `.bench-dist/`, so not relative to this file). */
const BENCH_DIR = resolve(process.cwd(), "bench");

/** Replaces the text between `<!-- NAME:start -->` and `<!-- NAME:end -->` in bench/README.md. */
export function writeSection(name: string, text: string): void {
  const readme = resolve(BENCH_DIR, "README.md");
  const doc = readFileSync(readme, "utf8");
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  if (!doc.includes(start) || !doc.includes(end)) throw new Error(`bench/README.md lacks the ${name} markers`);
  writeFileSync(readme, `${doc.slice(0, doc.indexOf(start) + start.length)}\n${text}\n${doc.slice(doc.indexOf(end))}`);
}

/** Writes `bench/results/<name>.json`. */
export function writeResults(name: string, results: unknown): void {
  mkdirSync(resolve(BENCH_DIR, "results"), { recursive: true });
  writeFileSync(resolve(BENCH_DIR, "results", `${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
}

/** The p-th percentile of ascending-sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
