import { performance } from "node:perf_hooks";
import type { Logger } from "../lib/log.js";
import { evalScript, luaScript } from "./lua.js";
import { RECONNECT_MAX_DELAY_MS, type RedisHandle } from "./redis.js";

/**
 * ARGV: key, holder id, ttl ms. Renews the lease when it holds our id, takes it when nobody holds it
 * (absent or expired), else reports the holder's remaining lifetime. Returns {1, 0} renewed, {2, 0} set
 * (acquired, or taken back after it expired with nobody holding it), {0, pttl} held by another replica.
 */
const CLAIM = luaScript(`local v = redis.call('GET', ARGV[1])
if v == ARGV[2] then
  redis.call('PEXPIRE', ARGV[1], ARGV[3])
  return {1, 0}
elseif not v then
  redis.call('SET', ARGV[1], ARGV[2], 'PX', ARGV[3])
  return {2, 0}
end
return {0, redis.call('PTTL', ARGV[1])}`);
/** ARGV: key, holder id. Releases only our own lease (compare-and-delete). */
const RELEASE = luaScript(`if redis.call('GET', ARGV[1]) == ARGV[2] then return redis.call('DEL', ARGV[1]) else return 0 end`);

const RENEWED = 1;
const SET = 2;

/** A follower tries again this long after the holder's key is due to expire, ms. */
const ACQUIRE_SLACK_MS = 50;
/** A failed request (Redis unreachable) of a holder is retried after this, ms (at once on reconnection). */
const RETRY_MS = 250;
/** Clock-rate drift allowed between a replica and Redis, as a fraction of the TTL (real clocks: about 1e-4). */
const DRIFT_FRACTION = 0.01;
/** Event-loop delay allowed before a step-down takes effect, as a fraction of the TTL, at most {@link MAX_LOOP_ALLOWANCE_MS}. */
const LOOP_FRACTION = 0.2;
const MAX_LOOP_ALLOWANCE_MS = 1000;

/** Why a replica stops leading (see {@link LeaseOptions.onLose}). */
export type LeaseLoss = "expired" | "taken" | "stopped";

/** The schedule a lease of a given TTL follows; all in milliseconds. */
export interface LeaseTimings {
  ttlMs: number;
  /** The holder renews this long after sending its previous renewal (a third of the TTL). */
  renewEveryMs: number;
  /** Clock drift (1% of the TTL) plus event-loop delay (a fifth of the TTL, at most 1 s). */
  safetyMarginMs: number;
  /** A renewal keeps this replica leading until `sent at + validForMs` (TTL − margin). */
  validForMs: number;
  /** After Redis comes back, a follower waits this long before competing (the holder renews at once). */
  reconnectGraceMs: number;
  /**
   * Longest time from a holder's crash (no release) to a connected follower's acquisition: its key lives
   * at most one TTL after its last renewal, and followers try again {@link ACQUIRE_SLACK_MS} after it is
   * due to expire (plus the Redis round trip and the follower's event-loop delay).
   */
  takeoverAfterCrashMs: number;
  /** Longest time from a graceful stop (which releases the key) to a connected follower's acquisition. */
  takeoverAfterStopMs: number;
}

/** The {@link LeaseTimings} of a lease of `ttlMs`. */
export function leaseTimings(ttlMs: number): LeaseTimings {
  const safetyMarginMs = Math.ceil(ttlMs * DRIFT_FRACTION + Math.min(ttlMs * LOOP_FRACTION, MAX_LOOP_ALLOWANCE_MS));
  const renewEveryMs = Math.floor(ttlMs / 3);
  return {
    ttlMs,
    renewEveryMs,
    safetyMarginMs,
    validForMs: ttlMs - safetyMarginMs,
    reconnectGraceMs: RECONNECT_MAX_DELAY_MS + 500,
    takeoverAfterCrashMs: ttlMs + ACQUIRE_SLACK_MS,
    takeoverAfterStopMs: renewEveryMs,
  };
}

