/**
 * What the CVD store accepts: valid trades in the retained slots, grouped by (venue, base), and replicated bucket
 * rows that can be stored as they are. Pure.
 */
import { STREAM_VENUES, type Trade } from "../types.js";
import { CVD_BUCKET_MS, cvdSlot } from "./cvd-math.js";
import type { CvdBucketRow } from "./cvd-types.js";
import { parseIntervals } from "./intervals.js";

const VENUE_SET: ReadonlySet<string> = new Set(STREAM_VENUES);
const GAP_STATES: ReadonlySet<string> = new Set(["none", "filled", "unfilled"]);
const finiteNonNegative = (x: unknown): boolean => typeof x === "number" && Number.isFinite(x) && x >= 0;
/** Ids are stored newline-separated: one with a newline cannot be kept. */
const storableId = (id: string): boolean => id.length > 0 && !id.includes("\n");

/** A replicated bucket row that can be stored as is. */
export function validRow(r: CvdBucketRow | undefined): r is CvdBucketRow {
  return (
    r !== undefined &&
    r !== null &&
    VENUE_SET.has(r.venue) &&
    typeof r.base === "string" &&
    r.base.length > 0 &&
    Number.isInteger(r.start) &&
    r.start % CVD_BUCKET_MS === 0 &&
    finiteNonNegative(r.buyBase) &&
    finiteNonNegative(r.sellBase) &&
    finiteNonNegative(r.buyUsd) &&
    finiteNonNegative(r.sellUsd) &&
    Number.isInteger(r.trades) &&
    r.trades >= 0 &&
    GAP_STATES.has(r.gap) &&
    parseIntervals(r.unfilled) !== undefined &&
    Number.isInteger(r.idCount) &&
    r.idCount >= 0 &&
    (r.ids === undefined || (Array.isArray(r.ids) && r.ids.every((id) => typeof id === "string" && storableId(id))))
  );
}

/** A trade of a known venue with a storable id, a finite time, positive price and size, and a side. */
function validTrade(t: Trade): boolean {
  return (
    VENUE_SET.has(t.venue) &&
    typeof t.base === "string" &&
    t.base.length > 0 &&
    typeof t.id === "string" &&
    storableId(t.id) &&
    Number.isFinite(t.time) &&
    Number.isFinite(t.price) &&
    t.price > 0 &&
    Number.isFinite(t.size) &&
    t.size > 0 &&
    (t.side === "buy" || t.side === "sell")
  );
}

/** A valid trade in the retained slots `[lo, hi]` (5-min starts): what `CvdStore.add` counts at all. */
function admissible(t: Trade, lo: number, hi: number): boolean {
  if (!validTrade(t)) return false;
  const slot = cvdSlot(t.time);
  return slot >= lo && slot <= hi;
}

/** True when every trade of `trades` (not empty) is admissible and of the venue and base of the first. */
export function oneGroup(trades: readonly Trade[], lo: number, hi: number): boolean {
  const { venue, base } = trades[0]!;
  for (const t of trades) if (t.venue !== venue || t.base !== base || !admissible(t, lo, hi)) return false;
  return true;
}

/** The admissible trades of `trades` grouped by (venue, base), each group in the order given. */
export function groupByTrack(trades: readonly Trade[], lo: number, hi: number): Iterable<Trade[]> {
  const groups = new Map<string, Trade[]>();
  for (const t of trades) {
    if (!admissible(t, lo, hi)) continue;
    const key = `${t.venue}|${t.base}`;
    const g = groups.get(key);
    if (g) g.push(t);
    else groups.set(key, [t]);
  }
  return groups.values();
}

/** `seqs` and their `trades` (parallel arrays) sorted ascending by sequence number, stably. */
export function sortBySeq(seqs: number[], trades: Trade[]): [number[], Trade[]] {
  const order = seqs.map((_, i) => i).sort((a, b) => seqs[a]! - seqs[b]! || a - b);
  return [order.map((i) => seqs[i]!), order.map((i) => trades[i]!)];
}
