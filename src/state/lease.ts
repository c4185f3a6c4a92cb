import type { Logger } from "../lib/log.js";
import type { RedisHandle } from "./redis.js";

/** Renews only while we still hold the lease (compare-and-expire). */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
/** Releases only our own lease (compare-and-delete). */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** Options of {@link Lease}. */
export interface LeaseOptions {
  /** Lease name; the key is `<prefix>lease:<name>`. */
  name: string;
  /** This replica's identity (stored as the lease value). */
  holderId: string;
  /** Lease lifetime; renewed every third of it. A dead leader is replaced within this time. */
  ttlMs: number;
  /** Called when this replica becomes the leader. */
  onAcquire: () => void | Promise<void>;
  /** Called when it stops being the leader (lost, expired while Redis was unreachable, or released). */
  onLose: () => void | Promise<void>;
  log: Logger;
}

/** The replica holding lease `name` (its `REPLICA_ID`), or null when nobody does. @throws when Redis is unreachable. */
export async function leaseHolder(redis: RedisHandle, name: string): Promise<string | null> {
  return redis.client.get(redis.key(`lease:${name}`));
}

/**
 * Leadership by a Redis lease (`SET key id NX PX ttl`, renewed by compare-and-expire every ttl/3). At most
 * one replica holds it; when the holder dies, another acquires it within the TTL. A holder that cannot
 * renew (Redis unreachable) gives leadership up once the TTL has passed since its last renewal, so two
 * replicas never lead at once for longer than clock drift.
 */
export class Lease {
  private timer?: NodeJS.Timeout;
  private leading = false;
  private renewedAt = 0;
  private stopped = true;
  private readonly key: string;

  constructor(
    private readonly redis: RedisHandle,
    private readonly opts: LeaseOptions,
  ) {
    this.key = redis.key(`lease:${opts.name}`);
  }

  /** True while this replica holds the lease. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts trying to acquire (immediately, then every ttl/3). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.tick();
  }

  private schedule(): void {
    if (this.stopped) return;
    // While Redis is still connecting (start-up, reconnect), try again soon rather than a third of the TTL later.
    const every = Math.floor(this.opts.ttlMs / 3);
    this.timer = setTimeout(() => void this.tick(), Math.max(50, this.redis.ready || this.leading ? every : Math.min(250, every)));
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const { holderId, ttlMs } = this.opts;
    const c = this.redis.client;
    try {
      if (this.leading) {
        const ok = Number(await c.eval(RENEW, { keys: [this.key], arguments: [holderId, String(ttlMs)] }));
        if (ok === 1) this.renewedAt = Date.now();
        else await this.lose("lease taken by another replica");
      } else if ((await c.set(this.key, holderId, { condition: "NX", expiration: { type: "PX", value: ttlMs } })) === "OK") {
        this.leading = true;
        this.renewedAt = Date.now();
        this.opts.log.info({ lease: this.opts.name, holder: holderId }, "lease acquired");
        await this.opts.onAcquire();
      }
    } catch (err) {
      if (this.leading && Date.now() - this.renewedAt >= ttlMs) await this.lose("lease could not be renewed (redis unreachable)");
      else if (!this.leading) this.opts.log.debug?.({ err }, "lease attempt failed");
    }
    this.schedule();
  }

  private async lose(reason: string): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    this.opts.log.warn({ lease: this.opts.name, reason }, "lease lost");
    try {
      await this.opts.onLose();
    } catch (err) {
      this.opts.log.error({ err }, "lease onLose failed");
    }
  }

  /** Stops renewing and releases the lease if held (another replica takes over at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.leading) {
      await this.redis.client.eval(RELEASE, { keys: [this.key], arguments: [this.opts.holderId] }).catch(() => undefined);
      await this.lose("stopped");
    }
  }
}