/** Options of {@link Lease}. */
export interface LeaseOptions {
  /** Lease name; the key is `<prefix>lease:<name>`. */
  name: string;
  /** This replica's identity (stored as the lease value); unique per running replica. */
  holderId: string;
  /** Lease lifetime in Redis (see {@link leaseTimings} for the schedule it implies). */
  ttlMs: number;
  /**
   * Called when this replica starts leading: it acquired the lease, or got it back after `onLose("expired")`
   * (renewed in time after all, or taken back because nobody held it). Called synchronously and not
   * awaited (renewals keep their schedule): serialise role changes in the callback's owner.
   */
  onAcquire: () => void | Promise<void>;
  /**
   * Called when it stops leading: `expired` (no renewal answered before the safety deadline, e.g. Redis
   * unreachable; the lease may come back with `onAcquire` if nobody else takes it), `taken` (another
   * replica holds it), `stopped` ({@link Lease.stop}). Called like `onAcquire`.
   */
  onLose: (reason: LeaseLoss) => void | Promise<void>;
  log: Logger;
}

/** The replica holding lease `name` (its `REPLICA_ID`), or null when nobody does. @throws when Redis is unreachable. */
export async function leaseHolder(redis: RedisHandle, name: string): Promise<string | null> {
  return redis.client.get(redis.key(`lease:${name}`));
}

/**
 * Leadership by a Redis lease: one script renews the key while it holds our id, sets it when nobody holds
 * it (so a holder whose renewal comes late, after the key expired with nobody else taking it, takes it
 * back instead of handing over), and otherwise reports when the holder's key expires, so followers try
 * again right then. The holder renews every third of the TTL and at once when Redis reconnects.
 *
 * Safety: a renewal sent at `t` (monotonic clock) keeps this replica leading until `t + TTL − margin`;
 * Redis processes it at or after `t`, so the key outlives that deadline by at least the margin and no
 * other replica can acquire before it. {@link isLeader} turns false at the deadline (and `onLose("expired")`
 * follows), so two replicas never both consider themselves leader while their clock rates differ by less
 * than the margin allows; work started before the deadline has the margin to finish. Commands are not
 * fenced: one held up in the network for longer than the margin can still land after another replica
 * acquired, so leaders' writes stay idempotent (absolute values, ids, atomic claims).
 *
 * Liveness: a crashed holder is replaced within `TTL + 50 ms` (plus round trip and event-loop delays) by a
 * connected follower; a stopped one (it releases) within a third of the TTL. While Redis is unreachable
 * nobody can acquire; after it comes back followers wait {@link LeaseTimings.reconnectGraceMs} before
 * competing while the previous holder renews at once, so an outage changes no leader when the holder
 * survives it (it may stop leading during the outage, past its deadline, and leads again once renewed).
 */
export class Lease {
  private readonly key: string;
  private readonly timings: LeaseTimings;
  private stopped = true;
  private leading = false;
  /** We held the key at our last contact with Redis (leading, or lapsed since): renew at once, no grace. */
  private holder = false;
  /** Monotonic time (performance.now) until which leading is safe. */
  private validUntil = 0;
  private timer?: NodeJS.Timeout;
  private deadline?: NodeJS.Timeout;
  private inFlight: { sentAt: number; done: Promise<void> } | null = null;
  /** A follower makes no attempt before this monotonic time (the reconnection grace). */
  private notBefore = 0;
  private offReady?: () => void;

  constructor(
    private readonly redis: RedisHandle,
    private readonly opts: LeaseOptions,
  ) {
    this.key = redis.key(`lease:${opts.name}`);
    this.timings = leaseTimings(opts.ttlMs);
  }

  /** True while this replica holds the lease and its last successful renewal's safety deadline is ahead. */
  get isLeader(): boolean {
    return this.leading && performance.now() < this.validUntil;
  }

