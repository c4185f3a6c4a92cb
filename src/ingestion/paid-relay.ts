import type { Logger } from "../lib/log.js";
import type { RedisHandle } from "../state/redis.js";

/** A replica writes the paid use of one symbol at most this often, ms (the protection lasts minutes). */
const RECORD_EVERY_MS = 10_000;
/** How often the ingesting replica reads the paid uses of every replica, ms. */
const POLL_MS = 2_000;

/** Options of {@link PaidUseRelay}. Times are epoch ms or ms. */
export interface PaidUseRelayOptions {
  redis: RedisHandle;
  /** A paid use protects its symbol this long (`STREAM_IDLE_MIN`); older entries are deleted. */
  holdMs: number;
  /** Whether this replica ingests now (only the ingest leader's manager evicts). */
  leading: () => boolean;
  /** Hands one paid use to the ingest leader's manager (`IngestionManager.markPaid`). */
  apply: (base: string, at: number) => void;
  log: Logger;
  now?: () => number;
}

/**
 * Paid use of on-demand symbols across replicas (`REDIS_URL`): a paid CVD answer or stream-minute may be
 * served by any replica, while only the ingest leader's manager decides evictions. Every replica writes
 * `<prefix>streams:paid` (hash: base → epoch ms of its last paid use, at most once per base per 10 s from
 * one replica); the leader reads it every 2 s, applies each entry to its manager (idempotent: the newest
 * time wins), and deletes entries older than `holdMs`. The hash holds at most one entry per listed symbol
 * paid for within `holdMs`. Redis unreachable: paid uses of that time are not relayed (a symbol is then
 * protected by its earlier paid uses only); nothing throws.
 */
export class PaidUseRelay {
  private readonly key: string;
  private readonly now: () => number;
  /** Base → when this replica last wrote it (pruned after {@link RECORD_EVERY_MS}). */
  private readonly written = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(private readonly opts: PaidUseRelayOptions) {
    this.key = opts.redis.key("streams:paid");
    this.now = opts.now ?? Date.now;
  }

  /** Records a paid use of `base` now: applied at once when this replica leads, and written for the leader. */
  record(base: string): void {
    const now = this.now();
    if (this.opts.leading()) this.opts.apply(base, now);
    const last = this.written.get(base);
    if (last !== undefined && now - last < RECORD_EVERY_MS) return;
    this.written.set(base, now);
    void this.opts.redis.client.hSet(this.key, base, String(now)).catch(() => this.written.delete(base));
  }

  /** Starts reading the paid uses (applied while this replica leads). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async poll(): Promise<void> {
    const now = this.now();
    for (const [base, at] of this.written) if (now - at >= RECORD_EVERY_MS) this.written.delete(base);
    if (this.polling || !this.opts.leading()) return;
    this.polling = true;
    try {
      const all = await this.opts.redis.client.hGetAll(this.key);
      const stale: string[] = [];
      for (const [base, raw] of Object.entries(all)) {
        const at = Number(raw);
        if (!Number.isFinite(at) || now - at >= this.opts.holdMs) stale.push(base);
        else this.opts.apply(base, Math.min(at, now));
      }
      if (stale.length) await this.opts.redis.client.hDel(this.key, stale);
    } catch (err) {
      this.opts.log.debug({ err: (err as Error).message }, "streams: reading paid uses from redis failed (retried)");
    } finally {
      this.polling = false;
    }
  }
}
