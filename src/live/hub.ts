import { AppError } from "../errors.js";
import type { StreamTopic } from "../registry/stream.js";
import type { IngestionService } from "../ingestion/service.js";
import { CvdFeed } from "./cvd-feed.js";
import { FundingFeed, type FundingSnapshot } from "./funding-feed.js";
import { LiquidationFeed } from "./liquidation-feed.js";
import { DEFAULT_RESUME_LIMITS, type ResumeLimits } from "./resume.js";
import type { LiveEvent, LiveListener, ManagedFeed } from "./types.js";

/** What the hub reads: the live stores (absent with `STREAMS=off`), the funding reader, the clock and the resume limits. */
export interface LiveHubDeps {
  ingestion?: IngestionService;
  readFunding: (symbol: string) => Promise<FundingSnapshot>;
  now: () => number;
  fundingPollMs: number;
  /** How much a resume replays (default {@link DEFAULT_RESUME_LIMITS}); every transport resumes through the hub. */
  resume?: ResumeLimits;
}

/** A subscriber's view of one topic key: its backlog, taken in the same tick as the live subscription. */
export interface HubSubscription {
  backlog: LiveEvent[];
  unsubscribe(): void;
}

/**
 * Every live topic of this process, by key (`liquidations:*`, `liquidations:BTC`, `cvd:BTC`,
 * `funding:BTC`): a feed is created with its first subscriber and stopped with its last, so one store
 * observer, CVD timer or funding poller serves any number of subscribers. Works the same on every
 * replica: the feeds read the local (replicated) stores.
 */
export class LiveHub {
  private readonly feeds = new Map<string, ManagedFeed>();

  constructor(private readonly deps: LiveHubDeps) {}

  /** Topic keys with a running feed. */
  get activeFeeds(): number {
    return this.feeds.size;
  }

  /**
   * Subscribes `fn` to `topic` (for `symbol`, a base already validated; undefined = all liquidations):
   * returns the events after `lastEventId` (or the current state) and the live subscription.
   * @throws AppError UPSTREAM_UNAVAILABLE when the topic needs the live stores and this instance runs without them.
   */
  subscribe(topic: StreamTopic, symbol: string | undefined, lastEventId: string | undefined, fn: LiveListener): HubSubscription {
    const key = `${topic}:${symbol ?? "*"}`;
    let feed = this.feeds.get(key);
    if (!feed) {
      feed = this.create(topic, symbol);
      this.feeds.set(key, feed);
    }
    const backlog = feed.backlog(lastEventId);
    const off = feed.subscribe(fn);
    const f = feed;
    return {
      backlog,
      unsubscribe: () => {
        off();
        if (f.listeners === 0 && this.feeds.get(key) === f) {
          f.stop();
          this.feeds.delete(key);
        }
      },
    };
  }

  private create(topic: StreamTopic, symbol: string | undefined): ManagedFeed {
    if (topic === "funding") return new FundingFeed(symbol!, this.deps.readFunding, this.deps.now, this.deps.fundingPollMs);
    const s = this.deps.ingestion;
    if (!s) throw new AppError("UPSTREAM_UNAVAILABLE", "live trade streams are disabled on this instance (STREAMS=off)");
    const resume = this.deps.resume ?? DEFAULT_RESUME_LIMITS;
    if (topic === "liquidations") return new LiquidationFeed(s.liquidations, symbol, this.deps.now, resume);
    return new CvdFeed(s.cvd, symbol!, this.deps.now, resume);
  }

  /**
   * A stream-minute of `topic` for `symbol` was paid: a CVD stream's on-demand symbol is then protected
   * from eviction like one a paid `/cvd` call read (`IngestionService.markPaid`). Never throws.
   */
  paidMinute(topic: StreamTopic, symbol: string | undefined): void {
    if (topic === "cvd" && symbol) this.deps.ingestion?.markPaid?.(symbol);
  }

  /** Stops every feed (shutdown). */
  close(): void {
    for (const f of this.feeds.values()) f.stop();
    this.feeds.clear();
  }
}
