import type { CvdStore } from "./store/cvd-store.js";
import type { LiquidationStore } from "./store/liquidation-store.js";
import type { StreamReadiness, IngestionService, WarmupCaller } from "./service.js";
import type { FeedState } from "./types.js";

/** A per-client budget of new on-demand warm-ups (`STREAM_WARMUPS_PER_MIN`). */
export interface WarmupBudget {
  /**
   * Spends one warm-up of `client` (an address as the rate limiters key it).
   * @throws AppError RATE_LIMITED (429, with `retryAfterSec`) when the client has none left this minute.
   */
  consume(client: string): Promise<void>;
}

/**
 * The venue ingestion as the tools see it: `inner` (a {@link IngestionManager} or `ReplicatedIngestion`) plus the
 * two rules that keep free warm-ups from disturbing paid use:
 * - a request that would subscribe a symbol not streamed yet (a free `202` warm-up) first spends one of its
 *   client's warm-ups ({@link WarmupBudget}); requests of symbols already streamed spend nothing;
 * - paid use is recorded through `markPaid` (the manager, or the relay to the replica that ingests), so
 *   the manager never evicts a symbol paid for recently to make room for a warm-up.
 */
export class GuardedIngestion implements IngestionService {
  constructor(
    private readonly inner: IngestionService,
    private readonly opts: {
      budget: WarmupBudget;
      /** Where a paid use goes: the manager's `markPaid`, or the relay to the replica that ingests. */
      markPaid: (base: string) => void;
      /** Started and stopped with the ingestion (the relay's reader). */
      companion?: { start(): void; stop(): void };
    },
  ) {}

  get cvd(): CvdStore {
    return this.inner.cvd;
  }

  get liquidations(): LiquidationStore {
    return this.inner.liquidations;
  }

  get onDemandCount(): number {
    return this.inner.onDemandCount;
  }

  get backfillCount(): number {
    return this.inner.backfillCount;
  }

  start(): Promise<void> {
    this.opts.companion?.start();
    return this.inner.start();
  }

  stop(): Promise<void> {
    this.opts.companion?.stop();
    return this.inner.stop();
  }

  async ensure(base: string, caller?: WarmupCaller): Promise<StreamReadiness> {
    const b = base.trim().toUpperCase();
    if (caller?.client !== undefined && !this.inner.subscribedBases().includes(b)) await this.opts.budget.consume(caller.client);
    return this.inner.ensure(b);
  }

  markPaid(base: string): void {
    this.opts.markPaid(base.trim().toUpperCase());
  }

  states(): FeedState[] {
    return this.inner.states();
  }

  activeConnections(): number {
    return this.inner.activeConnections();
  }

  subscribedBases(): string[] {
    return this.inner.subscribedBases();
  }
}
