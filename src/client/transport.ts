import { microsToUsd, usdToMicros, type SpendBudget } from "./budget.js";
import { MPP_ACCEPT, MppPayer, SiwxSigner, X402Payer, type Network, type Quote, type Settlement, type Wallet } from "./payers.js";

/*
 * One HTTP request of the client, paid when the service asks: x402 or MPP (request unpaid, read the 402's price,
 * check it against the caps, sign, send again), or prepaid credits (a Sign-In-With-X proof or a session token on
 * the first request, the price known beforehand). The answer comes back whatever its status, with what it cost;
 * only a refused cap (SpendCapError) and a failure to sign throw here.
 */

/** How paid calls are paid: x402 per call, MPP per call, or from prepaid credits. */
export type PayMethod = "x402" | "mpp" | "credits";

/** What one answer cost. */
export interface Cost {
  /** `free`: nothing was charged (a free tool, a cache hit, an error, an unpaid 402). */
  method: "free" | PayMethod;
  /** USD charged, decimal (`"0"` when free). */
  usd: string;
  /** x402 / MPP: the settlement's network (CAIP-2), transaction hash and payer. */
  network?: string;
  transaction?: string;
  payer?: string;
  /** MPP: the decoded `Payment-Receipt`. */
  receipt?: unknown;
  /** Credits: the balance left after this call, USD. */
  creditsRemainingUsd?: string;
}

/** An answer as the transport got it. */
export interface RawResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the text of a non-JSON answer. */
  body: unknown;
  cost: Cost;
  /** Answered from the service's cache (`X-Cache: HIT`): free. */
  cacheHit: boolean;
}

/** One request. */
export interface SendOptions {
  method: string;
  /** Path with its query string, from the service's root. */
  path: string;
  /** A JSON body (an object, or JSON text). */
  body?: unknown;
  headers?: Record<string, string>;
  /** The price when known beforehand (micro-USD; `0n`: free). Credits need it: undefined asks `GET /api/v1/quote`. */
  priceMicros?: bigint;
  /** This call's per-call cap (USD), instead of the client's. */
  maxUsd?: string | number;
  /** Send a Sign-In-With-X proof (tools that act for a signed-in wallet). */
  signIn?: boolean;
  /** Pay this call another way than the client's default (a credits top-up cannot be paid from credits). */
  payWith?: PayMethod;
  signal?: AbortSignal;
}

/** What a {@link Transport} is built from. */
export interface TransportOptions {
  baseUrl: string;
  pay: PayMethod;
  network: Network;
  wallet: Wallet;
  budget: SpendBudget;
  fetch: typeof fetch;
  /** A credits session token to start with (`X-Credits-Session`). */
  creditsSession?: string;
}

const SESSION = "x-credits-session";

/** Reads a response body: JSON when it parses, else text. */
async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The client's HTTP transport: sends requests and pays for them within the budget. */
export class Transport {
  readonly x402: X402Payer;
  readonly mpp: MppPayer;
  readonly siwx: SiwxSigner;
  /** The latest credits session token the service gave (reused until it is refused). */
  session?: string;

  constructor(private readonly opts: TransportOptions) {
    this.x402 = new X402Payer(opts.wallet, opts.network);
    this.mpp = new MppPayer(opts.wallet);
    this.siwx = new SiwxSigner(opts.wallet, opts.network);
    this.session = opts.creditsSession;
  }

  /** How paid calls are paid by default. */
  get pay(): PayMethod {
    return this.opts.pay;
  }

  get baseUrl(): string {
    return this.opts.baseUrl;
  }

  get fetch(): typeof fetch {
    return this.opts.fetch;
  }

