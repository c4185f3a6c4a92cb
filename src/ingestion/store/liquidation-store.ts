import type { Statement } from "better-sqlite3";
import { STREAM_VENUES, type Liquidation, type StreamVenue } from "../types.js";
import type { Database } from "./db.js";
import { Flusher } from "./flusher.js";
import { LiquidationHistory } from "./liquidation-history.js";
import { HOUR_MS as HOUR } from "../../lib/time.js";
import { logger } from "../../lib/log.js";

/*
 * The recent-liquidations buffer of `/liquidation/recent` (docs/methods/streams.md): the newest events of all venues,
 * at most 1000 and at most 24 h old, with ids `liq_<unix_seconds>_<sequence>`. Held in memory as a
 * time-ordered array (1000 entries: linear work is cheaper than any index) and written through to SQLite
 * in batches, so ids, events and the per-second sequences survive a restart.
 */

/** Most events the buffer holds (docs/methods/streams.md, "Recent liquidations"). */
export const LIQUIDATION_MAX_EVENTS = 1000;
/** Oldest event age the buffer holds, ms (24 h; docs/methods/streams.md). */
export const LIQUIDATION_MAX_AGE_MS = 24 * HOUR;
/** Venue clocks may run ahead of ours; events further in the future are refused, ms. */
const FUTURE_SKEW_MS = 60_000;
const CAP_META_KEY = "liq_cap_dropped_until";

/** A stored liquidation with its id `liq_<unix_seconds>_<sequence>` (seconds of the event time, sequence from 1 per second). */
export interface LiquidationRecord extends Liquidation {
  id: string;
}

/** Aggregates of {@link LiquidationStore.stats} (the `stats` of `/liquidation/recent`, plus `capped`). USD values are sums of `valueUsd`. */
export interface LiquidationStats {
  last_1h: { total_events: number; long_liquidations: number; short_liquidations: number; total_value_usd: number };
  last_24h: { total_events: number; total_value_usd: number };
  /**
   * True when events of the last 24 h were dropped by the 1000-event cap, so `last_24h` (and, in a
   * cascade of more than 1000 events an hour, `last_1h`) undercounts.
   */
  capped: boolean;
}

/** An event as `/liquidation/recent` publishes it (docs/methods/streams.md, "Recent liquidations"). */
export interface LiquidationEventOut {
  id: string;
  /** `<BASE>USDT`. */
  symbol: string;
  side: "long" | "short";
  size: number;
  price: number;
  value_usd: number;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
  /** Venue key in upper case (`BINANCE`). */
  exchange: string;
}

/** Options of {@link LiquidationStore}. */
export interface LiquidationStoreOptions {
  /** Clock, epoch ms (default `Date.now`). */
  now?: () => number;
  /** Longest delay of write-through to SQLite, ms (default 1000; 0 = write on every change). */
  flushMs?: number;
  /** Cap on events (default {@link LIQUIDATION_MAX_EVENTS}). */
  maxEvents?: number;
  /** Age limit, ms (default {@link LIQUIDATION_MAX_AGE_MS}). */
  maxAgeMs?: number;
  /** The venues whose hourly totals are the liquidation history (default: liquidation-history.ts's list). */
  historyVenues?: readonly string[];
}

interface Stored extends LiquidationRecord {
  second: number;
  seq: number;
  key: string;
}

interface EventRow {
  id: string;
  second: number;
  seq: number;
  venue: string;
  base: string;
  venue_symbol: string;
  time: number;
  side: "long" | "short";
  price: number;
  size: number;
  value_usd: number;
}

const VENUE_SET: ReadonlySet<string> = new Set(STREAM_VENUES);
const QUOTES = ["FDUSD", "USDT", "USDC", "BUSD", "USD"];

/** Identity of an event for de-duplication: venue, venue symbol, time, side, size and price. */
function dedupeKey(e: Liquidation): string {
  return `${e.venue}|${e.venueSymbol}|${e.time}|${e.side}|${e.size}|${e.price}`;
}

function valid(e: Liquidation): boolean {
  return (
    VENUE_SET.has(e.venue) &&
    typeof e.base === "string" &&
    e.base.length > 0 &&
    typeof e.venueSymbol === "string" &&
    Number.isFinite(e.time) &&
    (e.side === "long" || e.side === "short") &&
    Number.isFinite(e.price) &&
    e.price > 0 &&
    Number.isFinite(e.size) &&
    e.size > 0 &&
    Number.isFinite(e.valueUsd) &&
    e.valueUsd >= 0
  );
}

