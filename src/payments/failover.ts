import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from "@x402/core/types";
import { logger } from "../lib/log.js";
import { redactUrl } from "../lib/redact.js";

/** Error codes meaning the request never reached the facilitator, so trying the next one is safe. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/** True when `err` shows the call never reached the facilitator (connection refused, DNS failure...). */
export function neverReached(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: string; message?: string };
    if ((code && NOT_SENT.has(code)) || message === "bad port") return true;
  }
  return false;
}

/** A named facilitator in a failover list. */
export interface NamedFacilitator {
  /** `self` or the facilitator's URL; logged with its path and query redacted (keys live there). */
  name: string;
  client: FacilitatorClient;
}

/**
 * Several facilitators behind one `FacilitatorClient`, tried in order.
 * - `getSupported` and `verify` (no side effects): any failure moves on to the next facilitator.
 * - `settle`: moves on only when the call never reached the facilitator. Any other failure (timeout,
 *   error after sending) may have broadcast the transfer, so it is rethrown as an unknown outcome for the
 *   payment processor to reconcile on chain; settling elsewhere could charge twice.
 */
export class FailoverFacilitatorClient implements FacilitatorClient {
  constructor(private readonly facilitators: readonly NamedFacilitator[]) {
    if (facilitators.length === 0) throw new Error("FailoverFacilitatorClient needs at least one facilitator");
  }

  private async each<T>(op: string, call: (c: FacilitatorClient) => Promise<T>, canRetry: (err: unknown) => boolean): Promise<T> {
    let last: unknown;
    for (const f of this.facilitators) {
      try {
        return await call(f.client);
      } catch (err) {
        last = err;
        if (!canRetry(err)) throw err;
        logger.warn({ facilitator: f.name.includes("://") ? redactUrl(f.name) : f.name, op, err }, "facilitator failed; trying the next one");
      }
    }
    throw last;
  }

  /** Supported kinds of the first facilitator that answers. */
  getSupported(): Promise<SupportedResponse> {
    return this.each(
      "supported",
      (c) => c.getSupported(),
      () => true,
    );
  }

  /** Verification by the first facilitator that answers. */
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return this.each(
      "verify",
      (c) => c.verify(payload, requirements),
      () => true,
    );
  }

  /** Settlement by the first reachable facilitator; see the class comment for why failures after sending are not retried. */
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    return this.each("settle", (c) => c.settle(payload, requirements), neverReached);
  }
}
