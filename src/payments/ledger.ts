import { LRUCache } from "lru-cache";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { AppError } from "../errors.js";
import type { RedisHandle } from "../state/redis.js";
import type { PaymentRequest } from "./outcomes.js";

/**
 * The request a held or stored answer belongs to (see `PaymentRequest`): only a retry of that very request
 * receives it. `target` is absent on records written before answers were bound to their request line:
 * those are matched by `fingerprint` alone, as they were written, until the ledger TTL drops them.
 */
export interface RequestBinding {
  /** Tool + canonical input (the parsed query, path and body). */
  fingerprint: string;
  /** `<METHOD> <absolute URL>` (path and query as sent): the request line a receipt names. */
  target?: string;
}

/** The binding a record of `r` stores. */
export function bindingOf(r: Pick<PaymentRequest, "fingerprint" | "target">): RequestBinding {
  return { fingerprint: r.fingerprint, target: r.target };
}

/**
 * Whether `r` is the request a record was written for: same fingerprint, and same request line when the
 * record has one. A record with no fingerprint (a pending answer written before answers were bound)
 * matches any request, as it did then.
 */
export function isBoundTo(record: Partial<RequestBinding>, r: Pick<PaymentRequest, "fingerprint" | "target">): boolean {
  if (record.fingerprint === undefined) return true;
  return record.fingerprint === r.fingerprint && (record.target === undefined || record.target === r.target);
}

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
  | PendingState
  /**
   * Settled before an `upfront` handler that then failed: the service owes one run of the same request
   * (its {@link RequestBinding}), which a retry with the same authorization gets without a new charge.
   */
  | PrepaidState;

/**
 * See {@link AuthorizationState}. The binding names the request whose answer (or owed run) is held; absent
 * on states written before answers were bound (an owed run's fingerprint is then in `value`).
 */
export interface PendingState extends Partial<RequestBinding> {
  state: "pending";
  value: unknown;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  /**
   * Set while one retry reconciles it (epoch ms): until then, other retries are refused as in use. A
   * retry may take it over after this time (its reconciler crashed); compare-and-set keeps the two apart.
   */
  reconcilingUntilMs?: number;
}

/** See {@link AuthorizationState}. */
export interface PrepaidState extends RequestBinding {
  state: "prepaid";
  /** Digest of the signed payload that paid: only the same payload takes the owed run. */
  digest: string;
  receipt: SettleResponse;
}

/**
 * A request answered under a client's payment identifier (x402 `payment-identifier` extension, or a SIWX
 * `requestId`); its binding is the request the identifier was first used for.
 */
export interface IdempotentRecord extends RequestBinding {
  /**
   * Digest of the signed payload that first used the identifier: a retry with the same payload proves the
   * payer; another payload must verify. Absent on records written before digests existed.
   */
  digest?: string;
  /** Present once the request completed (settled); until then the identifier is in flight. */
  result?: { value: unknown; receipt: SettleResponse };
}

/**
 * A paid answer kept for a retry of its request with the same signed payment, when the first answer was lost on
 * its way after the settlement (a proxy's 502, a dropped connection): bound to that request, and given only to
 * the very same signed payload (`digest`), never to a new signature of the payer.
 */
export interface KeptAnswer extends RequestBinding {
  /** Digest of the signed payload that paid (see `checkPaymentPayload`). */
  digest: string;
  value: unknown;
  receipt: SettleResponse;
}

/** How long a paid answer is kept for a retry with the same payment, ms. */
export const KEPT_ANSWER_TTL_MS = 15 * 60_000;
/** The largest answer kept (its JSON), bytes: a larger one is not kept, and a retry of it gets the 402 of a used payment. */
export const MAX_KEPT_ANSWER_BYTES = 256 * 1024;
/** The answers a {@link MemoryPaymentLedger} keeps at most, bytes of JSON (least recently written dropped first). */
const MAX_KEPT_ANSWERS_BYTES = 64 * 1024 * 1024;

/** The JSON a kept answer is stored as, or undefined when it is over {@link MAX_KEPT_ANSWER_BYTES} (not kept). */
function keptJson(answer: KeptAnswer): string | undefined {
  const json = JSON.stringify(answer);
  return Buffer.byteLength(json) <= MAX_KEPT_ANSWER_BYTES ? json : undefined;
}

