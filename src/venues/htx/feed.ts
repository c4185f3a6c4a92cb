import type WebSocket from "ws";
import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedEventMap, type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { HTX_ENDPOINTS } from "./endpoints.js";
import { htxFrameText, parseHtxMessage, PING } from "./feed-parse.js";
import { HTX } from "./venue-id.js";

/** The wildcard topic of every swap's liquidations on the notification endpoint (public, no authentication). */
export const HTX_LIQUIDATION_TOPIC = "public.*.liquidation_orders";

/** One received websocket message as bytes (`ws` hands over a Buffer, an ArrayBuffer or fragments). */
function bytesOf(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/**
 * What both HTX sockets share: frames arrive gzip-compressed and are inflated here ({@link messageText}); the server
 * pings every 5 s and closes a connection that leaves five pings unanswered, so each ping's value is kept and echoed
 * at once in the socket's own pong shape ({@link pongFrame}) through `probe()` (which sends {@link heartbeatFrame} on
 * the live connection; HTX feeds never rotate, so that is the connection that was pinged).
 */
abstract class HtxSocket extends VenueFeed {
  /** The last server ping's value as JSON (a number or a quoted string), until answered. */
  private pendingPing: string | null = null;

  /** The answer to a server ping carrying `token` (its value as JSON, echoed verbatim). */
  protected abstract pongFrame(token: string): string;
  /** A client heartbeat when no server ping waits for an answer, or null when the socket has none. */
  protected abstract idleFrame(): string | null;

  /**
   * The text of one received message: HTX sends every frame gzip-compressed (text frames are read as UTF-8). A frame
   * that does not inflate is handed on as Latin-1 text, which the parser reports as malformed (the socket goes on).
   */
  protected override messageText(data: WebSocket.RawData): string {
    const bytes = bytesOf(data);
    try {
      return htxFrameText(bytes);
    } catch {
      return bytes.toString("latin1");
    }
  }

  protected heartbeatFrame(): string | null {
    const token = this.pendingPing;
    this.pendingPing = null;
    return token === null ? this.idleFrame() : this.pongFrame(token);
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    const f = parseHtxMessage(text, lookup);
    const message = f.control?.type === "ack" ? f.control.message : undefined;
    if (message?.startsWith(PING)) {
      this.pendingPing = message.slice(PING.length);
      queueMicrotask(() => this.probe());
    }
    return f;
  }
}

/**
 * HTX's notification socket (`/linear-swap-notification`) for liquidations only: one `public.*.liquidation_orders`
 * subscription (every swap, `business_type` swap) per connection, filtered to the listed instruments. It carries no
 * trades and takes no per-symbol subscriptions. Owned by {@link HtxFeed}.
 */
class HtxLiquidationSocket extends HtxSocket {
  private static readonly SPEC: VenueSpec = {
    venue: HTX,
    defaultBaseUrl: HTX_ENDPOINTS.ws.url,
    heartbeat: null, // the server pings; the socket answers (HtxSocket)
    rotateAfterMs: 0,
    sendSpacingMs: 0,
    maxSymbols: 0,
    urlCarriesStreams: false,
  };

  constructor(opts: FeedOptions) {
    super(HtxLiquidationSocket.SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/linear-swap-notification`;
  }

  protected subscribeFrames(_insts: readonly FeedInstrument[], onOpen: boolean): string[] {
    return onOpen ? [JSON.stringify({ op: "sub", cid: "liquidations", topic: HTX_LIQUIDATION_TOPIC, business_type: "swap" })] : [];
  }

  protected unsubscribeFrames(): string[] {
    return [];
  }

  protected pongFrame(token: string): string {
    return `{"op":"pong","ts":${token}}`;
  }

  /** The notification socket documents only server-initiated pings. */
  protected idleFrame(): null {
    return null;
  }
}

const MARKET_SPEC: VenueSpec = {
  venue: HTX,
  defaultBaseUrl: HTX_ENDPOINTS.ws.url,
  heartbeat: null, // the server pings every 5 s; HtxSocket answers each one
  rotateAfterMs: 0,
  // "40 subscriptions at most can be sent in one second": one topic per `sub` frame, 30 ms apart (33 / s).
  sendSpacingMs: 30,
  maxSymbols: 500,
  urlCarriesStreams: false,
};

/**
 * HTX USDT-margined swap feed: trades from the market socket (`/linear-swap-ws`, one `market.<contract>.trade.detail`
 * topic per subscribed swap) and, unless disabled, liquidations of every swap from the notification socket
 * ({@link HtxLiquidationSocket}), which this feed starts, stops and whose `liquidations` events it forwards to its own
 * listeners. `state()`, `subscriptions()` and `gap` events are the market socket's: a drop of the liquidation socket
 * alone reports no gap (its events of that interval are not backfilled; docs/methods/venues/htx.md).
 */
export class HtxFeed extends HtxSocket {
  private readonly liquidationSocket: HtxLiquidationSocket | null;
  private requestId = 0;

  constructor(opts: FeedOptions) {
    super(MARKET_SPEC, opts);
    this.liquidationSocket = opts.liquidations === false ? null : new HtxLiquidationSocket(opts);
  }

  override start(): void {
    super.start();
    this.liquidationSocket?.start();
  }

  override async stop(): Promise<void> {
    await Promise.all([super.stop(), this.liquidationSocket?.stop()]);
  }

  override on<K extends keyof FeedEventMap>(event: K, fn: (value: FeedEventMap[K]) => void): () => void {
    const off = super.on(event, fn);
    const liq = event === "liquidations" ? this.liquidationSocket : null;
    if (!liq) return off;
    const offLiq = liq.on(event, fn);
    return () => {
      off();
      offLiq();
    };
  }

  override off<K extends keyof FeedEventMap>(event: K, fn: (value: FeedEventMap[K]) => void): void {
    super.off(event, fn);
    if (event === "liquidations") this.liquidationSocket?.off(event, fn);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/linear-swap-ws`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return insts.map((i) => JSON.stringify({ sub: `market.${i.venueSymbol}.trade.detail`, id: `t${++this.requestId}` }));
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return insts.map((i) => JSON.stringify({ unsub: `market.${i.venueSymbol}.trade.detail`, id: `t${++this.requestId}` }));
  }

  protected pongFrame(token: string): string {
    return `{"pong":${token}}`;
  }

  /** The market socket takes client pings too ("two-way heartbeat"), answered `{"pong": <ts>}`. */
  protected idleFrame(): string {
    return JSON.stringify({ ping: Date.now() });
  }
}
