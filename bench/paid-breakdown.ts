/**
 * Where the time of an x402-paid request goes (bench/run.ts), measured around the service without
 * changing it: the client's fetch is timed per HTTP round trip (the 402, then the paid retry) and the
 * facilitator per call (verify: the signature check and the `eth_call` simulation; settle: its own
 * signature check, the transaction and its receipt). What is left of the paid round trip is the handler,
 * our payment bookkeeping and HTTP.
 */
import type { FacilitatorClient } from "@x402/core/server";
import { percentile } from "./report.js";

/** The phases of one paid request, ms. */
export interface PaidPhases {
  /** The unpaid request and its 402 answer. */
  challenge: number;
  /** From the 402 to the paid retry: the client signs the EIP-3009 authorization. */
  sign: number;
  /** The facilitator's verify. */
  verify: number;
  /** The facilitator's settle. */
  settle: number;
  /** The paid round trip less verify and settle. */
  rest: number;
}

/** Headers that carry an x402 payment on the retry. */
const PAYMENT_HEADERS = ["payment-signature", "x-payment"];

/** Records {@link PaidPhases} per request while {@link record} runs; passes everything through unchanged. */
export class PaidBreakdown {
  private recording = false;
  private current: Partial<PaidPhases> = {};
  private challengeEnd = 0;
  private readonly samples: PaidPhases[] = [];

  /** A fetch for the paying client: times the 402 round trip, the signing gap and the paid round trip. */
  readonly fetch: typeof fetch = async (input, init) => {
    const started = performance.now();
    const res = await fetch(input, init);
    if (!this.recording) return res;
    const ms = performance.now() - started;
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (!PAYMENT_HEADERS.some((h) => headers.has(h))) {
      this.current = { challenge: ms };
      this.challengeEnd = performance.now();
    } else {
      const { challenge = 0, verify = 0, settle = 0 } = this.current;
      this.samples.push({ challenge, sign: started - this.challengeEnd, verify, settle, rest: ms - verify - settle });
    }
    return res;
  };

  /** `f` with its verify and settle calls timed into the request being recorded. */
  wrapFacilitator(f: FacilitatorClient): FacilitatorClient {
    const timed =
      <A extends unknown[], R>(phase: "verify" | "settle", call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        const started = performance.now();
        try {
          return await call(...args);
        } finally {
          if (this.recording) this.current[phase] = (this.current[phase] ?? 0) + performance.now() - started;
        }
      };
    return {
      verify: timed("verify", (p, r) => f.verify(p, r)),
      settle: timed("settle", (p, r) => f.settle(p, r)),
      getSupported: () => f.getSupported(),
    };
  }

  /** Runs `fn`, recording the phases of the paid requests it makes (one at a time). */
  async record<T>(fn: () => Promise<T>): Promise<T> {
    this.recording = true;
    try {
      return await fn();
    } finally {
      this.recording = false;
    }
  }

  /** The median of each phase over the recorded requests, ms (2 decimals). */
  medians(): PaidPhases {
    const p50 = (k: keyof PaidPhases) =>
      +percentile(
        this.samples.map((s) => s[k]).sort((a, b) => a - b),
        50,
      ).toFixed(2);
    return { challenge: p50("challenge"), sign: p50("sign"), verify: p50("verify"), settle: p50("settle"), rest: p50("rest") };
  }
}