  /** Starts competing (now, then on the schedule of {@link leaseTimings}, and on every reconnection). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.offReady = this.redis.onReady((reconnected) => this.reconnected(reconnected));
    void this.attempt();
  }

  /** Stops leading (`onLose("stopped")`) first, then releases the key if held, so another replica takes over within a third of the TTL. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.offReady?.();
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
    const wasLeading = this.leading;
    this.leading = false;
    if (wasLeading) this.lost("stopped");
    const f = this.inFlight;
    if (f) await Promise.race([f.done, new Promise((r) => setTimeout(r, this.timings.renewEveryMs))]);
    if (this.holder || wasLeading) await evalScript(this.redis.client, RELEASE, [this.key, this.opts.holderId]).catch(() => undefined);
    this.holder = false;
  }

  private reconnected(reconnected: boolean): void {
    if (this.stopped) return;
    if (reconnected && !this.leading && !this.holder) {
      // The holder (if it survived the outage) renews at once; give it the time to reconnect too.
      this.notBefore = performance.now() + this.timings.reconnectGraceMs;
      this.schedule(this.timings.reconnectGraceMs);
      return;
    }
    void this.attempt();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.attempt(), Math.max(0, delayMs));
    this.timer.unref();
  }

  private attempt(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const now = performance.now();
    if (!this.leading && !this.holder && now < this.notBefore) {
      this.schedule(this.notBefore - now);
      return Promise.resolve();
    }
    // One request at a time, unless the one in flight is older than a renewal period (a connection that stopped answering).
    if (this.inFlight && now - this.inFlight.sentAt < this.timings.renewEveryMs) return this.inFlight.done;
    clearTimeout(this.timer);
    const sentAt = now;
    const done = this.request(sentAt).finally(() => {
      if (this.inFlight?.sentAt === sentAt) this.inFlight = null;
    });
    this.inFlight = { sentAt, done };
    return done;
  }

  private async request(sentAt: number): Promise<void> {
    const { holderId, ttlMs } = this.opts;
    let next: number;
    try {
      const [status, pttl] = (await evalScript(this.redis.client, CLAIM, [this.key, holderId, String(ttlMs)])) as [number, number];
      if (status === RENEWED || status === SET) {
        const how = status === RENEWED ? (this.holder ? "renewed late" : "acquired") : this.holder ? "taken back (it expired; nobody held it)" : "acquired";
        this.holder = true; // before the stop check: stop() releases what we hold
        if (this.stopped) return;
        next = this.held(sentAt, how);
      } else {
        if (this.stopped) return;
        this.heldByOther();
        next = pttl >= 0 ? Math.min(this.timings.renewEveryMs, pttl + ACQUIRE_SLACK_MS) : this.timings.renewEveryMs;
      }
    } catch (err) {
      if (this.stopped) return;
      // Redis unreachable (commands fail fast while disconnected): the deadline timer steps down if it lasts;
      // a reconnection triggers an attempt at once.
      this.opts.log.debug?.({ err: (err as Error).message, lease: this.opts.name }, "lease request failed");
      next = this.leading || this.holder ? Math.min(RETRY_MS, this.timings.renewEveryMs) : this.timings.renewEveryMs;
    }
    this.schedule(next);
  }

  /** We hold the key as of `sentAt`: lead until its deadline. Returns the delay of the next renewal. */
  private held(sentAt: number, how: string): number {
    const now = performance.now();
    const until = sentAt + this.timings.validForMs;
    if (until <= now) return 0; // answered too late to lead on: ask again at once
    this.validUntil = Math.max(this.validUntil, until);
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.expired(), this.validUntil - now);
    this.deadline.unref();
    if (!this.leading) {
      this.leading = true;
      this.opts.log.info({ lease: this.opts.name, holder: this.opts.holderId, how }, "lease acquired");
      this.notify(() => this.opts.onAcquire());
    }
    return sentAt + this.timings.renewEveryMs - now;
  }

  private expired(): void {
    if (!this.leading || this.stopped) return;
    const left = this.validUntil - performance.now();
    if (left > 0) {
      this.deadline = setTimeout(() => this.expired(), left);
      this.deadline.unref();
      return;
    }
    this.leading = false;
    this.lost("expired");
    void this.attempt();
  }

  private heldByOther(): void {
    const wasLeading = this.leading;
    const wasHolder = this.holder;
    this.holder = false;
    if (wasLeading) {
      this.leading = false;
      clearTimeout(this.deadline);
      this.lost("taken");
    } else if (wasHolder) {
      this.opts.log.warn({ lease: this.opts.name }, "lease held by another replica after it lapsed here");
    }
  }

  private lost(reason: LeaseLoss): void {
    this.opts.log.warn({ lease: this.opts.name, reason }, "lease lost");
    this.notify(() => this.opts.onLose(reason));
  }

  private notify(fn: () => void | Promise<void>): void {
    const fail = (err: unknown) => this.opts.log.error({ err, lease: this.opts.name }, "lease callback failed");
    try {
      const r = fn();
      if (r instanceof Promise) r.catch(fail);
    } catch (err) {
      fail(err);
    }
  }
}
