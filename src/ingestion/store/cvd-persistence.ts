/**
 * SQLite persistence of the CVD store (`cvd-store.ts`): the tables `cvd_symbol`, `cvd_bucket`, `cvd_bucket_ids` and
 * `cvd_ledger` of the stream database (`db.ts`). Every write is one transaction, so buckets and the trade ledgers
 * that counted into them are stored together (a crash loses both or neither).
 */
import type { Statement } from "better-sqlite3";
import { logger } from "../../lib/log.js";
import { STREAM_VENUES, type StreamVenue } from "../types.js";
import { CVD_BUCKET_MS } from "./cvd-math.js";
import type { CvdBucketRow, GapState } from "./cvd-types.js";
import type { Database } from "./db.js";
import { intervalsOrNone, parseIntervals } from "./intervals.js";
import { SequenceLedger } from "./trade-ledger.js";

const VENUE_SET: ReadonlySet<string> = new Set(STREAM_VENUES);

/** A bucket to write: its row fields (the `ids` of a row are passed apart). */
export type CvdBucketValues = Omit<CvdBucketRow, "ids" | "idsComplete">;

/** A bucket of a flush: its values and the ids counted since the last flush (appended; none when null or empty). */
export type CvdPendingBucket = CvdBucketValues & { newIds: string[] | null };

/** A (venue, base) ledger to write: newest trade time (non-finite = none yet), and the sequence ledger when it has one. */
export interface CvdTrackValues {
  venue: StreamVenue;
  base: string;
  newest: number;
  seq: SequenceLedger | null;
}

/** What {@link CvdPersistence.load} read within retention. */
export interface CvdLoaded {
  /** `cvd_symbol`: every tracked symbol. */
  symbols: Array<{ base: string; trackedSince: number }>;
  /** `cvd_bucket` rows of known venues in the asked range, by base, venue, start; `unfilled` as held in memory. */
  buckets: CvdBucketValues[];
  /** `cvd_ledger` rows of known venues whose newest trade is in range; `seq` null when it holds no sequence state. */
  ledgers: CvdTrackValues[];
}

interface BucketRow {
  base: string;
  venue: string;
  start: number;
  buy_base: number;
  sell_base: number;
  buy_usd: number;
  sell_usd: number;
  trades: number;
  gap: GapState;
  unfilled: string;
  id_count: number;
}

interface LedgerRow {
  venue: string;
  base: string;
  newest: number;
  mark: number | null;
  mark_time: number | null;
  floor: number | null;
  holes: string;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The CVD tables of one stream database, through prepared statements. Throws what SQLite throws. */
export class CvdPersistence {
  private readonly st: {
    upsertBucket: Statement<[string, string, number, number, number, number, number, number, GapState, string, number]>;
    upsertSymbol: Statement<[string, number]>;
    insertIds: Statement<[string, string, number, string]>;
    selectIds: Statement<[string, string, number]>;
    deleteIds: Statement<[string, string, number]>;
    upsertLedger: Statement<[string, string, number, number | null, number | null, number | null, string]>;
    deleteBucketsBefore: Statement<[number]>;
    deleteIdsBefore: Statement<[number]>;
    deleteLedgersBefore: Statement<[number]>;
    dropBuckets: Statement<[string]>;
    dropSymbol: Statement<[string]>;
    dropIds: Statement<[string]>;
    dropLedgers: Statement<[string]>;
  };

  constructor(private readonly db: Database) {
    this.st = {
      upsertBucket: db.prepare(
        `INSERT INTO cvd_bucket (base, venue, start, buy_base, sell_base, buy_usd, sell_usd, trades, gap, unfilled, id_count)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (base, venue, start) DO UPDATE SET buy_base = excluded.buy_base, sell_base = excluded.sell_base,
           buy_usd = excluded.buy_usd, sell_usd = excluded.sell_usd, trades = excluded.trades, gap = excluded.gap,
           unfilled = excluded.unfilled, id_count = excluded.id_count`,
      ),
      upsertSymbol: db.prepare(`INSERT INTO cvd_symbol (base, tracked_since) VALUES (?, ?) ON CONFLICT (base) DO UPDATE SET tracked_since = excluded.tracked_since`),
      insertIds: db.prepare(`INSERT INTO cvd_bucket_ids (base, venue, start, ids) VALUES (?, ?, ?, ?)`),
      selectIds: db.prepare(`SELECT ids FROM cvd_bucket_ids WHERE base = ? AND venue = ? AND start = ? ORDER BY rowid`),
      deleteIds: db.prepare(`DELETE FROM cvd_bucket_ids WHERE base = ? AND venue = ? AND start = ?`),
      upsertLedger: db.prepare(
        `INSERT INTO cvd_ledger (venue, base, newest, mark, mark_time, floor, holes) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (venue, base) DO UPDATE SET newest = excluded.newest, mark = excluded.mark, mark_time = excluded.mark_time,
           floor = excluded.floor, holes = excluded.holes`,
      ),
      deleteBucketsBefore: db.prepare(`DELETE FROM cvd_bucket WHERE start < ?`),
      deleteIdsBefore: db.prepare(`DELETE FROM cvd_bucket_ids WHERE start < ?`),
      deleteLedgersBefore: db.prepare(`DELETE FROM cvd_ledger WHERE newest < ?`),
      dropBuckets: db.prepare(`DELETE FROM cvd_bucket WHERE base = ?`),
      dropSymbol: db.prepare(`DELETE FROM cvd_symbol WHERE base = ?`),
      dropIds: db.prepare(`DELETE FROM cvd_bucket_ids WHERE base = ?`),
      dropLedgers: db.prepare(`DELETE FROM cvd_ledger WHERE base = ?`),
    };
  }