/**
 * Exactly-once bookkeeping of payments. Entries expire after the ledger's TTL (counted from their last
 * write), which must outlive any authorization's validity window. Every change of state that decides who
 * runs a handler or receives a stored answer is atomic (`claim`, `claimIdempotent`, `compareAndSet`), so
 * concurrent requests never both win; plain `set` is only for the request that holds the state. Two
 * implementations: {@link MemoryPaymentLedger} (one process) and {@link RedisPaymentLedger} (shared by
 * every replica, so one authorization runs the handler once across all of them). Every method rejects with `AppError UPSTREAM_UNAVAILABLE` when the store is unreachable:
 * a payment that cannot be recorded is not accepted (nothing is charged).
 */
export interface PaymentLedger {
  /**
   * Claims an authorization for one request, atomically. Resolves undefined when the claim succeeded (it
   * is now `in_flight`), or with the state that blocks it.
   */
  claim(key: string): Promise<AuthorizationState | undefined>;
  /** Sets the state of an authorization (only for the request that holds it: see `compareAndSet`). */
  set(key: string, state: AuthorizationState): Promise<void>;
  /**
   * Compare-and-set: when the authorization's state is exactly `expected` (the same JSON, as `claim`
   * returned it), replaces it with `next` (deletes it when `next` is undefined) and resolves true;
   * otherwise changes nothing and resolves false. Of concurrent callers expecting one state, exactly one wins.
   */
  compareAndSet(key: string, expected: AuthorizationState, next: AuthorizationState | undefined): Promise<boolean>;
  /** Forgets an authorization that was never used on chain (handler failed, or verification refused it). */
  release(key: string): Promise<void>;
  /** Idempotency record of a payment identifier. */
  idempotent(id: string): Promise<IdempotentRecord | undefined>;
  /**
   * Starts the idempotency record of a payment identifier, atomically: resolves undefined when this call
   * created it, or with the record that exists already (nothing changes).
   */
  claimIdempotent(id: string, record: IdempotentRecord): Promise<IdempotentRecord | undefined>;
  /** Writes (completes) the idempotency record of a payment identifier. */
  setIdempotent(id: string, record: IdempotentRecord): Promise<void>;
  /** Drops an identifier whose request did not complete, so that the client may retry with it. */
  releaseIdempotent(id: string): Promise<void>;
  /**
   * Keeps the answer of a settled authorization for {@link KEPT_ANSWER_TTL_MS}, unless it is over
   * {@link MAX_KEPT_ANSWER_BYTES} (then nothing is kept).
   */
  keepAnswer(key: string, answer: KeptAnswer): Promise<void>;
  /** The kept answer of a settled authorization, if still kept. */
  keptAnswer(key: string): Promise<KeptAnswer | undefined>;
}

/** Whether two states are the same (compared as the JSON the ledgers store). */
function sameState(a: AuthorizationState, b: AuthorizationState): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** The ledger in process memory (embedded mode): LRU maps with a TTL. */
export class MemoryPaymentLedger implements PaymentLedger {
  private readonly authorizations: LRUCache<string, AuthorizationState>;
  private readonly idempotency: LRUCache<string, IdempotentRecord>;
  /** Kept answers as JSON, bounded in bytes (`maxAnswerBytes`). */
  private readonly answers: LRUCache<string, string>;

  constructor(opts: { ttlMs: number; maxEntries?: number; maxAnswerBytes?: number }) {
    const max = opts.maxEntries ?? 100_000;
    this.authorizations = new LRUCache({ max, ttl: opts.ttlMs });
    this.idempotency = new LRUCache({ max, ttl: opts.ttlMs });
    this.answers = new LRUCache({ maxSize: opts.maxAnswerBytes ?? MAX_KEPT_ANSWERS_BYTES, sizeCalculation: (json) => json.length, ttl: KEPT_ANSWER_TTL_MS });
  }

  // One process, one thread: each method below reads and writes without yielding, so it is atomic.
  async claim(key: string): Promise<AuthorizationState | undefined> {
    const existing = this.authorizations.get(key);
    if (existing) return existing;
    this.authorizations.set(key, { state: "in_flight" });
    return undefined;
  }

  async set(key: string, state: AuthorizationState): Promise<void> {
    this.authorizations.set(key, state);
  }

  async compareAndSet(key: string, expected: AuthorizationState, next: AuthorizationState | undefined): Promise<boolean> {
    const current = this.authorizations.get(key);
    if (current === undefined || !sameState(current, expected)) return false;
    if (next) this.authorizations.set(key, next);
    else this.authorizations.delete(key);
    return true;
  }

  async release(key: string): Promise<void> {
    this.authorizations.delete(key);
  }

