import {
  formatLiquidation,
  LIQUIDATION_MAX_AGE_MS,
  LIQUIDATION_MAX_EVENTS,
  liquidationFilterBase,
  type LiquidationRecord,
  type LiquidationStore,
} from "../ingestion/store/liquidation-store.js";
import { Listeners } from "./listeners.js";
import { boundReplay, DEFAULT_RESUME_LIMITS, type ResumeLimits } from "./resume.js";
import type { LiveEvent, ManagedFeed } from "./types.js";

/** `liq_<second>_<seq>` → [second, seq], or undefined for anything else. */
export function parseLiquidationId(id: string | undefined): [number, number] | undefined {
  const m = id ? /^liq_(\d{1,12})_(\d{1,9})$/.exec(id) : null;
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

const after = (a: [number, number], b: [number, number]) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

const toEvent = (r: LiquidationRecord): LiveEvent => ({ event: "liquidation", id: r.id, data: formatLiquidation(r) });

/**
 * Liquidations of one base (or all, `base` undefined) from the liquidation store, local or replicated
 * (`observeStored`). Live events come in arrival order; a resume replays the stored events whose id is
 * after `Last-Event-ID` in id order (ids follow event time, so an event that arrived late with an earlier
 * second than the resume point is not replayed: see docs/streams.md), only those of the last
 * `resume.windowMs` and at most `resume.maxEvents` ({@link boundReplay}).
 */
export class LiquidationFeed implements ManagedFeed {
  private readonly out = new Listeners();
  private readonly unobserve: () => void;

  constructor(
    private readonly store: LiquidationStore,
    private readonly base: string | undefined,
    private readonly now: () => number = Date.now,
    private readonly resume: ResumeLimits = DEFAULT_RESUME_LIMITS,
  ) {
    this.unobserve = store.observeStored((records) => {
      for (const r of records) if (this.base === undefined || r.base.toUpperCase() === this.base) this.out.emit(toEvent(r));
    });
  }

  get listeners(): number {
    return this.out.size;
  }

  backlog(lastEventId: string | undefined): LiveEvent[] {
    const from = parseLiquidationId(lastEventId);
    if (!from || !lastEventId) return [];
    const now = this.now();
    const recent = this.store.recent({ limit: LIQUIDATION_MAX_EVENTS, symbol: this.base });
    const missed = recent.filter((r) => after(parseLiquidationId(r.id)!, from));
    missed.sort((a, b) => (after(parseLiquidationId(a.id)!, parseLiquidationId(b.id)!) ? 1 : -1));
    const windowStart = now - this.resume.windowMs;
    const inWindow = missed.filter((r) => r.time >= windowStart);
    const rest = `GET /liquidation/recent?${this.base ? `symbol=${this.base}&` : ""}limit=1000`;
    const out = boundReplay({ lastEventId, events: inWindow.map(toEvent), beforeWindow: inWindow.length < missed.length, windowStart, rest }, this.resume);
    // The buffer's oldest event (any symbol) is after the resume point: what fell out of it in between is lost.
    const oldest = this.store.recent({ limit: LIQUIDATION_MAX_EVENTS }).at(-1);
    if (oldest && after(parseLiquidationId(oldest.id)!, from) && this.store.size >= LIQUIDATION_MAX_EVENTS) {
      out.unshift({
        event: "gap",
        data: {
          reason: `liquidations before ${oldest.id} are no longer held (newest ${LIQUIDATION_MAX_EVENTS} of the last 24 h); some after your Last-Event-ID were not replayed`,
        },
      });
    } else if (from[0] * 1000 < now - LIQUIDATION_MAX_AGE_MS) {
      out.unshift({ event: "gap", data: { reason: "your Last-Event-ID is older than the 24 hours of liquidations held; older events were not replayed" } });
    }
    return out;
  }

  subscribe(fn: (e: LiveEvent) => void): () => void {
    return this.out.add(fn);
  }

  stop(): void {
    this.unobserve();
  }
}

/** The base a liquidation stream filters on (`BTCUSDT`, `BTC-USDT-SWAP` → `BTC`), undefined for all. */
export function liquidationStreamBase(symbol: string | undefined): string | undefined {
  const s = symbol?.trim();
  return s ? liquidationFilterBase(s) : undefined;
}
