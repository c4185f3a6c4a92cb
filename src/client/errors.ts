/*
 * The typed client's errors. Every error the service answers (`{error:{code,message,details}}` with a status ≥ 400)
 * becomes a {@link ServiceError}; a 402 the client could not or would not pay a {@link PaymentRequiredError}; a
 * charge over a spending cap a {@link SpendCapError}, raised before anything is signed.
 */

/** The base of every error the client throws, with a machine-readable `code`. */
export class MarketgateError extends Error {
  /** A service error code (`BAD_REQUEST`, `UNKNOWN_SYMBOL`, …) or one of the client's (`SPEND_CAP`, `NO_PAYER`, …). */
  readonly code: string;
  /** The service's `error.details`, or the client's own (see each subclass). */
  readonly details?: unknown;

  constructor(code: string, message: string, opts: { details?: unknown; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = "MarketgateError";
    this.code = code;
    this.details = opts.details;
  }
}

/** An error answer of the service: its HTTP status and `{error:{code,message,details}}` body. */
export class ServiceError extends MarketgateError {
  readonly status: number;
  /** Seconds the service asked to wait (`Retry-After`), when it said. */
  readonly retryAfterSec?: number;
  /** The answer's body as received (parsed JSON, or text). */
  readonly body: unknown;

  constructor(status: number, body: unknown, retryAfterSec?: number) {
    const e = errorOf(body);
    super(e?.code ?? `HTTP_${status}`, e?.message ?? `the service answered ${status}`, { details: e?.details });
    this.name = "ServiceError";
    this.status = status;
    this.body = body;
    this.retryAfterSec = retryAfterSec;
  }
}

/**
 * A 402 the client did not get past: no payer configured for the way the service asks to be paid, or the payment
 * (or the credits) refused. `reason` is the 402's `error` (`credits_insufficient_balance: …`, `invalid_siwx_nonce`, …).
 */
export class PaymentRequiredError extends ServiceError {
  readonly reason?: string;

  constructor(body: unknown, reason?: string) {
    super(402, body);
    this.name = "PaymentRequiredError";
    this.reason = reason ?? reason402(body);
    if (this.reason && this.code === "HTTP_402") Object.defineProperty(this, "message", { value: `payment required: ${this.reason}` });
  }
}

/** What a refused charge would have cost and which cap refused it (USD decimal strings). */
export interface SpendCapDetails {
  cap: "per_call" | "per_session";
  /** The charge asked for. */
  priceUsd: string;
  /** The cap's value. */
  limitUsd: string;
  /** Spent in this session so far (per-session refusals). */
  spentUsd: string;
}

/**
 * A charge over the per-call or per-session cap: refused before anything was signed, so nothing was charged.
 * Raise `maxUsdPerCall` / `maxUsdPerSession` (or a call's `maxUsd`) to allow it.
 */
export class SpendCapError extends MarketgateError {
  declare readonly details: SpendCapDetails;

  constructor(details: SpendCapDetails) {
    const which = details.cap === "per_call" ? "per-call cap" : `per-session cap (spent ${details.spentUsd} USD so far)`;
    super("SPEND_CAP", `${details.priceUsd} USD is over the ${which} of ${details.limitUsd} USD: nothing was charged`, { details });
    this.name = "SpendCapError";
  }
}

/** The `{code, message, details}` of an error body, if it is one. */
export function errorOf(body: unknown): { code: string; message: string; details?: unknown } | undefined {
  if (!body || typeof body !== "object" || !("error" in body)) return undefined;
  const e = (body as { error: unknown }).error;
  if (!e || typeof e !== "object") return undefined;
  const { code, message, details } = e as Record<string, unknown>;
  return typeof code === "string" && typeof message === "string" ? { code, message, details } : undefined;
}

/** The refusal reason of a 402 body: its x402 `error` string, or an error body's message. */
export function reason402(body: unknown): string | undefined {
  if (!body || typeof body !== "object" || !("error" in body)) return undefined;
  const e = (body as { error: unknown }).error;
  return typeof e === "string" ? e : errorOf(body)?.message;
}
