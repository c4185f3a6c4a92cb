import { logger } from "../lib/log.js";
import { Listeners } from "./listeners.js";
import type { LiveEvent, ManagedFeed } from "./types.js";

/** What a funding poll returns (the `funding` event's data; see tools/live/funding.ts). */
export interface FundingSnapshot {
  symbol: string;
  timestamp: string;
  exchanges: Record<string, { funding_rate: number; predicted_funding_rate: number | null; funding_interval_hours: number; next_funding_time: string | null }>;
  missing_exchanges: unknown[];
}

/**
 * Funding of one symbol, polled from the venues every `pollMs` while it has subscribers (one poll per
 * symbol, however many subscribers): a `funding` event when any venue's rate, prediction or next
 * settlement time changed, and a `funding_settlement` event when a venue's next settlement time moved
 * forward (the previous one passed), carrying the last rate published before it. New subscribers get the
 * latest `funding` event at once. Ids are `fund_<SYMBOL>_<poll ms>`; funding keeps no history to replay.
 */
export class FundingFeed implements ManagedFeed {
  private readonly out = new Listeners();
  private readonly timer: NodeJS.Timeout;
  private latest?: LiveEvent;
  private polling = false;
  private stopped = false;

  constructor(
    private readonly symbol: string,
    private readonly read: (symbol: string) => Promise<FundingSnapshot>,
    private readonly now: () => number,
    pollMs: number,
  ) {
    this.timer = setInterval(() => void this.poll(), pollMs);
    this.timer.unref();
    void this.poll();
  }

  get listeners(): number {
    return this.out.size;
  }

  private async poll(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = true;
    try {
      const snap = await this.read(this.symbol);
      if (this.stopped) return;
      const prev = this.latest?.data as FundingSnapshot | undefined;
      const at = this.now();
      for (const [venue, f] of Object.entries(snap.exchanges)) {
        const before = prev?.exchanges[venue];
        if (before?.next_funding_time && f.next_funding_time && Date.parse(f.next_funding_time) > Date.parse(before.next_funding_time)) {
          this.out.emit({
            event: "funding_settlement",
            id: `fund_${this.symbol}_${at}_${venue}`,
            data: {
              symbol: this.symbol,
              exchange: venue,
              settled_at: before.next_funding_time,
              funding_rate: before.funding_rate,
              funding_interval_hours: before.funding_interval_hours,
            },
          });
        }
      }
      // Venues that failed this poll keep their previous state rather than flapping out and back in.
      const exchanges = { ...(prev?.exchanges ?? {}), ...snap.exchanges };
      const changed = !prev || JSON.stringify(prev.exchanges) !== JSON.stringify(exchanges);
      if (changed) {
        this.latest = { event: "funding", id: `fund_${this.symbol}_${at}`, data: { ...snap, exchanges } };
        this.out.emit(this.latest);
      }
    } catch (err) {
      logger.warn({ err, symbol: this.symbol }, "funding stream poll failed (retried at the next poll)");
    } finally {
      this.polling = false;
    }
  }

  backlog(): LiveEvent[] {
    return this.latest ? [this.latest] : [];
  }

  subscribe(fn: (e: LiveEvent) => void): () => void {
    return this.out.add(fn);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }
}
