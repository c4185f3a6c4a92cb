import { createClient } from "redis";
import type { Logger } from "../lib/log.js";
import { registerSecretUrl } from "../lib/redact.js";

/** A node-redis client that fails fast while disconnected and reconnects by itself (100 ms × attempts, at most 2 s). */
function newClient(url: string) {
  return createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(100 * (retries + 1), 2000) },
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
      if (name === "main") this.opts.log.info("redis connected");
      this.wasReady = true;
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
