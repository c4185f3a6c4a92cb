/**
 * The reads of the CVD store over one symbol's in-memory buckets: the flow over a range and the re-aggregated
 * history. Pure: the store passes the retained window and the current slot.
 */
import { STREAM_VENUES, type StreamVenue } from "../types.js";
import { addFlow, emptyFlow } from "./cvd-flow.js";
import { alignBucket, CVD_BUCKET_MS } from "./cvd-math.js";
import type { CvdBucket, CvdFlow, CvdHistoryPoint, CvdSummary } from "./cvd-types.js";

/** One symbol's buckets: per venue, by 5-min slot start; and the start of its tracked range (epoch ms). */
export interface CvdSymbolBuckets {
  trackedSince: number;
  venues: ReadonlyMap<StreamVenue, ReadonlyMap<number, CvdBucket>>;
}

/**
 * Start of the first bucket of `sym` on any venue, or null without any. Buckets are mostly created in time order,
 * so the scan stops at the first slot at or before `notAfter` (the answer cannot be later than it then).
 */
function firstDataSlot(sym: CvdSymbolBuckets, notAfter: number): number | null {
  let min: number | null = null;
  for (const m of sym.venues.values()) {
    for (const slot of m.keys()) {
      if (min === null || slot < min) min = slot;
      if (slot <= notAfter) return min;
    }
  }
  return min;
}

/**
 * Flow of `base` per venue and in total over its buckets in the 5-min slots overlapping `[fromMs, toMs)`
 * (±Infinity allowed), within the retained slots `[lo, hi]`. `sym` undefined: zeros, no venues, `trackedSince: null`.
 * The summary's `fromMs` never precedes the symbol's first bucket: with none, it is the last slot of the range.
 */
export function cvdSummary(base: string, sym: CvdSymbolBuckets | undefined, fromMs: number, toMs: number, lo: number, hi: number): CvdSummary {
  const first = Number.isFinite(fromMs) ? Math.max(alignBucket(fromMs, CVD_BUCKET_MS), lo) : lo;
  const last = Number.isFinite(toMs) ? Math.min(alignBucket(toMs - 1, CVD_BUCKET_MS), hi) : hi;
  const total = emptyFlow();
  const venues: Partial<Record<StreamVenue, CvdFlow>> = {};
  if (!sym) return { base, fromMs: Math.max(first, last), toMs, trackedSince: null, venues, total, unfilled: false };
  const trackedSince = Math.max(sym.trackedSince, lo);
  let unfilled = false;
  // Fixed order (venues as listed, slots ascending) so float sums are reproducible, e.g. after a restart.
  for (const venue of STREAM_VENUES) {
    const m = sym.venues.get(venue);
    if (!m) continue;
    let flow: CvdFlow | null = null;
    for (let slot = first; slot <= last; slot += CVD_BUCKET_MS) {
      const b = m.get(slot);
      if (!b) continue;
      flow ??= emptyFlow();
      addFlow(flow, b);
      if (b.gap === "unfilled") unfilled = true;
    }
    if (flow) {
      venues[venue] = flow;
      addFlow(total, flow);
    }
  }
  const dataFrom = firstDataSlot(sym, Math.max(first, trackedSince));
  return { base, fromMs: Math.max(first, trackedSince, dataFrom ?? last), toMs, trackedSince, venues, total, unfilled };
}

/**
 * History points of `sym` in buckets of `bucketMs` (a multiple of 5 min, checked by the caller) aligned to
 * `bucketMs` from the bucket holding `fromMs` (finite) while start < `toMs` and start ≤ `nowSlot`, never before
 * the tracked range or the retained start `lo`; see `CvdStore.history`.
 */
export function historyPoints(sym: CvdSymbolBuckets, fromMs: number, toMs: number, bucketMs: number, lo: number, nowSlot: number, perVenue: boolean): CvdHistoryPoint[] {
  const trackStart = Math.max(sym.trackedSince, lo);
  const out: CvdHistoryPoint[] = [];
  for (let s = alignBucket(Math.max(fromMs, trackStart), bucketMs); s < toMs && s <= nowSlot; s += bucketMs) {
    const flow = emptyFlow();
    const venues: Partial<Record<StreamVenue, CvdFlow>> = {};
    let missing = false;
    for (let slot = s; slot < s + bucketMs; slot += CVD_BUCKET_MS) {
      let present = false;
      for (const venue of STREAM_VENUES) {
        const b = sym.venues.get(venue)?.get(slot);
        if (!b) continue;
        present = true;
        if (b.gap === "unfilled") missing = true;
        addFlow(flow, b);
        if (perVenue) addFlow((venues[venue] ??= emptyFlow()), b);
      }
      if (!present && slot >= trackStart && slot < nowSlot) missing = true;
    }
    const point: CvdHistoryPoint = { start: s, cvdDelta: flow.buyUsd - flow.sellUsd, ...flow, missing };
    if (perVenue) point.venues = venues;
    out.push(point);
  }
  return out;
}