  async idempotent(id: string): Promise<IdempotentRecord | undefined> {
    return this.idempotency.get(id);
  }

  async claimIdempotent(id: string, record: IdempotentRecord): Promise<IdempotentRecord | undefined> {
    const existing = this.idempotency.get(id);
    if (existing) return existing;
    this.idempotency.set(id, record);
    return undefined;
  }

  async setIdempotent(id: string, record: IdempotentRecord): Promise<void> {
    this.idempotency.set(id, record);
  }

  async releaseIdempotent(id: string): Promise<void> {
    this.idempotency.delete(id);
  }

  async keepAnswer(key: string, answer: KeptAnswer): Promise<void> {
    const json = keptJson(answer);
    if (json) this.answers.set(key, json);
  }

  async keptAnswer(key: string): Promise<KeptAnswer | undefined> {
    const json = this.answers.get(key);
    return json ? (JSON.parse(json) as KeptAnswer) : undefined;
  }
}

/**
 * {@link PaymentLedger.compareAndSet} in Redis: KEYS[1] the authorization, ARGV[1] the expected JSON,
 * ARGV[2] the new JSON ('' deletes), ARGV[3] the TTL in ms. Returns 1 when it swapped, 0 otherwise.
 */
const COMPARE_AND_SET = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1
`;

/**
 * The ledger in Redis (multi-replica mode): one key per authorization (`<prefix>pay:auth:<key>`) and per
 * payment identifier (`<prefix>pay:id:<id>`), JSON values with the ledger TTL; kept answers under
 * `<prefix>pay:answer:<key>` for {@link KEPT_ANSWER_TTL_MS}. `claim` and
 * `claimIdempotent` are `SET NX` and `compareAndSet` a Lua script, so of concurrent requests on any
 * replicas exactly one wins.
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

  private k(kind: "auth" | "id" | "answer", key: string): string {
    return this.redis.key(`pay:${kind}:${key}`);
  }

  /** `SET NX` of `value` at `key`: undefined when set, else the value already there (parsed). */
  private async setIfAbsent<T>(key: string, value: unknown): Promise<T | undefined> {
    const c = this.redis.client;
    for (;;) {
      const ok = await c.set(key, JSON.stringify(value), { condition: "NX", expiration: { type: "PX", value: this.ttlMs } });
      if (ok === "OK") return undefined;
      const existing = await c.get(key);
      // Absent only when it expired between the two calls: try again.
      if (existing) return JSON.parse(existing) as T;
    }
  }

  claim(key: string): Promise<AuthorizationState | undefined> {
    return this.run(() => this.setIfAbsent<AuthorizationState>(this.k("auth", key), { state: "in_flight" }));
  }

  set(key: string, state: AuthorizationState): Promise<void> {
    return this.run(async () => void (await this.redis.client.set(this.k("auth", key), JSON.stringify(state), { expiration: { type: "PX", value: this.ttlMs } })));
  }

  compareAndSet(key: string, expected: AuthorizationState, next: AuthorizationState | undefined): Promise<boolean> {
    return this.run(async () => {
      // `expected` was parsed from the stored JSON: serialized again, it is the very same string.
      const args = [JSON.stringify(expected), next ? JSON.stringify(next) : "", String(this.ttlMs)];
      return (await this.redis.client.eval(COMPARE_AND_SET, { keys: [this.k("auth", key)], arguments: args })) === 1;
    });
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

  claimIdempotent(id: string, record: IdempotentRecord): Promise<IdempotentRecord | undefined> {
    return this.run(() => this.setIfAbsent<IdempotentRecord>(this.k("id", id), record));
  }

  setIdempotent(id: string, record: IdempotentRecord): Promise<void> {
    return this.run(async () => void (await this.redis.client.set(this.k("id", id), JSON.stringify(record), { expiration: { type: "PX", value: this.ttlMs } })));
  }

  releaseIdempotent(id: string): Promise<void> {
    return this.run(async () => void (await this.redis.client.del(this.k("id", id))));
  }

  keepAnswer(key: string, answer: KeptAnswer): Promise<void> {
    const json = keptJson(answer);
    if (!json) return Promise.resolve();
    return this.run(async () => void (await this.redis.client.set(this.k("answer", key), json, { expiration: { type: "PX", value: KEPT_ANSWER_TTL_MS } })));
  }

  keptAnswer(key: string): Promise<KeptAnswer | undefined> {
    return this.run(async () => {
      const v = await this.redis.client.get(this.k("answer", key));
      return v ? (JSON.parse(v) as KeptAnswer) : undefined;
    });
  }
}
