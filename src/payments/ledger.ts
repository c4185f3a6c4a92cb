import { LRUCache } from "lru-cache";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";

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
  | { state: "pending"; value: unknown; payload: PaymentPayload; requirements: PaymentRequirements };

/** A request answered under a client's payment identifier (x402 `payment-identifier` extension). */
export interface IdempotentRecord {
  /** Tool + canonical input the identifier was first used for. */
  fingerprint: string;
  /** Present once the request completed (settled); until then the identifier is in flight. */
  result?: { value: unknown; receipt: SettleResponse };
}

/**
 * Exactly-once bookkeeping of payments, in process memory (the multi-replica store arrives with Redis).
 * Entries expire after `ttlMs`, which must outlive any authorization's validity window.
 */
export class PaymentLedger {
  private readonly authorizations: LRUCache<string, AuthorizationState>;
  private readonly idempotency: LRUCache<string, IdempotentRecord>;

  constructor(opts: { ttlMs: number; maxEntries?: number }) {
    const max = opts.maxEntries ?? 100_000;
    this.authorizations = new LRUCache({ max, ttl: opts.ttlMs });
    this.idempotency = new LRUCache({ max, ttl: opts.ttlMs });
  }

  /**
   * Claims an authorization for one request. Returns undefined when the claim succeeded (it is now
   * `in_flight`), or the state that blocks it.
   */
  claim(key: string): AuthorizationState | undefined {
    const existing = this.authorizations.get(key);
    if (existing) return existing;
    this.authorizations.set(key, { state: "in_flight" });
    return undefined;
  }

  /** Current state of an authorization, if known. */
  get(key: string): AuthorizationState | undefined {
    return this.authorizations.get(key);
  }

  /** Sets the state of an authorization. */
  set(key: string, state: AuthorizationState): void {
    this.authorizations.set(key, state);
  }

  /** Forgets an authorization that was never used on chain (handler failed, or verification refused it). */
  release(key: string): void {
    this.authorizations.delete(key);
  }

  /** Idempotency record of a payment identifier. */
  idempotent(id: string): IdempotentRecord | undefined {
    return this.idempotency.get(id);
  }

  /** Starts (or completes) the idempotency record of a payment identifier. */
  setIdempotent(id: string, record: IdempotentRecord): void {
    this.idempotency.set(id, record);
  }

  /** Drops an identifier whose request did not complete, so that the client may retry with it. */
  releaseIdempotent(id: string): void {
    this.idempotency.delete(id);
  }
}
