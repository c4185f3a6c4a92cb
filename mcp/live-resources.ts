import { AppError } from "../src/errors.js";
import type { StreamSession, StreamTransport } from "../src/live/session.js";
import type { LiveEvent } from "../src/live/types.js";
import type { StreamDef } from "../src/registry/stream.js";
import { PerpSymbol } from "../tools/perp/common.js";

/** Events kept per resource for `resources/read` (oldest dropped first). */
export const LIVE_RING_SIZE = 100;
/** At most one `notifications/resources/updated` per resource per this period, ms (the first one goes at once). */
export const LIVE_NOTIFY_MS = 250;
/** A session whose notification stream has not drained for this long is a slow consumer: its subscriptions end with `dropped`. */
export const LIVE_STALL_MS = 30_000;

/** The topics offered as MCP resources (funding is offered over SSE and WebSocket only). */
export type ResourceTopic = "liquidations" | "cvd";

const URI = /^marketgate:\/\/(liquidations|cvd)(?:\/([^/?#]{1,60}))?$/;

/** A resource URI read as topic and symbol: `uri` is canonical (`marketgate://liquidations/ETH` for `…/ethusdt`). */
export interface LiveUri {
  topic: ResourceTopic;
  /** The symbol as written in the URI (for the registry's validation), undefined for all liquidations. */
  raw?: string;
  /** The base (`ETH`), undefined for all liquidations. */
  base?: string;
  uri: string;
}

/** The canonical URI of a topic and base. */
export function liveUri(topic: ResourceTopic, base?: string): string {
  return base ? `marketgate://${topic}/${base}` : `marketgate://${topic}`;
}

/**
 * Parses `marketgate://liquidations`, `marketgate://liquidations/{symbol}` and `marketgate://cvd/{symbol}`
 * (symbols as everywhere: `ETH`, `ETHUSDT`, `ETH-USDT-SWAP` all mean `ETH`). Syntax only: whether a venue
 * lists the symbol is checked when subscribing.
 * @throws AppError NOT_FOUND for another URI, BAD_REQUEST for a malformed or missing symbol.
 */
export function parseLiveUri(uri: string): LiveUri {
  const m = URI.exec(uri);
  if (!m) throw new AppError("NOT_FOUND", `no resource ${uri.slice(0, 80)}; resources: marketgate://liquidations, marketgate://liquidations/{symbol}, marketgate://cvd/{symbol}`);
  const topic = m[1] as ResourceTopic;
  if (m[2] === undefined) {
    if (topic === "cvd") throw new AppError("BAD_REQUEST", "marketgate://cvd/{symbol} needs a symbol");
    return { topic, uri: liveUri(topic) };
  }
  let raw: string;
  try {
    raw = decodeURIComponent(m[2]);
  } catch {
    throw new AppError("BAD_REQUEST", `'${m[2].slice(0, 40)}' is not a perpetual symbol`);
  }
  const parsed = PerpSymbol.safeParse(raw);
  if (!parsed.success) throw new AppError("BAD_REQUEST", `'${raw.slice(0, 40)}' is not a perpetual symbol`);
  return { topic, raw, base: parsed.data, uri: liveUri(topic, parsed.data) };
}

/** One event as `resources/read` shows it: `seq` grows by one per event of this resource in this session. */
interface HeldEvent {
  seq: number;
  event: string;
  id?: string;
  data: unknown;
}

/** What the resource needs from its MCP session. */
export interface ResourceHost {
  /** Sends `notifications/resources/updated` for `uri`; false when the notification stream is stalled (nothing sent). */
  notify(uri: string): boolean;
  /** How long the session's notification stream has been unable to drain, ms (0 when it drains or is absent). */
  stalledMs(): number;
}

/**
 * One subscribable resource of one MCP session: its subscription (a {@link StreamSession} billed per minute
 * like an SSE stream), the last {@link LIVE_RING_SIZE} events of its topic, the billing state and, once the
 * subscription ended, why. Updates are coalesced: the first event notifies at once, then at most one
 * notification per {@link LIVE_NOTIFY_MS}. Running updates without an id (`cvd_update`) replace the
 * previous one when it is the newest event held, so they do not push closed buckets out of the ring.
 */
export class LiveResource {
  /** The URIs the client subscribed with (usually one; `…/ETH` and `…/ETHUSDT` are the same resource). */
  readonly aliases = new Set<string>();
  private ring: HeldEvent[] = [];
  private seq = 0;
  private state: "idle" | "opening" | "active" | "ended" = "idle";
  private stream?: StreamSession;
  /** Bumped by every subscribe and stop: events of an older stream are ignored. */
  private generation = 0;
  private billing?: { minutes_paid: number; remaining_usd: string };
  private ended?: { event: string; data: unknown };
  private timer?: NodeJS.Timeout;
  private pending = false;
  /** The subscription being opened: resolves with the refusal reason, or undefined when it is open. */
  opening?: Promise<string | undefined>;
  wallet?: string;

  constructor(
    readonly def: StreamDef,
    readonly base: string | undefined,
    readonly uri: string,
    private readonly host: ResourceHost,
  ) {}

  /** Credits left after the last minute debited (undefined when streams are free). */
  get remainingUsd(): string | undefined {
    return this.billing?.remaining_usd;
  }

  /** Never subscribed and holds nothing (a refused first subscribe): the session may forget it. */
  get unused(): boolean {
    return this.state === "idle" && this.ring.length === 0;
  }

  /** Subscribed or being subscribed. */
  get live(): boolean {
    return this.state === "opening" || this.state === "active";
  }

  /**
   * Opens the subscription with `open` (which gets this resource's transport): resolves with the refusal
   * reason (nothing debited) or undefined once it runs. Concurrent callers await {@link opening}.
   */
  subscribe(wallet: string | undefined, open: (t: StreamTransport) => Promise<StreamSession | { refused: string }>): Promise<string | undefined> {
    const gen = ++this.generation;
    const before = this.state;
    this.state = "opening";
    this.wallet = wallet;
    this.ended = undefined;
    this.billing = undefined;
    const opening = (async () => {
      try {
        const s = await open(this.transport(gen));
        if ("refused" in s) {
          if (this.generation === gen) this.state = before === "ended" ? "ended" : "idle";
          return s.refused;
        }
        if (this.generation !== gen) s.stop();
        else if (this.state === "opening") {
          this.state = "active";
          this.stream = s;
        }
        return undefined;
      } catch (err) {
        if (this.generation === gen) this.state = before === "ended" ? "ended" : "idle";
        throw err;
      }
    })();
    this.opening = opening;
    const settled = () => {
      if (this.opening === opening) this.opening = undefined;
    };
    opening.then(settled, settled);
    return opening;
  }

  /** Ends the subscription (client unsubscribed, session closed): no more events, nothing more debited. */
  stop(why: string): void {
    this.generation++;
    this.stream?.stop();
    this.stream = undefined;
    if (this.state !== "idle") {
      this.state = "ended";
      this.ended ??= { event: why, data: { reason: why } };
    }
    this.pending = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The JSON of `resources/read`. */
  read(): Record<string, unknown> {
    return {
      uri: this.uri,
      topic: this.def.topic,
      symbol: this.base ?? null,
      status: this.state === "idle" ? "not_subscribed" : this.state,
      price_per_minute_usd: this.def.pricePerMinuteUsd,
      billing: this.billing ?? null,
      ended: this.ended ?? null,
      events: this.ring,
    };
  }

  /** The StreamSession's transport of subscription `gen`: events into the ring, then a coalesced notification. */
  private transport(gen: number): StreamTransport {
    return {
      send: (e: LiveEvent) => {
        if (this.generation !== gen) return true;
        if (e.event === "debit") {
          const d = e.data as { minute: number; remaining_usd: string };
          this.billing = { minutes_paid: d.minute, remaining_usd: d.remaining_usd };
          return true;
        }
        if (this.host.stalledMs() > LIVE_STALL_MS) return false;
        this.hold(e);
        this.changed();
        return true;
      },
      end: (last?: LiveEvent) => {
        if (this.generation !== gen) return;
        this.generation++;
        this.stream = undefined;
        this.state = "ended";
        this.ended = last ? { event: last.event, data: last.data } : { event: "closed", data: { reason: "closed" } };
        // The last update goes out at once: it says why the subscription ended.
        this.flush(true);
      },
    };
  }

  private hold(e: LiveEvent): void {
    const held: HeldEvent = { seq: ++this.seq, event: e.event, ...(e.id ? { id: e.id } : {}), data: e.data };
    const newest = this.ring.at(-1);
    if (!e.id && newest && !newest.id && newest.event === e.event) this.ring[this.ring.length - 1] = held;
    else {
      this.ring.push(held);
      if (this.ring.length > LIVE_RING_SIZE) this.ring.splice(0, this.ring.length - LIVE_RING_SIZE);
    }
  }

  /** Notifies now when no notification went out in the last period, else once at its end. */
  private changed(): void {
    this.pending = true;
    if (!this.timer) this.flush(false);
  }

  private flush(force: boolean): void {
    if (this.timer && !force) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending && !force) return;
    let sent = true;
    for (const uri of this.aliases) sent = this.host.notify(uri) && sent;
    this.pending = !sent;
    // A stalled stream keeps the update pending (nothing queues up): it is retried at the next period. The
    // last one is not retried: why the subscription ended stays readable.
    if (this.state === "ended") {
      this.pending = false;
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.pending) this.flush(false);
    }, LIVE_NOTIFY_MS);
    this.timer.unref();
  }
}
