import { usdToMicros, type SpendBudget } from "./budget.js";
import { PaymentRequiredError, ServiceError } from "./errors.js";
import { sseMessages } from "./sse.js";
import { STREAM_ROUTES, type ControlEventTypes, type StreamEventTypes } from "./tools.generated.js";
import type { Transport } from "./transport.js";

/** A live topic: `liquidations`, `cvd`, `funding`. */
export type StreamTopic = keyof typeof STREAM_ROUTES;

/** One event of a `T` stream: its own events and the control events, each with its typed `data`. */
export type StreamEvent<T extends StreamTopic> =
  | { [E in keyof StreamEventTypes[T]]: { event: E; id?: string; data: StreamEventTypes[T][E] } }[keyof StreamEventTypes[T]]
  | { [E in keyof ControlEventTypes]: { event: E; id?: string; data: ControlEventTypes[E] } }[keyof ControlEventTypes];

/** Options of a stream. */
export interface StreamOptions {
  /** The symbol: required by `cvd` and `funding`, a filter for `liquidations`. */
  symbol?: string;
  /** Resume after this event id (`Last-Event-ID`). */
  lastEventId?: string;
  /**
   * Length of the service's billed minute, ms (default 60,000, the service's; `LIVE_STREAM_MINUTE_MS` changes it in
   * tests). When the session cap cannot pay another minute, the client closes the stream shortly before it starts.
   */
  minuteMs?: number;
  signal?: AbortSignal;
}

/**
 * An open paid stream, read as an async iterator of typed events (`for await (const e of stream)`). Leaving the
 * loop, `close()` or the abort signal closes the connection, and the service stops debiting. Each `debit` event is
 * counted in the client's session spend; the stream ends by itself when the session cap cannot pay the next minute.
 */
export class LiveStream<T extends StreamTopic> implements AsyncIterableIterator<StreamEvent<T>> {
  private readonly events: AsyncGenerator<StreamEvent<T>>;
  private closeTimer?: ReturnType<typeof setTimeout>;

  /** @internal Opened by {@link openStream}. */
  constructor(
    readonly topic: T,
    private readonly response: Response,
    private readonly abort: AbortController,
    private readonly budget: SpendBudget,
    private readonly minuteMs: number,
    /** The session token the stream answered with, then the newest a `debit` carried (reconnect with it and {@link lastEventId}, no new proof). */
    public session: string | undefined,
    /** Hands each newer token to the client, for its next calls and streams. */
    private readonly onSession: (token: string) => void = () => {},
  ) {
    this.events = this.read();
  }

  /** The id of the last event received that had one (resume from it). */
  lastEventId?: string;

  private async *read(): AsyncGenerator<StreamEvent<T>> {
    const price = usdToMicros(STREAM_ROUTES[this.topic].pricePerMinuteUsd);
    try {
      for await (const m of sseMessages(this.response.body!)) {
        let data: unknown;
        try {
          data = JSON.parse(m.data);
        } catch {
          data = m.data;
        }
        if (m.id !== undefined) this.lastEventId = m.id;
        if (m.event === "debit") this.onDebit(data as ControlEventTypes["debit"], price);
        yield { event: m.event, ...(m.id !== undefined ? { id: m.id } : {}), data } as StreamEvent<T>;
      }
    } catch (err) {
      if (!this.abort.signal.aborted) throw err;
    } finally {
      this.close();
    }
  }

  /** Counts a debited minute (the first was counted when the stream opened) and, without room for the next, ends the stream before it. */
  private onDebit(debit: ControlEventTypes["debit"], price: bigint): void {
    if (debit.session) {
      this.session = debit.session;
      this.onSession(debit.session);
    }
    if (debit.minute > 1) this.budget.record(usdToMicros(debit.price_usd));
    const room = this.budget.roomMicros;
    if (room === undefined || room >= price || this.closeTimer) return;
    // Close a little before the next minute starts, so that it is never debited.
    this.closeTimer = setTimeout(() => this.close(), Math.max(0, this.minuteMs - Math.min(5_000, this.minuteMs / 5)));
  }

  next(): Promise<IteratorResult<StreamEvent<T>>> {
    return this.events.next();
  }

  /** Leaving a `for await` loop closes the stream. */
  async return(): Promise<IteratorResult<StreamEvent<T>>> {
    this.close();
    return this.events.return(undefined);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Closes the connection (idempotent): the service stops the stream and debits nothing more. */
  close(): void {
    if (this.closeTimer) clearTimeout(this.closeTimer);
    if (!this.abort.signal.aborted) this.abort.abort();
  }
}

/**
 * Opens the `topic` stream with the client's credits: its session token, else a fresh Sign-In-With-X proof. The
 * first minute is reserved against the caps before anything is signed and counted once the stream is open.
 * @throws SpendCapError over a cap; PaymentRequiredError when the service refuses (no credits, no proof);
 *   ServiceError for its other refusals (unknown symbol, too many streams, …).
 */
export async function openStream<T extends StreamTopic>(transport: Transport, budget: SpendBudget, topic: T, opts: StreamOptions = {}): Promise<LiveStream<T>> {
  const route = STREAM_ROUTES[topic];
  if (!route) throw new Error(`unknown stream topic: ${String(topic)}`);
  if (route.symbol === "required" && !opts.symbol) throw new Error(`the ${topic} stream needs a symbol`);
  const path =
    route.symbol === "required"
      ? route.path.replace(":symbol", encodeURIComponent(opts.symbol!))
      : opts.symbol
        ? `${route.path}?symbol=${encodeURIComponent(opts.symbol)}`
        : route.path;
  const url = `${transport.baseUrl}${path}`;
  const held = budget.reserve(usdToMicros(route.pricePerMinuteUsd));
  const abort = new AbortController();
  opts.signal?.addEventListener("abort", () => abort.abort(), { once: true });
  try {
    const open = async (session: string | undefined) => {
      const auth: Record<string, string> = session ? { "X-Credits-Session": session } : transport.siwx.ready ? { "SIGN-IN-WITH-X": await transport.siwx.proof(url) } : {};
      const headers = { accept: "text/event-stream", ...auth, ...(opts.lastEventId ? { "Last-Event-ID": opts.lastEventId } : {}) };
      return transport.fetch(url, { headers, signal: abort.signal });
    };
    let res = await open(transport.session);
    if (res.status === 402 && transport.session && transport.siwx.ready) {
      await res.body?.cancel();
      transport.session = undefined;
      res = await open(undefined);
    }
    if (!res.ok) {
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
      throw res.status === 402 ? new PaymentRequiredError(body) : new ServiceError(res.status, body);
    }
    held.commit();
    const session = res.headers.get("x-credits-session") ?? undefined;
    if (session) transport.session = session;
    return new LiveStream(topic, res, abort, budget, opts.minuteMs ?? 60_000, session, (token) => (transport.session = token));
  } catch (err) {
    held.release();
    abort.abort();
    throw err;
  }
}
