import { LRUCache } from "lru-cache";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { AppError } from "../errors.js";
import type { RedisHandle } from "../state/redis.js";

/** State of one signed authorization (payer + nonce) as this service has seen it. */
export type AuthorizationState =
  /** A request holding it is verifying or running the handler; concurrent uses are refused. */
  | { state: "in_flight" }
  /** Settled on chain; further uses are refused without asking the facilitator. */
  | { state: "settled"; receipt: SettleResponse }
  /**
   * Settlement was attempted but its outcome is unknown (timeout, lost answer). The answer is kept so that
   * the first request that finds the transfer confirmed gets it, exactly once.
   */
  | { state: "pending"; value: unknown; payload: PaymentPayload; requirements: PaymentRequirements }
  /**
   * Settled before an `upfront` handler that then failed: the service owes one run of the same request
   * (`fingerprint`), which a retry with the same authorization gets without a new charge.
   */
  | PrepaidState;

/** See {@link AuthorizationState}. */
export interface PrepaidState {
  state: "prepaid";
  fingerprint: string;
  /** Digest of the signed payload that paid: only the same payload takes the owed run. */
  digest: string;
  receipt: SettleResponse;
}

/** A request answered under a client's payment identifier (x402 `payment-identifier` extension). */
export interface IdempotentRecord {
  /** Tool + canonical input the identifier was first used for. */
  fingerprint: string;
  /**
   * Digest of the signed payload that first used the identifier: a retry with the same payload proves the
   * payer; another payload must verify. Absent on records written before digests existed.
   */
  digest?: string;
  /** Present once the request completed (settled); until then the identifier is in flight. */
  result?: { value: unknown; receipt: SettleResponse };
}

/**
 * Exactly-once bookkeeping of payments. Entries expire after the ledger's TTL, which must outlive any
 * authorization's validity window. Two implementations: {@link MemoryPaymentLedger} (one process) and
 * {@link RedisPaymentLedger} (shared by every replica, so one authorization runs the handler once across
 * all of them). Every method rejects with `AppError UPSTREAM_UNAVAILABLE` when the store is unreachable:
 * a payment that cannot be recorded is not accepted (nothing is charged).
 */
export interface PaymentLedger {
  /**
   * Claims an authorization for one request, atomically. Resolves undefined when the claim succeeded (it
   * is now `in_flight`), or with the state that blocks it.
   */
  claim(key: string): Promise<AuthorizationState | undefined>;
  /** Sets the state of an authorization. */
  set(key: string, state: AuthorizationState): Promise<void>;
  /** Forgets an authorization that was never used on chain (handler failed, or verification refused it). */
  release(key: string): Promise<void>;
  /** Idempotency record of a payment identifier. */
  idempotent(id: string): Promise<IdempotentRecord | undefined>;
  /** Starts (or completes) the idempotency record of a payment identifier. */
  setIdempotent(id: string, record: IdempotentRecord): Promise<void>;
  /** Drops an identifier whose request did not complete, so that the client may retry with it. */
  releaseIdempotent(id: string): Promise<void>;
  /**
   * Atomically takes the run owed for a `prepaid` authorization: when `key` is prepaid for `fingerprint`
   * it becomes `in_flight` and its state is returned; otherwise undefined and nothing changes.
   */
  takePrepaid(key: string, fingerprint: string): Promise<PrepaidState | undefined>;
}

/** The ledger in process memory (embedded mode): LRU maps with a TTL. */
export class MemoryPaymentLedger implements PaymentLedger {
  private readonly authorizations: LRUCache<string, AuthorizationState>;
  private readonly idempotency: LRUCache<string, IdempotentRecord>;

  constructor(opts: { ttlMs: number; maxEntries?: number }) {
    const max = opts.maxEntries ?? 100_000;
    this.authorizations = new LRUCache({ max, ttl: opts.ttlMs });
    this.idempotency = new LRUCache({ max, ttl: opts.ttlMs });
  }

  async claim(key: string): Promise<AuthorizationState | undefined> {
    const existing = this.authorizations.get(key);
    if (existing) return existing;
    this.authorizations.set(key, { state: "in_flight" });
    return undefined;
  }

