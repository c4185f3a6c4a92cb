import { microsToUsd, SpendBudget } from "./budget.js";
import { PaymentRequiredError, ServiceError } from "./errors.js";
import type { Network, Wallet } from "./payers.js";
import { priceMicros, routeOf, toolRequest } from "./requests.js";
import type { ToolRoute } from "./routes.js";
import { openStream, type LiveStream, type StreamOptions, type StreamTopic } from "./stream.js";
import { TOOL_ROUTES, type ToolTypes } from "./tools.generated.js";
import { Transport, type Cost, type PayMethod, type RawResponse } from "./transport.js";

/** A registry tool's name. */
export type ToolName = keyof ToolTypes;
/** What a tool takes, as sent (fields with defaults optional). */
export type ToolInput<K extends ToolName> = ToolTypes[K]["input"];
/** What a tool answers. */
export type ToolOutput<K extends ToolName> = ToolTypes[K]["output"];
/** Tools answered page by page (`cursor` in, `truncated` and `next_cursor` out). */
export type PagedToolName = { [K in ToolName]: (typeof TOOL_ROUTES)[K] extends { paged: true } ? K : never }[ToolName];
/** Paged tools whose pages hold one list of items. */
export type ItemsToolName = { [K in ToolName]: (typeof TOOL_ROUTES)[K] extends { items: string } ? K : never }[ToolName];
/** One item of a paged tool's list. */
export type ItemOf<K extends ItemsToolName> = (typeof TOOL_ROUTES)[K] extends { items: infer F extends string }
  ? ToolOutput<K> extends { [P in F]: readonly (infer E)[] }
    ? E
    : unknown
  : never;

/** Options of a {@link MarketgateClient}. */
export interface ClientOptions {
  /** The service's base URL, e.g. `https://data.example.com` (no trailing path). */
  url: string;
  /** How paid calls are paid (default `x402`): per call with x402 or MPP, or from prepaid credits. */
  pay?: PayMethod;
  /** The chain that signs x402 payments and credits proofs (default `base`). MPP pays on Base. */
  network?: Network;
  /** The keys. Without one for the chosen network, paid calls answer their 402 ({@link PaymentRequiredError}). */
  wallet?: Wallet;
  /** Most one charge may cost, USD (default `"1"`, as the official x402 client; `null`: no per-call cap). */
  maxUsdPerCall?: string | number | null;
  /** Most this client may spend in all, USD: x402 and MPP payments (top-ups included), credit debits and stream-minutes (default: no cap). */
  maxUsdPerSession?: string | number;
  /** A credits session token to start with (`X-Credits-Session`, from an earlier answer). */
  creditsSession?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** Per-call options. */
export interface CallOptions {
  /** This call's per-call cap (USD), instead of the client's (still within the session cap). */
  maxUsd?: string | number;
  /** Alert management credentials (tools that read them): the manage token, or an owner-wallet signature. */
  credentials?: { manageToken?: string; walletSignature?: string; signedAt?: string | number };
  signal?: AbortSignal;
}

/** A tool's answer with what it cost. */
export interface CallResult<T> {
  data: T;
  /** What was charged and how (`method: "free"` with `usd: "0"` when nothing was). */
  cost: Cost;
  /** Answered from the service's cache: free. */
  cacheHit: boolean;
  /** HTTP status (200; 202 for an interim answer such as a CVD warm-up, which is free). */
  status: number;
  headers: Headers;
}

/** The arguments of a tool's method: the input is optional when every field is. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}`: an input whose every field is optional accepts it
export type ToolArgs<K extends ToolName> = {} extends ToolInput<K> ? [input?: ToolInput<K>, opts?: CallOptions] : [input: ToolInput<K>, opts?: CallOptions];

/** One method per registry tool, named as the tool. */
export type ToolMethods = { [K in ToolName]: (...args: ToolArgs<K>) => Promise<CallResult<ToolOutput<K>>> };

/** The headers of alert credentials. */
function credentialHeaders(c: CallOptions["credentials"]): Record<string, string> {
  if (!c) return {};
  return {
    ...(c.manageToken ? { authorization: `Bearer ${c.manageToken}` } : {}),
    ...(c.walletSignature ? { "x-wallet-signature": c.walletSignature } : {}),
    ...(c.signedAt !== undefined ? { "x-signed-at": String(c.signedAt) } : {}),
  };
}

/**
 * The typed client of a marketgate service: one method per registry tool (`client.tools.funding_rate({symbol})`),
 * paid with x402 (Base or Solana), MPP or prepaid credits within a per-call and per-session cap, cursor paging,
 * and the paid live streams as async iterators. See docs/client.md.
 */
export class MarketgateClient {
  /** One method per registry tool. */
  readonly tools: ToolMethods;
  private readonly budget: SpendBudget;
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    const perCall = options.maxUsdPerCall === undefined ? "1" : (options.maxUsdPerCall ?? undefined);
    this.budget = new SpendBudget(perCall, options.maxUsdPerSession);
    this.transport = new Transport({
      baseUrl: options.url.replace(/\/+$/, ""),
      pay: options.pay ?? "x402",
      network: options.network ?? "base",
      wallet: options.wallet ?? {},
      budget: this.budget,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      creditsSession: options.creditsSession,
    });
    const tools: Record<string, unknown> = {};
    for (const name of Object.keys(TOOL_ROUTES)) tools[name] = (input?: object, opts?: CallOptions) => this.call(name as ToolName, input as never, opts);
    this.tools = tools as ToolMethods;
  }