/**
 * Base of a symbol filter, upper case: `BTC` → `BTC`, `btcusdt` → `BTC`, `BTC-USDT-SWAP` → `BTC`,
 * `BTC/USDC` → `BTC`, `ETH-PERP` → `ETH`. A quote suffix (USDT, USDC, FDUSD, BUSD, USD) is stripped only
 * when something remains.
 */
export function liquidationFilterBase(symbol: string): string {
  let s = symbol.trim().toUpperCase();
  s = s.replace(/[-_/:]?(SWAP|PERP)$/, "");
  const part = s.split(/[-_/:]/)[0] ?? s;
  for (const q of QUOTES) if (part.length > q.length && part.endsWith(q)) return part.slice(0, -q.length);
  return part;
}

/** The published shape of an event (docs/methods/streams.md): symbol `<BASE>USDT`, exchange upper case, ISO timestamp. */
export function formatLiquidation(e: LiquidationRecord): LiquidationEventOut {
  return {
    id: e.id,
    symbol: `${e.base}USDT`,
    side: e.side,
    size: e.size,
    price: e.price,
    value_usd: e.valueUsd,
    timestamp: new Date(e.time).toISOString(),
    exchange: e.venue.toUpperCase(),
  };
}

/**
 * Ring of the most recent liquidations across venues (see the module comment).
 *
 * - Both caps are enforced: on every `add`, and the 24 h limit again on every read.
 * - Ids: `liq_<floor(time / 1000)>_<n>` with `n` = 1, 2, … per event-time second, in arrival order.
 *   The last `n` per second is persisted (for 24 h + 1 h), so ids are never reused across restarts.
 * - Identical events (same venue, venue symbol, time, side, size, price) are stored once; an event older
 *   than 24 h, more than 1 min in the future, or older than all 1000 held events is refused.
 * - Write-through to SQLite within `flushMs` (one transaction) and on `close()`; loaded on construction.
 *   `close()` does not close the shared database.
 */
export class LiquidationStore {
  private readonly now: () => number;
  private readonly maxEvents: number;
  private readonly maxAgeMs: number;
  /** Ascending by (time, arrival): equal times keep arrival order. */
  private events: Stored[] = [];
  private readonly keys = new Set<string>();
  private readonly seqs = new Map<number, number>();
  /** Newest event time dropped by the count cap, epoch ms. */
  private capDroppedUntil = -Infinity;
  private pendingInsert: Stored[] = [];
  private pendingDelete: string[] = [];
  private readonly pendingSeq = new Set<number>();
  private metaDirty = false;
  private readonly flusher: Flusher;
  private closed = false;
  private readonly observers = new Set<(added: LiquidationRecord[]) => void>();
  /** Observers of every stored record, local or replicated (the paid live streams of every replica). */
  private readonly storedObservers = new Set<(added: LiquidationRecord[]) => void>();
  /** Hourly totals of every stored record over 8 days (the cascade-risk forecast's liquidation history). */
  readonly history: LiquidationHistory;

  private readonly st: {
    insert: Statement<[string, number, number, string, string, string, number, string, number, number, number]>;
    remove: Statement<[string]>;
    upsertSeq: Statement<[number, number]>;
    pruneSeq: Statement<[number]>;
    pruneEvents: Statement<[number]>;
    setMeta: Statement<[string, string]>;
  };