  async set(key: string, state: AuthorizationState): Promise<void> {
    this.authorizations.set(key, state);
  }

  async release(key: string): Promise<void> {
    this.authorizations.delete(key);
  }

  async idempotent(id: string): Promise<IdempotentRecord | undefined> {
    return this.idempotency.get(id);
  }

  async setIdempotent(id: string, record: IdempotentRecord): Promise<void> {
    this.idempotency.set(id, record);
  }

  async releaseIdempotent(id: string): Promise<void> {
    this.idempotency.delete(id);
  }

  async takePrepaid(key: string, fingerprint: string): Promise<PrepaidState | undefined> {
    const s = this.authorizations.get(key);
    if (s?.state !== "prepaid" || s.fingerprint !== fingerprint) return undefined;
    this.authorizations.set(key, { state: "in_flight" });
    return s;
  }
}

/** Compare-and-set of {@link PaymentLedger.takePrepaid} in Redis (the TTL is kept). */
const TAKE_PREPAID = `
local v = redis.call('GET', KEYS[1])
if not v then return false end
local s = cjson.decode(v)
if s.state ~= 'prepaid' or s.fingerprint ~= ARGV[1] then return false end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return v
`;

/**
 * The ledger in Redis (multi-replica mode): one key per authorization (`<prefix>pay:auth:<key>`) and per
 * payment identifier (`<prefix>pay:id:<id>`), JSON values with the ledger TTL. `claim` is `SET NX`, so
 * of concurrent requests on any replicas exactly one wins.
 */
export class RedisPaymentLedger implements PaymentLedger {
  constructor(
    private readonly redis: RedisHandle,
    private readonly ttlMs: number,
  ) {}

  private async run<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      throw new AppError("UPSTREAM_UNAVAILABLE", "the payment ledger (Redis) is unreachable, so the payment cannot be recorded exactly once; nothing was charged", {
        retryAfterSec: 5,
        cause: err,
      });
    }
  }

  private k(kind: "auth" | "id", key: string): string {
    return this.redis.key(`pay:${kind}:${key}`);
  }

  claim(key: string): Promise<AuthorizationState | undefined> {
    return this.run(async () => {
      const c = this.redis.client;
      const ok = await c.set(this.k("auth", key), JSON.stringify({ state: "in_flight" }), { condition: "NX", expiration: { type: "PX", value: this.ttlMs } });
      if (ok === "OK") return undefined;
      const existing = await c.get(this.k("auth", key));
      // Expired between the two calls: claim again.
      return existing ? (JSON.parse(existing) as AuthorizationState) : this.claim(key);
    });
  }

  set(key: string, state: AuthorizationState): Promise<void> {
    return this.run(async () => void (await this.redis.client.set(this.k("auth", key), JSON.stringify(state), { expiration: { type: "PX", value: this.ttlMs } })));
  }

  release(key: string): Promise<void> {
    return this.run(async () => void (await this.redis.client.del(this.k("auth", key))));
  }

  idempotent(id: string): Promise<IdempotentRecord | undefined> {
    return this.run(async () => {
      const v = await this.redis.client.get(this.k("id", id));
      return v ? (JSON.parse(v) as IdempotentRecord) : undefined;
    });
  }

  setIdempotent(id: string, record: IdempotentRecord): Promise<void> {
    return this.run(async () => void (await this.redis.client.set(this.k("id", id), JSON.stringify(record), { expiration: { type: "PX", value: this.ttlMs } })));
  }

  releaseIdempotent(id: string): Promise<void> {
    return this.run(async () => void (await this.redis.client.del(this.k("id", id))));
  }

  takePrepaid(key: string, fingerprint: string): Promise<PrepaidState | undefined> {
    return this.run(async () => {
      const v = await this.redis.client.eval(TAKE_PREPAID, { keys: [this.k("auth", key)], arguments: [fingerprint, JSON.stringify({ state: "in_flight" })] });
      return typeof v === "string" ? (JSON.parse(v) as PrepaidState) : undefined;
    });
  }
}