  /** Charged so far by this client, USD (payments, credit debits and stream-minutes). */
  get spentUsd(): string {
    return microsToUsd(this.budget.spentMicros);
  }

  /** The latest credits session token (`X-Credits-Session`) the service gave, if any. */
  get creditsSession(): string | undefined {
    return this.transport.session;
  }

  /**
   * Calls the tool `name` with `input`, paying if it is paid (and not a cache hit).
   * @returns the answer and its cost.
   * @throws SpendCapError over a cap (nothing charged); PaymentRequiredError on a 402 not paid; ServiceError on
   *   any other error answer (`{error:{code,message,details}}`; never charged).
   */
  async call<K extends ToolName>(name: K, ...[input, opts]: ToolArgs<K>): Promise<CallResult<ToolOutput<K>>> {
    const route = TOOL_ROUTES[name] as ToolRoute | undefined;
    if (!route) throw new Error(`unknown tool: ${String(name)}`);
    const raw = (input ?? {}) as Record<string, unknown>;
    const req = toolRequest(route, raw);
    const res = await this.transport.send({
      ...req,
      headers: credentialHeaders(opts?.credentials),
      priceMicros: priceMicros(route, raw),
      maxUsd: opts?.maxUsd,
      signIn: route.auth === "siwx",
      // A top-up buys credits: it cannot be paid from them.
      payWith: name === "credits_top_up" && this.transport.pay === "credits" ? "x402" : undefined,
      signal: opts?.signal,
    });
    return resultOf<ToolOutput<K>>(res);
  }

  /**
   * Every page of a paged tool, from `input` (its `cursor`, if any) to the last, each paid as its own call. Stop
   * early by leaving the loop; nothing further is called.
   */
  async *pages<K extends PagedToolName>(name: K, ...[input, opts]: ToolArgs<K>): AsyncGenerator<CallResult<ToolOutput<K>>> {
    let cursor = (input as { cursor?: string } | undefined)?.cursor;
    for (;;) {
      const page = await this.call(name, ...([{ ...(input as object), ...(cursor ? { cursor } : {}) }, opts] as ToolArgs<K>));
      yield page;
      const { truncated, next_cursor } = page.data as { truncated?: boolean; next_cursor?: string | null };
      if (!truncated || !next_cursor) return;
      cursor = next_cursor;
    }
  }

  /** Every item of a paged tool's list, page after page (see {@link pages}). */
  async *items<K extends ItemsToolName>(name: K, ...args: ToolArgs<K>): AsyncGenerator<ItemOf<K>> {
    const field = (TOOL_ROUTES[name] as ToolRoute).items!;
    for await (const page of this.pages(name, ...args)) yield* (page.data as Record<string, ItemOf<K>[]>)[field] ?? [];
  }

  /**
   * Opens a paid live stream (per minute, from credits: the client's session token or a Sign-In-With-X proof).
   * @throws SpendCapError when the first minute is over a cap; PaymentRequiredError without credits; ServiceError.
   */
  stream<T extends StreamTopic>(topic: T, opts?: StreamOptions): Promise<LiveStream<T>> {
    return openStream(this.transport, this.budget, topic, opts);
  }

  /**
   * Buys `amountUsd` of credits (`POST /api/v1/credits`), paid with x402 (MPP when the client pays with MPP). A
   * top-up is a charge like any other: `opts.maxUsd` lifts the per-call cap for it.
   */
  topUp(amountUsd: string, opts?: CallOptions): Promise<CallResult<ToolOutput<"credits_top_up">>> {
    return this.call("credits_top_up", { amount_usd: amountUsd }, opts);
  }

  /**
   * Any request of the service by method and path (with its query), paid like a tool call: the low-level form the
   * CLI uses. Does not throw on error answers: read `status` and `body`.
   * @throws SpendCapError over a cap (nothing charged).
   */
  request(method: string, path: string, opts: CallOptions & { body?: unknown } = {}): Promise<RawResponse> {
    const found = routeOf(method, path);
    const body = typeof opts.body === "string" ? parseJson(opts.body) : opts.body;
    return this.transport.send({
      method: method.toUpperCase(),
      path: path.startsWith("/") ? path : `/${path}`,
      body: opts.body,
      headers: credentialHeaders(opts.credentials),
      // Known routes are priced from the registry; others ask /api/v1/quote (credits only).
      priceMicros: found ? priceMicros(found.route, body && typeof body === "object" ? (body as Record<string, unknown>) : {}) : undefined,
      maxUsd: opts.maxUsd,
      signIn: found?.route.auth === "siwx",
      payWith: found?.name === "credits_top_up" && this.transport.pay === "credits" ? "x402" : undefined,
      signal: opts.signal,
    });
  }
}

/** JSON text parsed, or undefined when it is not JSON (the service answers that). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A tool answer as a result, or the typed error of an error answer. */
function resultOf<T>(res: RawResponse): CallResult<T> {
  if (res.status === 402) throw new PaymentRequiredError(res.body);
  if (res.status >= 400) throw new ServiceError(res.status, res.body, retryAfter(res.headers));
  return { data: res.body as T, cost: res.cost, cacheHit: res.cacheHit, status: res.status, headers: res.headers };
}

/** `Retry-After` in seconds, when given as seconds. */
function retryAfter(headers: Headers): number | undefined {
  const v = headers.get("retry-after");
  return v && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** A {@link MarketgateClient} for `options`. */
export function createClient(options: ClientOptions): MarketgateClient {
  return new MarketgateClient(options);
}
