import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { BINANCE_ENDPOINTS } from "./endpoints.js";
import { parseBinanceMessage } from "./feed-parse.js";

/** All-symbol liquidation stream (one event object per message, snapshot semantics: a lower bound). */
const LIQUIDATION_STREAM = "!forceOrder@arr";
/** Streams per SUBSCRIBE request. */
const BATCH = 50;

const SPEC: VenueSpec = {
  venue: "binance",
  defaultBaseUrl: BINANCE_ENDPOINTS.ws.url,
  // The server pings every 3 min and `ws` answers with pongs itself. No client probe on purpose: a reply to
  // a request would keep the stale timer quiet on a path that handshakes but pushes no data.
  heartbeat: null,
  // Binance closes every connection at 24 h: rotate at 23 h (make-before-break).
  rotateAfterMs: 23 * 3_600_000,
  // 10 incoming messages/s per connection (pongs included): at most 5 of ours.
  sendSpacingMs: 200,
  // 200 streams per connection, one of them the liquidation stream.
  maxSymbols: 199,
  urlCarriesStreams: true,
};

const stream = (i: FeedInstrument) => `${i.venueSymbol.toLowerCase()}@aggTrade`;

/**
 * Binance USDⓈ-M feed on the ROUTED combined endpoint `/market/stream?streams=…` (the legacy `/stream`
 * path handshakes and stays silent since 2026-04). Streams: `<symbol>@aggTrade` per subscribed symbol and
 * `!forceOrder@arr` (all symbols, filtered to known instruments). A new connection carries every current
 * stream in its URL; later changes use SUBSCRIBE / UNSUBSCRIBE (50 streams per request, ≥ 200 ms apart).
 * Binance-compatible venues (Aster) reuse it with their own `spec` and combined-stream path.
 */
export class BinanceFeed extends VenueFeed {
  private reqId = 0;

  constructor(
    opts: FeedOptions,
    spec: VenueSpec = SPEC,
    private readonly streamPath = "/market/stream",
  ) {
    super(spec, opts);
  }

  protected endpoint(insts: readonly FeedInstrument[]): string {
    const streams = [...(this.liquidations ? [LIQUIDATION_STREAM] : []), ...insts.map(stream)];
    return `${this.baseUrl}${this.streamPath}?streams=${streams.join("/")}`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return this.requests("SUBSCRIBE", insts.map(stream));
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return this.requests("UNSUBSCRIBE", insts.map(stream));
  }

  protected heartbeatFrame(): null {
    return null;
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseBinanceMessage(text, lookup);
  }

  protected override canConnect(): boolean {
    return this.liquidations || this.subscriptionCount > 0;
  }

  private requests(method: string, params: string[]): string[] {
    const out: string[] = [];
    for (let i = 0; i < params.length; i += BATCH) out.push(JSON.stringify({ method, params: params.slice(i, i + BATCH), id: ++this.reqId }));
    return out;
  }
}
