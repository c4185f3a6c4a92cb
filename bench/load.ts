import autocannon from "autocannon";

/** Throughput of one load target: requests per second, latency percentiles in ms, failures. */
export interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Concurrent connections of every throughput measurement. */
export const CONNECTIONS = 32;
/** Rounds of {@link alternate}: each side runs `durationSec / ROUNDS` seconds per round (at least 2). */
export const ROUNDS = 4;

/**
 * Throughput of each target, measured in alternating rounds after a 1 s warm-up of each, so that load from
 * other work on the (shared, 2-core) machine falls on every side alike and the ratios stay meaningful. Per
 * target: the median round (by req/s), with the failures of all rounds.
 */
export async function alternate<T extends autocannon.Options[]>(durationSec: number, ...targets: T): Promise<{ [K in keyof T]: Load }> {
  for (const t of targets) await autocannon({ ...t, duration: 1, connections: CONNECTIONS }); // warm-up
  const rounds: Load[][] = targets.map(() => []);
  for (let i = 0; i < ROUNDS; i++) {
    for (const [j, t] of targets.entries()) {
      const r = await autocannon({ ...t, duration: Math.max(2, durationSec / ROUNDS), connections: CONNECTIONS });
      rounds[j]!.push({ rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx });
    }
  }
  return rounds.map((rs) => {
    const median = [...rs].sort((a, b) => a.rps - b.rps)[Math.floor(rs.length / 2)]!;
    return { ...median, errors: rs.reduce((n, r) => n + r.errors, 0), non2xx: rs.reduce((n, r) => n + r.non2xx, 0) };
  }) as { [K in keyof T]: Load };
}

/**
 * Throughput of `a` against `b` as paired rounds: each round measures both, in ABBA order (a first in even
 * rounds, b first in odd ones), after a 1 s warm-up of each, so that slow drifts of the machine's load
 * cancel within a pair. `ratio` is the median of the rounds' a/b ratios; `a` and `b` are each side's
 * median round, with the failures of all rounds.
 */
export async function pairedRatio(roundSec: number, rounds: number, a: autocannon.Options, b: autocannon.Options): Promise<{ a: Load; b: Load; ratio: number; ratios: number[] }> {
  const run = async (t: autocannon.Options): Promise<Load> => {
    const r = await autocannon({ ...t, duration: roundSec, connections: CONNECTIONS });
    return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
  };
  for (const t of [a, b]) await autocannon({ ...t, duration: 1, connections: CONNECTIONS }); // warm-up
  const as: Load[] = [];
  const bs: Load[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      as.push(await run(a));
      bs.push(await run(b));
    } else {
      bs.push(await run(b));
      as.push(await run(a));
    }
  }
  const median = <T>(xs: T[], key: (x: T) => number): T => [...xs].sort((x, y) => key(x) - key(y))[Math.floor(xs.length / 2)]!;
  const total = (ls: Load[], m: Load): Load => ({ ...m, errors: ls.reduce((n, l) => n + l.errors, 0), non2xx: ls.reduce((n, l) => n + l.non2xx, 0) });
  const ratios = as.map((l, i) => +(l.rps / bs[i]!.rps).toFixed(3));
  return {
    a: total(
      as,
      median(as, (l) => l.rps),
    ),
    b: total(
      bs,
      median(bs, (l) => l.rps),
    ),
    ratio: median(ratios, (r) => r),
    ratios,
  };
}
