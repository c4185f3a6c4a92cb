import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

/**
 * Undo steps run after each test of the calling file, last pushed first (so `unshift` what must run
 * after the rest, e.g. closing a database after the stores that use it).
 */
export function cleanupAfterEach(): Array<() => void> {
  const steps: Array<() => void> = [];
  afterEach(() => {
    while (steps.length) steps.pop()!();
  });
  return steps;
}

/** A clock tests move by hand: `c.t += 60_000`; `c.now` is what stores take as their `now`. */
export function manualClock(start: number): { t: number; now: () => number } {
  const c = { t: start, now: () => c.t };
  return c;
}

/** A fresh temporary directory, removed by `cleanup` (after everything else registered there). */
export function tempDir(cleanup: Array<() => void>, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanup.unshift(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
