import type { StreamVenue } from "../types.js";

/*
 * Which trades of a (venue, base) were counted, so that none is counted twice whatever its age
 * (docs/methods/cvd.md). Venues whose trade ids grow with time keep a high-water mark plus the id ranges
 * their stream skipped ("holes"); venues with unordered ids keep the ids of each 5-minute bucket (in
 * cvd-store.ts). This module is the pure part: id semantics and the mark-and-holes ledger.
 */

/** How a venue numbers its trades: ids that grow with time (`sequence`), or ids with no order (`unordered`). */
export type IdOrder = "sequence" | "unordered";

/**
 * Trade id semantics of the first eight venues: the order a store built without venue definitions uses (unit tests);
 * the service's stores take each venue's `tradeIds` from its definition (src/ingestion/create.ts), and
 * `validateVenues` checks the two agree here. A new venue states its order in its definition only. Sources: the
 * venues' websocket docs, linked from the parsers in
 * src/venues/<venue>/feed-parse.ts):
 * - binance: aggregate trade id `a` (WS `aggTrade`, REST `/fapi/v1/aggTrades`), an integer that grows by
 *   one per aggregate trade of a symbol → sequence;
 * - okx: `tradeId`, an integer string that grows per instrument (with holes where fills were aggregated) → sequence;
 * - gate: `id` (WS `futures.trades`, REST `/futures/usdt/trades`), an integer that grows with time → sequence;
 * - bybit: `i` (WS) / `execId` (REST), a UUID-shaped string in no order → unordered (its `seq` is the
 *   cross sequence, shared by the fills of one match, and is not used);
 * - hyperliquid: `tid`, a 50-bit hash in no order (`hash` is the transaction's, shared by its fills) → unordered;
 * - bitget: `tradeId`, a 19-digit decimal string (`1151762928807395329`), beyond 2^53, so not a safe sequence → unordered.
 * - deribit: `trade_id`, a string per instrument (`"403691824"`, `"ETH-284830839"`), not compared numerically → unordered.
 */
export const VENUE_ID_ORDER: Readonly<Partial<Record<StreamVenue, IdOrder>>> = {
  binance: "sequence",
  okx: "sequence",
  gate: "sequence",
  bybit: "unordered",
  hyperliquid: "unordered",
  bitget: "unordered",
  deribit: "unordered",
  aster: "sequence",
};

/** Each venue's trade-id order (a venue not listed: `unordered`). */
export type IdOrders = Readonly<Partial<Record<StreamVenue, IdOrder>>>;

/**
 * The sequence number of trade `id` on a `sequence` venue of `orders` (default {@link VENUE_ID_ORDER}): `id` as a
 * canonical non-negative safe integer ("5933014"). Null on `unordered` (or unlisted) venues and for any other id,
 * which is then de-duplicated like the ids of an unordered venue.
 */
export function sequenceOf(venue: StreamVenue, id: string, orders: IdOrders = VENUE_ID_ORDER): number | null {
  return orders[venue] === "sequence" ? canonicalInteger(id) : null;
}

/** Largest digit count of a safe integer (2^53 − 1 has 16). */
const MAX_SAFE_DIGITS = 16;

/**
 * `id` as a number when it is the canonical decimal of a non-negative safe integer (digits only, no leading
 * zero, ≤ 2^53 − 1), else null. A digit loop rather than `String(Number(id)) === id`: it runs once per
 * trade and allocates nothing.
 */
function canonicalInteger(id: string): number | null {
  const len = id.length;
  if (len === 0 || len > MAX_SAFE_DIGITS) return null;
  if (id.charCodeAt(0) === 48 /* "0" */) return len === 1 ? 0 : null;
  let n = 0;
  for (let i = 0; i < len; i++) {
    const d = id.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return null;
    n = n * 10 + d;
  }
  // Exact below 2^53; a 16-digit value above it can only round to 2^53 or more, so this rejects it.
  return n <= Number.MAX_SAFE_INTEGER ? n : null;
}