  /**
   * What the database holds with buckets in slots `[lo, hi]` and ledgers whose newest trade is at `lo` or later
   * (epoch ms). A bucket marked unfilled without its intervals (written before they were kept) is unfilled
   * all over; an unreadable ledger is logged and replaced by one that counts only trades newer than its newest.
   */
  load(lo: number, hi: number): CvdLoaded {
    const symbols = (this.db.prepare(`SELECT base, tracked_since FROM cvd_symbol`).all() as Array<{ base: string; tracked_since: number }>).map((r) => ({
      base: r.base,
      trackedSince: r.tracked_since,
    }));
    const buckets: CvdBucketValues[] = [];
    for (const r of this.db.prepare(`SELECT * FROM cvd_bucket WHERE start >= ? AND start <= ? ORDER BY base, venue, start`).all(lo, hi) as BucketRow[]) {
      if (!VENUE_SET.has(r.venue)) continue;
      let unfilled = intervalsOrNone(parseIntervals(safeJson(r.unfilled)) ?? []);
      if (r.gap === "unfilled" && unfilled.length === 0) unfilled = [[r.start, r.start + CVD_BUCKET_MS]];
      const { base, start, trades, gap } = r;
      buckets.push({
        base,
        venue: r.venue as StreamVenue,
        start,
        buyBase: r.buy_base,
        sellBase: r.sell_base,
        buyUsd: r.buy_usd,
        sellUsd: r.sell_usd,
        trades,
        gap,
        unfilled,
        idCount: r.id_count,
      });
    }
    const ledgers: CvdTrackValues[] = [];
    for (const r of this.db.prepare(`SELECT * FROM cvd_ledger`).all() as LedgerRow[]) {
      if (!VENUE_SET.has(r.venue) || r.newest < lo) continue;
      const row: CvdTrackValues = { venue: r.venue as StreamVenue, base: r.base, newest: r.newest, seq: null };
      ledgers.push(row);
      if (r.mark === null && r.floor === null && r.holes === "[]") continue;
      let seq = SequenceLedger.from({ mark: r.mark, markTime: r.mark_time, floor: r.floor, holes: safeJson(r.holes) });
      if (!seq) {
        logger.error({ venue: r.venue, base: r.base }, "cvd store: unreadable trade ledger; counting only trades newer than its newest");
        seq = new SequenceLedger();
        seq.floor = r.newest + 1;
      }
      row.seq = seq;
    }
    return { symbols, buckets, ledgers };
  }

  /** The ids stored for bucket (base, venue, start), added to `into`. */
  readIds(base: string, venue: StreamVenue, start: number, into: Set<string>): void {
    for (const r of this.st.selectIds.all(base, venue, start) as Array<{ ids: string }>) for (const id of r.ids.split("\n")) if (id) into.add(id);
  }

  /**
   * Writes a flush in one transaction: tracked ranges, buckets with their new ids, ledgers, and (with
   * `purgeBefore`, epoch ms) deletes buckets, ids and ledgers older than that.
   */
  writeFlush(w: {
    symbols: Iterable<{ base: string; trackedSince: number }>;
    buckets: Iterable<CvdPendingBucket>;
    tracks: Iterable<CvdTrackValues>;
    purgeBefore: number | null;
  }): void {
    this.db.transaction(() => {
      for (const s of w.symbols) this.st.upsertSymbol.run(s.base, s.trackedSince);
      for (const b of w.buckets) {
        this.writeBucket(b);
        if (b.newIds?.length) this.st.insertIds.run(b.base, b.venue, b.start, b.newIds.join("\n"));
      }
      for (const t of w.tracks) this.writeTrack(t);
      if (w.purgeBefore !== null) {
        this.st.deleteBucketsBefore.run(w.purgeBefore);
        this.st.deleteIdsBefore.run(w.purgeBefore);
        this.st.deleteLedgersBefore.run(w.purgeBefore);
      }
    })();
  }

  /**
   * Writes replicated state in one transaction: tracked ranges (base → start, epoch ms), buckets with their
   * ids (appended, or replacing the stored set when `replace`), and ledgers.
   */
  writeReplicated(w: {
    symbols: Iterable<[string, number]>;
    buckets: Iterable<{ b: CvdBucketValues; ids: string[] | undefined; replace: boolean }>;
    tracks: Iterable<CvdTrackValues>;
  }): void {
    this.db.transaction(() => {
      for (const [base, since] of w.symbols) this.st.upsertSymbol.run(base, since);
      for (const { b, ids, replace } of w.buckets) {
        this.writeBucket(b);
        if (replace) this.st.deleteIds.run(b.base, b.venue, b.start);
        if (ids?.length) this.st.insertIds.run(b.base, b.venue, b.start, ids.join("\n"));
      }
      for (const t of w.tracks) this.writeTrack(t);
    })();
  }

  /** Deletes everything of `base` (buckets, tracking, ids, ledgers) in one transaction. */
  drop(base: string): void {
    this.db.transaction(() => {
      this.st.dropBuckets.run(base);
      this.st.dropSymbol.run(base);
      this.st.dropIds.run(base);
      this.st.dropLedgers.run(base);
    })();
  }

  private writeBucket(b: CvdBucketValues): void {
    this.st.upsertBucket.run(b.base, b.venue, b.start, b.buyBase, b.sellBase, b.buyUsd, b.sellUsd, b.trades, b.gap, JSON.stringify(b.unfilled), b.idCount);
  }

  private writeTrack(t: CvdTrackValues): void {
    const s = t.seq?.state();
    this.st.upsertLedger.run(t.venue, t.base, Number.isFinite(t.newest) ? t.newest : 0, s?.mark ?? null, s?.markTime ?? null, s?.floor ?? null, JSON.stringify(s?.holes ?? []));
  }
}
