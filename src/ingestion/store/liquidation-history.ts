import type { Statement } from "better-sqlite3";
import { DAY_MS, HOUR_MS } from "../../lib/time.js";
import type { Liquidation } from "../types.js";
import type { Database } from "./db.js";
import { Flusher } from "./flusher.js";

/*
 * Hourly liquidation totals per venue and base over the last 8 days: the liquidation history the cascade-risk
 * forecast reads (docs/methods/cascade-risk.md, "The inputs"). The recent-liquidations ring keeps 24 h and
 * 1,000 events; these totals keep every stored event's value, whatever the ring drops, in one row per (hour,
 * venue, base), written through to SQLite in batches so a restart keeps the week.
 */

/** Days of daily totals {@link LiquidationHistory.days} returns at most. */
export const LIQUIDATION_HISTORY_DAYS = 7;
/** Age of the oldest hour kept (one day more than is read, so the oldest 24 h block is whole), ms. */
const KEEP_MS = (LIQUIDATION_HISTORY_DAYS + 1) * DAY_MS;
/**
 * Venues whose totals are kept by a history built without venue definitions (unit tests); the service's takes the
 * venues whose definition says `liquidationFeed.history` (src/ingestion/create.ts), and `validateVenues` checks the two
 * agree on the first eight venues. Feeds carrying every symbol and busy enough that an hour without any liquidation of
 * any symbol means the feed was down (Binance `!forceOrder@arr`, OKX `liquidation-orders`). Per-symbol feeds (Bybit,
 * Deribit) and quiet all-symbol ones (Gate, Aster) would make a quiet hour look like an outage.
 */
export const LIQUIDATION_HISTORY_VENUES: readonly string[] = ["binance", "okx"];
/**
 * Least covered time a venue needs in a 24 h block for the block to count, ms: 15 minutes, so that a service that just
 * started forecasts from its own feeds within a quarter of an hour (a noisier estimate than a day's, flagged by
 * `days` and `hours`).
 */
export const MIN_COVERED_MS = 15 * 60_000;

/** A venue the caller reads the history of: its share of the symbol's OI and the start of its current connection. */
export interface HistoryVenue {
  venue: string;
  /** Share of the symbol's open interest on this venue, (0, 1]. */
  oiShare: number;
  /** Start of the venue feed's current connection (epoch ms), null when it is not connected. */
  connectedSince: number | null;
}

/** One 24 h block of {@link LiquidationHistory.days}. */
export interface LiquidationDayEstimate {
  /** End of the block (epoch ms, the end of the current UTC hour for the newest block). */
  end: number;
  /** Liquidations of the block, both sides, USD: each venue's total ÷ its covered time × 24 h, ÷ `coverage`. */
  usd: number;
  /** OI share of the venues counted in the block. */
  coverage: number;
  /** Covered time of those venues, hours (summed over venues). */
  hours: number;
}

/** Options of {@link LiquidationHistory}. */
export interface LiquidationHistoryOptions {
  /** Clock, epoch ms (default `Date.now`). */
  now?: () => number;
  /** Longest delay of write-through to SQLite, ms (default 1000; 0 = write on every change). */
  flushMs?: number;
  /** The venues whose totals are kept (default {@link LIQUIDATION_HISTORY_VENUES}). */
  venues?: readonly string[];
}

/**
 * The hourly totals (module comment). `record` adds stored events (the liquidation store calls it for every event it
 * stores, local or replicated, each once); `days` estimates the last days' totals of one base.
 */
export class LiquidationHistory {
  /** When this process started recording (epoch ms): hours of a connection before it were not recorded here. */
  readonly startedAt: number;
  private readonly now: () => number;
  private readonly venues: readonly string[];
  /** hour start → `venue|base` → USD. */
  private readonly hours = new Map<number, Map<string, number>>();
  /** hour start → venues with a liquidation of any base in it. */
  private readonly active = new Map<number, Set<string>>();
  /** `hour|venue|base` → USD added since the last write. */
  private pending = new Map<string, number>();
  private readonly flusher: Flusher;
  private closed = false;
  private readonly st: { add: Statement<[number, string, string, number]>; prune: Statement<[number]> };

  constructor(
    private readonly db: Database,
    opts: LiquidationHistoryOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.venues = opts.venues ?? LIQUIDATION_HISTORY_VENUES;
    this.startedAt = this.now();
    this.st = {
      add: db.prepare(`INSERT INTO liq_hour (hour, venue, base, usd) VALUES (?, ?, ?, ?) ON CONFLICT (hour, venue, base) DO UPDATE SET usd = usd + excluded.usd`),
      prune: db.prepare(`DELETE FROM liq_hour WHERE hour < ?`),
    };
    this.flusher = new Flusher("liquidation-history", opts.flushMs ?? 1000, () => this.write());
    const rows = db.prepare(`SELECT hour, venue, base, usd FROM liq_hour WHERE hour >= ?`).all(this.oldestHour()) as Array<{
      hour: number;
      venue: string;
      base: string;
      usd: number;
    }>;
    for (const r of rows) this.bump(r.hour, r.venue, r.base, r.usd);
  }