/**
 * Where a batch of trades comes from, which decides what its order proves on sequence venues:
 * - `live`: frames of the venue's stream in arrival order, continuous with the previous live frames of the
 *   same venue until the store is told of a break (a reconnect gap, a restart, a takeover);
 * - `run`: a complete list of the venue's trades over an interval (a complete REST backfill): no trade
 *   lies between two consecutive ones;
 * - `loose`: anything else (a partial backfill, a standby buffer, a handed-over journal, a replay).
 */
export type TradeSource = "live" | "run" | "loose";

/** Ids a sequence venue's stream skipped: every id strictly between `lo` and `hi` not in `ids` is uncounted. */
export interface SequenceHole {
  /** Highest id counted below the hole; null when none (the hole reaches down to −∞). */
  lo: number | null;
  /** Time of trade `lo`, epoch ms (−Infinity when unknown): trades of the hole are never older. */
  loTime: number;
  /** Lowest id counted above the hole. */
  hi: number;
  /** Time of trade `hi`, epoch ms: once it leaves retention no trade of the hole can be counted. */
  hiTime: number;
  /** Ids inside the hole counted since it opened. */
  ids: Set<number>;
}

/** Hole as stored and replicated: `[lo, loTime, hi, hiTime, ids]` (null for ±Infinity and a missing `lo`). */
export type SequenceHoleRow = [lo: number | null, loTime: number | null, hi: number, hiTime: number, ids: number[]];

/** A {@link SequenceLedger} as stored and replicated. */
export interface SequenceLedgerState {
  /** Highest id counted, or null before the first. */
  mark: number | null;
  /** Time of trade `mark`, epoch ms, or null. */
  markTime: number | null;
  /** End of history counted before ids were kept (an upgraded database), epoch ms: no older trade is counted. */
  floor: number | null;
  holes: SequenceHoleRow[];
}

const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);
const idNum = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;

/**
 * Counted trades of one (venue, base) of a `sequence` venue: the highest id counted (the mark) and the
 * holes, id ranges below the mark that a stream skipped (a reconnect, a takeover, a restart, a backfill
 * ahead of the live stream). A trade above the mark is new; one below it is new only inside a hole and not
 * yet among the hole's ids. A hole opens when a trade lands above the mark without being known to follow
 * it (`linked`); complete runs (`run` batches) that span a hole close it. Memory: the mark, plus per hole
 * the ids counted into it, bounded by what backfills deliver; holes older than retention are pruned.
 */
export class SequenceLedger {
  mark: number | null = null;
  markTime: number | null = null;
  floor: number | null = null;
  /** Disjoint, ascending by `lo` (null first). */
  holes: SequenceHole[] = [];
  /** True while the live stream has been continuous since its last trade (`liveLast`). Not persisted. */
  live = false;

  /**
   * Whether trade `seq` (time `time`, epoch ms) is new, recording it when it is. `linked`: no trade lies
   * between the previous trade of the same batch (or, for a continuous live stream, the previous live
   * trade) and this one, so landing above the mark leaves no hole.
   */
  admit(seq: number, time: number, linked: boolean): boolean {
    if (this.floor !== null && time < this.floor) return false;
    if (this.mark === null || seq > this.mark) {
      if (!linked) this.openHole(seq, time);
      this.mark = seq;
      this.markTime = time;
      return true;
    }
    const h = this.holeOf(seq);
    if (!h || time < h.loTime || h.ids.has(seq)) return false;
    h.ids.add(seq);
    return true;
  }

