import { clean } from "../analytics/funding.js";
import { CVD_BUCKET_MS } from "../ingestion/store/cvd-math.js";
import { CVD_RETENTION_MS, type CvdFlow, type CvdStore } from "../ingestion/store/cvd-store.js";
import { STREAM_VENUES, type StreamVenue } from "../ingestion/types.js";
import { Listeners } from "./listeners.js";
import { boundReplay, DEFAULT_RESUME_LIMITS, type ResumeLimits } from "./resume.js";
import type { LiveEvent, ManagedFeed } from "./types.js";

/** A bucket is published this long after it ends, so trades that arrive a little late are in it, ms. */
export const CVD_CLOSE_GRACE_MS = 5_000;
/** Running updates of the open bucket: at most one per this period, ms. */
export const CVD_UPDATE_MS = 1_000;

const flowOut = (f: CvdFlow) => ({ cvd: clean(f.buyUsd - f.sellUsd), buy_volume: clean(f.buyUsd), sell_volume: clean(f.sellUsd) });

/**
 * CVD of one base from the CVD store (the local one, or a replica's replicated copy): a `cvd_bucket`
 * event per closed 5-minute bucket (id `cvd_<BASE>_<start ms>`, {@link CVD_CLOSE_GRACE_MS} after it
 * ends) and a `cvd_update` of the open bucket at most once a second when its sums changed (no id). One
 * timer per base, however many subscribers. A resume replays the closed buckets after the id that ended
 * within `resume.windowMs`, at most `resume.maxEvents` ({@link boundReplay}).
 */
export class CvdFeed implements ManagedFeed {
  private readonly out = new Listeners();
  private readonly timer: NodeJS.Timeout;
  /** Start of the newest bucket published (or considered published when the feed started). */
  private lastClosed: number;
  private lastUpdate = "";

  constructor(
    private readonly store: CvdStore,
    private readonly base: string,
    private readonly now: () => number,
    private readonly resume: ResumeLimits = DEFAULT_RESUME_LIMITS,
  ) {
    this.lastClosed = this.newestClosed();
    this.timer = setInterval(() => this.tick(), CVD_UPDATE_MS);
    this.timer.unref();
  }

  get listeners(): number {
    return this.out.size;
  }

  /** Start of the newest bucket that is closed and past its grace time. */
  private newestClosed(): number {
    return Math.floor((this.now() - CVD_CLOSE_GRACE_MS) / CVD_BUCKET_MS) * CVD_BUCKET_MS - CVD_BUCKET_MS;
  }

  private tick(): void {
    if (this.out.size === 0) return;
    const closed = this.newestClosed();
    if (closed > this.lastClosed) {
      for (const e of this.buckets(this.lastClosed + CVD_BUCKET_MS, closed)) this.out.emit(e);
      this.lastClosed = closed;
    }
    const now = this.now();
    const open = Math.floor(now / CVD_BUCKET_MS) * CVD_BUCKET_MS;
    const sum = this.store.cvd(this.base, open, now + 1);
    const data = { ...this.bucketData(open, sum.total, sum.venues, !sum.unfilled), as_of: new Date(now).toISOString() };
    const key = `${open}:${sum.total.trades}:${sum.total.buyUsd}:${sum.total.sellUsd}`;
    if (sum.total.trades > 0 && key !== this.lastUpdate) {
      this.lastUpdate = key;
      this.out.emit({ event: "cvd_update", data });
    }
  }

  private bucketData(start: number, total: CvdFlow, venues: Partial<Record<StreamVenue, CvdFlow>>, complete: boolean) {
    const exchanges: Record<string, ReturnType<typeof flowOut>> = {};
    for (const v of STREAM_VENUES) if (venues[v]) exchanges[v] = flowOut(venues[v]);
    return {
      symbol: this.base,
      bucket_start: new Date(start).toISOString(),
      bucket_end: new Date(start + CVD_BUCKET_MS).toISOString(),
      ...flowOut(total),
      exchanges,
      data_complete: complete,
    };
  }

  /** Closed buckets with starts in [from, to], oldest first (buckets inside the tracked range only). */
  private buckets(from: number, to: number): LiveEvent[] {
    if (to < from) return [];
    return this.store.history(this.base, from, to + 1, CVD_BUCKET_MS, { perVenue: true }).map((p) => ({
      event: "cvd_bucket",
      id: `cvd_${this.base}_${p.start}`,
      data: this.bucketData(p.start, p, p.venues ?? {}, !p.missing),
    }));
  }

  backlog(lastEventId: string | undefined): LiveEvent[] {
    const m = lastEventId ? /^cvd_([A-Z0-9]{1,20})_(\d{1,15})$/.exec(lastEventId) : null;
    if (!lastEventId || !m || m[1] !== this.base) return [];
    const from = Number(m[2]) + CVD_BUCKET_MS;
    const now = this.now();
    // The first bucket that ended within the window: buckets before it are not replayed (nor even read).
    const windowStart = now - this.resume.windowMs;
    const firstInWindow = Math.ceil((windowStart - CVD_BUCKET_MS) / CVD_BUCKET_MS) * CVD_BUCKET_MS;
    const trackedSince = this.store.cvd(this.base, now, now).trackedSince;
    const firstHeld = trackedSince === null ? null : Math.floor(Math.max(from, trackedSince) / CVD_BUCKET_MS) * CVD_BUCKET_MS;
    const beforeWindow = firstHeld !== null && firstHeld < firstInWindow && firstHeld <= this.lastClosed;
    const out = boundReplay(
      { lastEventId, events: this.buckets(Math.max(from, firstInWindow), this.lastClosed), beforeWindow, windowStart, rest: `GET /cvd/history/${this.base}?period=7d` },
      this.resume,
    );
    if (!beforeWindow && from < now - CVD_RETENTION_MS)
      out.unshift({ event: "gap", data: { reason: "your Last-Event-ID is older than the 7 days of buckets held; older buckets were not replayed" } });
    return out;
  }

  subscribe(fn: (e: LiveEvent) => void): () => void {
    return this.out.add(fn);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
