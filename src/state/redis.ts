import { createClient } from "redis";
import type { Logger } from "../lib/log.js";
import { registerSecretUrl } from "../lib/redact.js";

/** Longest wait between two reconnection attempts, ms (the backoff is 100 ms × attempts up to this). */
export const RECONNECT_MAX_DELAY_MS = 2000;

/** A node-redis client that fails fast while disconnected and reconnects by itself (100 ms × attempts, at most 2 s). */
function newClient(url: string) {
  return createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(100 * (retries + 1), RECONNECT_MAX_DELAY_MS) },
  });
}

/** A node-redis client as {@link RedisHandle} creates them. */
export type Redis = ReturnType<typeof newClient>;

/** Options of {@link connectRedis}. */
export interface RedisOptions {
  url: string;
  /** Prefix of every key this service writes (default `mg:`), so one Redis can host several deployments. */
  prefix: string;
  log: Logger;
}

/**
 * The shared Redis of a multi-replica deployment (`REDIS_URL`). Commands fail fast while disconnected
 * (no offline queue), so callers fall back (cache, rate limit) or refuse (alert writes: 503) instead of
 * hanging; the client reconnects by itself with a capped backoff (100 ms × attempts, at most 2 s).
 */
export class RedisHandle {
  readonly client: Redis;
  readonly prefix: string;
  private readonly extra: Redis[] = [];
  private wasReady = false;
  private mainReadyCount = 0;
  private readonly readyListeners = new Set<(reconnected: boolean) => void>();

  constructor(private readonly opts: RedisOptions) {
    // The URL may carry the password (redis://:password@host); node-redis errors may echo it.
    registerSecretUrl(opts.url);
    this.prefix = opts.prefix;
    this.client = this.create("main");
  }

  private create(name: string): Redis {
    const c = newClient(this.opts.url);
    c.on("error", (err: Error) => {
      if (this.wasReady) this.opts.log.warn({ err: err.message, client: name }, "redis error");
    });
    c.on("ready", () => {
      this.wasReady = true;
      if (name !== "main") return;
      this.opts.log.info("redis connected");
      const reconnected = ++this.mainReadyCount > 1;
      for (const fn of this.readyListeners) {
        try {
          fn(reconnected);
        } catch (err) {
          this.opts.log.error({ err }, "redis ready listener failed");
        }
      }
    });
    return c;
  }

  /** Starts connecting (the service starts even while Redis is down; reads of `ready` tell). */
  start(): void {
    this.client.connect().catch((err: unknown) => this.opts.log.warn({ err }, "redis connect failed; retrying"));
  }

  /** Resolves once connected, or rejects after `timeoutMs`. */
  async waitReady(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.client.isReady) {
      if (Date.now() > deadline) throw new Error(`redis not ready after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** True while the main connection is usable. */
  get ready(): boolean {
    return this.client.isReady;
  }

  /**
   * Calls `fn` each time the main connection becomes usable: `reconnected` is false on the first connection
   * and true after every loss (e.g. a lease renews at once rather than at its next tick). Returns the unsubscribe.
   */
  onReady(fn: (reconnected: boolean) => void): () => void {
    this.readyListeners.add(fn);
    return () => this.readyListeners.delete(fn);
  }

  /** A separate connection (for blocking reads), connected in the background and closed with this handle. */
  connection(name: string): Redis {
    const c = this.create(name);
    this.extra.push(c);
    c.connect().catch(() => undefined);
    return c;
  }

  /** `prefix + name`. */
  key(name: string): string {
    return `${this.prefix}${name}`;
  }

  /** Closes every connection. */
  async close(): Promise<void> {
    await Promise.all([this.client, ...this.extra].map((c) => (c.isOpen ? c.close().catch(() => c.destroy()) : undefined)));
  }
}