  constructor(
    private readonly db: Database,
    opts: LiquidationStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.maxEvents = opts.maxEvents ?? LIQUIDATION_MAX_EVENTS;
    this.maxAgeMs = opts.maxAgeMs ?? LIQUIDATION_MAX_AGE_MS;
    this.st = {
      insert: db.prepare(
        `INSERT OR IGNORE INTO liq_event (id, second, seq, venue, base, venue_symbol, time, side, price, size, value_usd)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      remove: db.prepare(`DELETE FROM liq_event WHERE id = ?`),
      upsertSeq: db.prepare(`INSERT INTO liq_seq (second, seq) VALUES (?, ?) ON CONFLICT (second) DO UPDATE SET seq = max(seq, excluded.seq)`),
      pruneSeq: db.prepare(`DELETE FROM liq_seq WHERE second < ?`),
      pruneEvents: db.prepare(`DELETE FROM liq_event WHERE time < ?`),
      setMeta: db.prepare(`INSERT INTO stream_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
    };
    this.flusher = new Flusher("liquidations", opts.flushMs ?? 1000, () => this.writePending());
    this.history = new LiquidationHistory(db, { now: this.now, flushMs: opts.flushMs, venues: opts.historyVenues });
    this.load();
  }

  /** Number of events held (after applying the age limit). */
  get size(): number {
    this.expire(this.now());
    return this.events.length;
  }

  /**
   * Stores new events, assigning ids; returns the stored ones (duplicates and refused events left out),
   * in input order. Ignored after `close()`.
   */
  add(events: readonly Liquidation[]): LiquidationRecord[] {
    if (this.closed || events.length === 0) return [];
    const now = this.now();
    this.expire(now);
    const added: LiquidationRecord[] = [];
    for (const e of events) {
      if (!valid(e) || e.time < now - this.maxAgeMs || e.time > now + FUTURE_SKEW_MS) continue;
      const key = dedupeKey(e);
      if (this.keys.has(key)) continue;
      const oldest = this.events[0];
      if (this.events.length >= this.maxEvents && oldest && e.time < oldest.time) {
        // Older than everything a full buffer holds: it would be evicted at once; take no id for it.
        this.noteCapDrop(e.time);
        continue;
      }
      const second = Math.floor(e.time / 1000);
      const seq = (this.seqs.get(second) ?? 0) + 1;
      this.seqs.set(second, seq);
      this.pendingSeq.add(second);
      const rec: Stored = {
        venue: e.venue,
        base: e.base,
        venueSymbol: e.venueSymbol,
        time: e.time,
        side: e.side,
        price: e.price,
        size: e.size,
        valueUsd: e.valueUsd,
        id: `liq_${second}_${seq}`,
        second,
        seq,
        key,
      };
      this.insertSorted(rec);
      this.keys.add(key);
      this.pendingInsert.push(rec);
      while (this.events.length > this.maxEvents) {
        const gone = this.events.shift()!;
        this.forget(gone);
        this.noteCapDrop(gone.time);
      }
      added.push(this.publicCopy(rec));
    }
    if (added.length > 0 || this.pendingDelete.length > 0 || this.metaDirty) this.flusher.schedule();
    if (added.length > 0) {
      this.history.record(added);
      notify(this.observers, added);
      notify(this.storedObservers, added);
    }
    return added;
  }

  /**
   * Registers an observer of every record stored, by {@link add} or {@link applyReplicated} (so a replica
   * sees what the ingesting replica stored): called synchronously with the new records. Returns the
   * function that removes it.
   */
  observeStored(fn: (added: LiquidationRecord[]) => void): () => void {
    this.storedObservers.add(fn);
    return () => this.storedObservers.delete(fn);
  }

  /**
   * Registers an observer of {@link add}: called synchronously with the records stored (with their ids),
   * never for {@link applyReplicated}. Returns the function that removes it.
   */
  observe(fn: (added: LiquidationRecord[]) => void): () => void {
    this.observers.add(fn);
    return () => this.observers.delete(fn);
  }

  /**
   * Stores records replicated from the ingesting replica with THEIR ids (`liq_<second>_<seq>`), ignoring
   * one already held (same id, or the same event), invalid ones and ones outside the age limit; the
   * per-second sequences advance past those ids so this store never issues them again. The caps apply as
   * in {@link add}. Returns the number stored. Ignored after `close()`.
   */
  applyReplicated(records: readonly LiquidationRecord[]): number {
    if (this.closed || records.length === 0) return 0;
    const now = this.now();
    this.expire(now);
    const ids = new Set(this.events.map((e) => e.id));
    let stored = 0;
    const replicated: LiquidationRecord[] = [];
    for (const r of records) {
      if (!r || !valid(r) || typeof r.id !== "string" || r.time < now - this.maxAgeMs || r.time > now + FUTURE_SKEW_MS) continue;
      const m = /^liq_(\d+)_(\d+)$/.exec(r.id);
      if (!m) continue;
      const second = Number(m[1]);
      const seq = Number(m[2]);
      if ((this.seqs.get(second) ?? 0) < seq) {
        this.seqs.set(second, seq);
        this.pendingSeq.add(second);
      }
      const key = dedupeKey(r);
      if (ids.has(r.id) || this.keys.has(key)) continue;
      const oldest = this.events[0];
      if (this.events.length >= this.maxEvents && oldest && r.time < oldest.time) {
        this.noteCapDrop(r.time);
        continue;
      }
      const rec: Stored = {
        venue: r.venue,
        base: r.base,
        venueSymbol: r.venueSymbol,
        time: r.time,
        side: r.side,
        price: r.price,
        size: r.size,
        valueUsd: r.valueUsd,
        id: r.id,
        second,
        seq,
        key,
      };
      this.insertSorted(rec);
      this.keys.add(key);
      ids.add(rec.id);
      this.pendingInsert.push(rec);
      stored++;
      replicated.push(this.publicCopy(rec));
      while (this.events.length > this.maxEvents) {
        const gone = this.events.shift()!;
        this.forget(gone);
        this.noteCapDrop(gone.time);
      }
    }
    if (stored > 0 || this.pendingSeq.size > 0 || this.pendingDelete.length > 0 || this.metaDirty) this.flusher.schedule();
    if (replicated.length > 0) {
      this.history.record(replicated);
      notify(this.storedObservers, replicated);
    }
    return stored;
  }

  /**
   * Newest first, at most `limit` (default 50, clamped to 1…1000). `symbol` filters by base: `BTC`,
   * `BTCUSDT`, `BTC-USDT-SWAP` all match base `BTC` (see {@link liquidationFilterBase}); an exact venue
   * symbol matches too. Events older than 24 h are never returned. `before` (a page cursor's last event) starts
   * after that event: older than it in buffer order when it is still held, else strictly older than its time.
   */
  recent(opts: { limit?: number; symbol?: string; before?: { id: string; timeMs: number } } = {}): LiquidationRecord[] {
    this.expire(this.now());
    const limit = Math.min(Math.max(Math.floor(opts.limit ?? 50), 1), LIQUIDATION_MAX_EVENTS);
    const raw = opts.symbol?.trim().toUpperCase();
    const base = raw ? liquidationFilterBase(raw) : undefined;
    const out: LiquidationRecord[] = [];
    for (let i = this.startBefore(opts.before); i >= 0 && out.length < limit; i--) {
      const e = this.events[i]!;
      if (raw !== undefined && raw !== "" && e.base.toUpperCase() !== base && e.venueSymbol.toUpperCase() !== raw) continue;
      out.push(this.publicCopy(e));
    }
    return out;
  }

  /** Index of the newest event older than `before` (see {@link recent}); the newest event's without one. */
  private startBefore(before: { id: string; timeMs: number } | undefined): number {
    if (!before) return this.events.length - 1;
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i]!;
      if (e.id === before.id) return i - 1;
      if (e.time < before.timeMs) return i;
    }
    return -1;
  }

  /**
   * Counts and USD sums over the last hour and the last 24 h before `nowMs` (default now; events with
   * time ≥ nowMs − window, including slightly-future ones), over what the buffer holds: see `capped`.
   */
  stats(nowMs: number = this.now()): LiquidationStats {
    this.expire(this.now());
    const s: LiquidationStats = {
      last_1h: { total_events: 0, long_liquidations: 0, short_liquidations: 0, total_value_usd: 0 },
      last_24h: { total_events: 0, total_value_usd: 0 },
      capped: this.capDroppedUntil >= nowMs - LIQUIDATION_MAX_AGE_MS,
    };
    for (const e of this.events) {
      if (e.time < nowMs - LIQUIDATION_MAX_AGE_MS) continue;
      s.last_24h.total_events++;
      s.last_24h.total_value_usd += e.valueUsd;
      if (e.time < nowMs - HOUR) continue;
      s.last_1h.total_events++;
      if (e.side === "long") s.last_1h.long_liquidations++;
      else s.last_1h.short_liquidations++;
      s.last_1h.total_value_usd += e.valueUsd;
    }
    return s;
  }

  /** Writes pending changes now (one transaction). Throws on SQLite errors; the changes stay pending. */
  flush(): void {
    this.flusher.flushNow();
    this.history.flush();
  }

  /** Stops the timer and flushes (the history too). Later `add` calls are ignored; reads keep working. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.flusher.stop();
    this.flusher.flushNow();
    this.history.close();
  }

  private publicCopy(e: Stored): LiquidationRecord {
    const { second: _s, seq: _q, key: _k, ...rec } = e;
    return rec;
  }

  private noteCapDrop(time: number): void {
    if (time <= this.capDroppedUntil) return;
    this.capDroppedUntil = time;
    this.metaDirty = true;
  }

  private insertSorted(rec: Stored): void {
    // Upper bound: after every event with time ≤ rec.time, so equal times stay in arrival (sequence) order.
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.time <= rec.time) lo = mid + 1;
      else hi = mid;
    }
    this.events.splice(lo, 0, rec);
  }

  private forget(e: Stored): void {
    this.keys.delete(e.key);
    const i = this.pendingInsert.indexOf(e);
    if (i >= 0) this.pendingInsert.splice(i, 1);
    else this.pendingDelete.push(e.id);
  }

  /** Drops events past the age limit, and sequences of seconds no accepted event can have any more. */
  private expire(now: number): void {
    const cutoff = now - this.maxAgeMs;
    let n = 0;
    while (n < this.events.length && this.events[n]!.time < cutoff) this.forget(this.events[n++]!);
    if (n > 0) {
      this.events = this.events.slice(n);
      if (!this.closed) this.flusher.schedule();
    }
    const minSecond = Math.floor(cutoff / 1000) - 3600;
    if (this.seqs.size > 0 && n > 0) for (const sec of this.seqs.keys()) if (sec < minSecond) this.seqs.delete(sec);
  }

  private writePending(): void {
    const now = this.now();
    this.db.transaction(() => {
      // Deletes first: a re-added event must not be ignored by the UNIQUE key of a row about to go.
      for (const id of this.pendingDelete) this.st.remove.run(id);
      this.st.pruneEvents.run(now - this.maxAgeMs);
      for (const e of this.pendingInsert) {
        this.st.insert.run(e.id, e.second, e.seq, e.venue, e.base, e.venueSymbol, e.time, e.side, e.price, e.size, e.valueUsd);
      }
      for (const sec of this.pendingSeq) {
        const seq = this.seqs.get(sec);
        if (seq !== undefined) this.st.upsertSeq.run(sec, seq);
      }
      // Sequences are kept an hour beyond the age limit: events older than the limit are refused, so no
      // id can ever be issued for those seconds again.
      this.st.pruneSeq.run(Math.floor((now - this.maxAgeMs) / 1000) - 3600);
      if (this.metaDirty) this.st.setMeta.run(CAP_META_KEY, String(this.capDroppedUntil));
    })();
    this.pendingInsert = [];
    this.pendingDelete = [];
    this.pendingSeq.clear();
    this.metaDirty = false;
  }

  private load(): void {
    const now = this.now();
    const cutoff = now - this.maxAgeMs;
    for (const r of this.db.prepare(`SELECT second, seq FROM liq_seq`).all() as Array<{ second: number; seq: number }>) {
      this.seqs.set(r.second, r.seq);
    }
    const rows = this.db.prepare(`SELECT * FROM liq_event WHERE time >= ? ORDER BY time, second, seq`).all(cutoff) as EventRow[];
    for (const r of rows) {
      if (!VENUE_SET.has(r.venue)) continue;
      const rec: Stored = {
        venue: r.venue as StreamVenue,
        base: r.base,
        venueSymbol: r.venue_symbol,
        time: r.time,
        side: r.side,
        price: r.price,
        size: r.size,
        valueUsd: r.value_usd,
        id: r.id,
        second: r.second,
        seq: r.seq,
        key: "",
      };
      rec.key = dedupeKey(rec);
      // An event id implies its sequence was issued, even if liq_seq lagged behind.
      if ((this.seqs.get(r.second) ?? 0) < r.seq) {
        this.seqs.set(r.second, r.seq);
        this.pendingSeq.add(r.second);
      }
      this.events.push(rec);
      this.keys.add(rec.key);
    }
    // A smaller cap than the file was written with (configuration change): keep the newest.
    while (this.events.length > this.maxEvents) {
      const gone = this.events.shift()!;
      this.forget(gone);
      this.noteCapDrop(gone.time);
    }
    const meta = this.db.prepare(`SELECT value FROM stream_meta WHERE key = ?`).get(CAP_META_KEY) as { value: string } | undefined;
    if (meta) this.capDroppedUntil = Math.max(this.capDroppedUntil, Number(meta.value));
    this.flusher.flushNow();
  }
}

/** Calls each observer with `records`; one that throws is logged and does not stop the others. */
function notify(observers: Set<(added: LiquidationRecord[]) => void>, records: LiquidationRecord[]): void {
  for (const fn of observers) {
    try {
      fn(records);
    } catch (err) {
      logger.error({ err }, "liquidation store observer threw");
    }
  }
}