  /**
   * After every trade of a complete run from `first` (time `firstTime`) to `last` went through
   * {@link admit}, all ids in `[first, last]` are counted: holes inside shrink or close. Returns whether one did.
   */
  settleRun(first: number, firstTime: number, last: number): boolean {
    if (this.holes.length === 0 || !(last > first)) return false;
    const out: SequenceHole[] = [];
    let changed = false;
    for (const h of this.holes) {
      const lo = h.lo ?? -Infinity;
      if (h.hi <= first || lo >= last) {
        out.push(h);
        continue;
      }
      changed = true;
      if (lo < first && (h.lo === null || first - h.lo > 1)) {
        out.push({ lo: h.lo, loTime: h.loTime, hi: first, hiTime: firstTime, ids: new Set([...h.ids].filter((x) => x < first)) });
      }
      if (h.hi > last && h.hi - last > 1) {
        out.push({ lo: last, loTime: h.loTime, hi: h.hi, hiTime: h.hiTime, ids: new Set([...h.ids].filter((x) => x > last)) });
      }
    }
    this.holes = out;
    return changed;
  }

  /** Forgets holes whose newest possible trade is older than `beforeTime` (epoch ms). Returns whether any went. */
  prune(beforeTime: number): boolean {
    const n = this.holes.length;
    this.holes = this.holes.filter((h) => h.hiTime >= beforeTime);
    return this.holes.length !== n;
  }

  /** Ids held in holes. */
  get heldIds(): number {
    let n = 0;
    for (const h of this.holes) n += h.ids.size;
    return n;
  }

  /** The persisted/replicated form (copies). */
  state(): SequenceLedgerState {
    return {
      mark: this.mark,
      markTime: this.markTime,
      floor: this.floor,
      holes: this.holes.map((h) => [h.lo, Number.isFinite(h.loTime) ? h.loTime : null, h.hi, h.hiTime, [...h.ids]]),
    };
  }

  /**
   * A ledger from {@link state} output (SQLite, another replica); undefined when malformed. `live` is
   * false: whatever stream counted those trades is not this process's.
   */
  static from(raw: unknown): SequenceLedger | undefined {
    if (typeof raw !== "object" || raw === null) return undefined;
    const s = raw as Partial<SequenceLedgerState>;
    const l = new SequenceLedger();
    if (s.mark !== null && s.mark !== undefined && !idNum(s.mark)) return undefined;
    l.mark = s.mark ?? null;
    l.markTime = finite(s.markTime) ? s.markTime : null;
    l.floor = finite(s.floor) ? s.floor : null;
    if (!Array.isArray(s.holes)) return undefined;
    let prevHi = -Infinity;
    for (const row of s.holes) {
      if (!Array.isArray(row) || row.length !== 5) return undefined;
      const [lo, loTime, hi, hiTime, ids] = row as unknown[];
      if ((lo !== null && !idNum(lo)) || (loTime !== null && !finite(loTime)) || !idNum(hi) || !finite(hiTime) || !Array.isArray(ids)) return undefined;
      if ((lo ?? -Infinity) < prevHi || (lo !== null && hi <= lo)) return undefined;
      prevHi = hi;
      l.holes.push({ lo, loTime: loTime ?? -Infinity, hi, hiTime, ids: new Set(ids.filter((x): x is number => idNum(x) && x < hi && (lo === null || x > lo))) });
    }
    return l;
  }

  /** Opens the hole below a trade `hi` that landed above the mark without following it. */
  private openHole(hi: number, hiTime: number): void {
    const lo = this.mark;
    if (lo !== null && hi - lo <= 1) return; // no id in between
    const last = this.holes.at(-1);
    if (last && lo !== null && last.hi === lo) {
      // The previous hole ends at the mark: extend it across the mark (counted, so among its ids).
      last.ids.add(lo);
      last.hi = hi;
      last.hiTime = hiTime;
      return;
    }
    const loTime = Math.max(lo === null ? -Infinity : (this.markTime ?? -Infinity), this.floor ?? -Infinity);
    this.holes.push({ lo, loTime, hi, hiTime, ids: new Set() });
  }

  /** The hole holding `seq`, if any (binary search on the sorted, disjoint holes). */
  private holeOf(seq: number): SequenceHole | undefined {
    let lo = 0;
    let hi = this.holes.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const h = this.holes[mid]!;
      if (seq >= h.hi) lo = mid + 1;
      else if (h.lo !== null && seq <= h.lo) hi = mid - 1;
      else return h;
    }
    return undefined;
  }
}