  /** Sends one request, paying as the client is set to (or as `o.payWith` says). */
  async send(o: SendOptions): Promise<RawResponse> {
    const url = `${this.opts.baseUrl}${o.path}`;
    const headers: Record<string, string> = { ...o.headers };
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
      headers["content-type"] ??= "application/json";
    }
    const init = { method: o.method, body, signal: o.signal };
    // A signed-in tool is free: its 402 means the proof was refused, which no payment answers.
    if (o.signIn) {
      if (this.siwx.ready) headers["SIGN-IN-WITH-X"] = await this.siwx.proof(url);
      return this.unpaid(url, init, headers);
    }
    const pay = o.payWith ?? this.opts.pay;
    if (pay !== "credits") return this.perCall(pay, url, init, headers, o.maxUsd);
    const price = o.priceMicros ?? (await this.quoteMicros(o.method, o.path, body));
    return price > 0n ? this.withCredits(url, init, headers, price, o.maxUsd) : this.unpaid(url, init, headers);
  }

  /** The request as it is, paying nothing. */
  private async unpaid(url: string, init: RequestInit, headers: Record<string, string>): Promise<RawResponse> {
    const res = await this.opts.fetch(url, { ...init, headers });
    return this.answer(res, await readBody(res));
  }

  /** x402 or MPP: the request unpaid, then, on a 402 this payer can pay within the caps, signed and sent again. */
  private async perCall(method: "x402" | "mpp", url: string, init: RequestInit, headers: Record<string, string>, maxUsd?: string | number): Promise<RawResponse> {
    const payer = method === "mpp" ? this.mpp : this.x402;
    // An MPP client names the method it pays with, so the 402 carries its challenge.
    const first = await this.opts.fetch(url, { ...init, headers: method === "mpp" ? { ...headers, "accept-payment": MPP_ACCEPT } : headers });
    const firstBody = await readBody(first);
    if (first.status !== 402 || !payer.ready) return this.answer(first, firstBody);
    const quote: Quote | undefined = method === "mpp" ? await this.mpp.quote(first) : await this.x402.quote(first, firstBody);
    if (!quote) return this.answer(first, firstBody);
    const held = this.opts.budget.reserve(quote.micros, maxUsd);
    let res: Response;
    let resBody: unknown;
    try {
      res = await this.opts.fetch(url, { ...init, headers: { ...headers, ...(await quote.sign()) } });
      resBody = await readBody(res);
    } catch (err) {
      // Signed but never answered: the payment may settle later; count it (a cap must not be passed by retrying).
      held.commit();
      throw err;
    }
    const settled: Settlement | undefined = method === "mpp" ? await this.mpp.settlement(res) : this.x402.settlement(res);
    if (!res.ok || res.headers.get("x-cache") === "HIT" || !settled) {
      held.release();
      return this.answer(res, resBody);
    }
    const micros = settled.micros ?? quote.micros;
    held.commit(micros);
    const { micros: _m, ...rest } = settled;
    return this.answer(res, resBody, { method, usd: microsToUsd(micros), ...rest });
  }

  /** Credits: the price reserved, a session token (else a fresh proof) on the first request; a refused token is replaced by a proof once. */
  private async withCredits(url: string, init: RequestInit, headers: Record<string, string>, price: bigint, maxUsd?: string | number): Promise<RawResponse> {
    const held = this.opts.budget.reserve(price, maxUsd);
    try {
      const attempt = async (session: string | undefined) => {
        const auth: Record<string, string> = session ? { "X-Credits-Session": session } : this.siwx.ready ? { "SIGN-IN-WITH-X": await this.siwx.proof(url) } : {};
        const res = await this.opts.fetch(url, { ...init, headers: { ...headers, ...auth } });
        return { res, body: await readBody(res) };
      };
      let { res, body } = await attempt(this.session);
      if (res.status === 402 && this.session && this.siwx.ready) {
        // The token expired or is for another origin: sign in again.
        this.session = undefined;
        ({ res, body } = await attempt(undefined));
      }
      this.session = res.headers.get(SESSION) ?? this.session;
      const remaining = res.headers.get("x-credits-remaining");
      if (!res.ok || res.headers.get("x-cache") === "HIT" || remaining === null) {
        held.release();
        return this.answer(res, body);
      }
      held.commit();
      return this.answer(res, body, { method: "credits", usd: microsToUsd(price), creditsRemainingUsd: remaining });
    } catch (err) {
      held.release();
      throw err;
    }
  }

  /** The price of a request from `GET /api/v1/quote` (free), micro-USD; `0n` when it would not be charged. */
  async quoteMicros(method: string, path: string, body?: string): Promise<bigint> {
    const q = new URLSearchParams({ path, method });
    if (body !== undefined) q.set("body", body);
    const res = await this.opts.fetch(`${this.opts.baseUrl}/api/v1/quote?${q}`);
    const answer = (await readBody(res)) as { charged?: boolean; price_usd?: string } | undefined;
    if (!res.ok || !answer) return 0n; // the request itself will tell what is wrong
    return answer.charged && answer.price_usd ? usdToMicros(answer.price_usd) : 0n;
  }

  /** An answer with its cost (free unless `cost` says otherwise). */
  private answer(res: Response, body: unknown, cost: Cost = { method: "free", usd: "0" }): RawResponse {
    return { status: res.status, headers: res.headers, body, cost, cacheHit: res.headers.get("x-cache") === "HIT" };
  }
}