  /** Adds `events` of the history's venues to their hours (older than the kept window: ignored). */
  record(events: readonly Liquidation[]): void {
    if (this.closed) return;
    const oldest = this.oldestHour();
    let changed = false;
    for (const e of events) {
      if (!this.venues.includes(e.venue) || !(e.valueUsd >= 0) || !Number.isFinite(e.time)) continue;
      const hour = Math.floor(e.time / HOUR_MS) * HOUR_MS;
      if (hour < oldest) continue;
      const base = e.base.toUpperCase();
      this.bump(hour, e.venue, base, e.valueUsd);
      const p = `${hour}|${e.venue}|${base}`;
      this.pending.set(p, (this.pending.get(p) ?? 0) + e.valueUsd);
      changed = true;
    }
    if (changed) this.flusher.schedule();
  }

  /**
   * Liquidations of `base` per 24 h block, oldest first, over the last {@link LIQUIDATION_HISTORY_DAYS} blocks ending at
   * the end of the current UTC hour. A venue's covered time in a block: within its current connection (and since
   * {@link startedAt}), the exact overlap; before it, each hour in which the venue had a liquidation of any symbol.
   * A venue counts in a block from {@link MIN_COVERED_MS} of covered time; a block without such a venue is left out.
   */
  days(base: string, venues: readonly HistoryVenue[], nowMs: number = this.now()): LiquidationDayEstimate[] {
    const b = base.toUpperCase();
    const end = Math.ceil(nowMs / HOUR_MS) * HOUR_MS;
    const out: LiquidationDayEstimate[] = [];
    for (let j = LIQUIDATION_HISTORY_DAYS - 1; j >= 0; j--) {
      const to = end - j * DAY_MS;
      const from = to - DAY_MS;
      let usd = 0;
      let coverage = 0;
      let hours = 0;
      for (const v of venues) {
        if (!this.venues.includes(v.venue) || !(v.oiShare > 0)) continue;
        const live = v.connectedSince === null ? null : Math.max(v.connectedSince, this.startedAt);
        let covered = 0;
        let sum = 0;
        for (let h = from; h < to; h += HOUR_MS) {
          const active = this.active.get(h)?.has(v.venue) ?? false;
          const liveMs = live === null ? 0 : Math.max(0, Math.min(h + HOUR_MS, nowMs) - Math.max(h, live));
          // Hours the current connection spans count for what it spans; earlier hours when the venue was active.
          const c = live !== null && h + HOUR_MS > live ? liveMs : active ? HOUR_MS : 0;
          if (c <= 0) continue;
          covered += c;
          sum += this.hours.get(h)?.get(`${v.venue}|${b}`) ?? 0;
        }
        if (covered < MIN_COVERED_MS) continue;
        usd += (sum * DAY_MS) / covered;
        coverage += v.oiShare;
        hours += covered / HOUR_MS;
      }
      if (coverage > 0) out.push({ end: to, usd: usd / Math.min(1, coverage), coverage: Math.min(1, coverage), hours });
    }
    return out;
  }

  /** Writes pending totals now (one transaction). Throws on SQLite errors; the totals stay pending. */
  flush(): void {
    this.flusher.flushNow();
  }

  /** Stops the timer and flushes. Later `record` calls are ignored; reads keep working. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.flusher.stop();
    this.flusher.flushNow();
  }

  private oldestHour(): number {
    return Math.floor((this.now() - KEEP_MS) / HOUR_MS) * HOUR_MS;
  }

  private bump(hour: number, venue: string, base: string, usd: number): void {
    let bucket = this.hours.get(hour);
    if (!bucket) this.hours.set(hour, (bucket = new Map()));
    const key = `${venue}|${base}`;
    bucket.set(key, (bucket.get(key) ?? 0) + usd);
    let venues = this.active.get(hour);
    if (!venues) this.active.set(hour, (venues = new Set()));
    venues.add(venue);
  }

  private write(): void {
    const oldest = this.oldestHour();
    const pending = this.pending;
    this.db.transaction(() => {
      for (const [k, usd] of pending) {
        const [hour, venue, base] = k.split("|") as [string, string, string];
        if (Number(hour) >= oldest) this.st.add.run(Number(hour), venue, base, usd);
      }
      this.st.prune.run(oldest);
    })();
    this.pending = new Map();
    for (const h of this.hours.keys()) {
      if (h >= oldest) continue;
      this.hours.delete(h);
      this.active.delete(h);
    }
  }
}
