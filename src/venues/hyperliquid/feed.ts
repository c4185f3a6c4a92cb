import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { HYPERLIQUID_ENDPOINTS } from "./endpoints.js";
import { parseHyperliquidMessage } from "./feed-parse.js";

const SPEC: VenueSpec = {
  venue: "hyperliquid",
  defaultBaseUrl: HYPERLIQUID_ENDPOINTS.ws.url,
  // The server closes a connection it has sent nothing to for 60 s: `{"method":"ping"}` every 30 s.
  heartbeat: { everyMs: 30_000, idleOnly: false },
  rotateAfterMs: 0,
  sendSpacingMs: 0,
  // 1000 subscriptions per IP (shared with other connections of this process).
  maxSymbols: 500,
  urlCarriesStreams: false,
};

/**
 * Hyperliquid feed (`/ws`): one `trades` subscription per coin (`kPEPE`-style coins are per 1000).
 * Hyperliquid publishes no public liquidation stream, so this feed never emits `liquidations`.
 */
export class HyperliquidFeed extends VenueFeed {
  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/ws`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return insts.map((i) => JSON.stringify({ method: "subscribe", subscription: { type: "trades", coin: i.venueSymbol } }));
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return insts.map((i) => JSON.stringify({ method: "unsubscribe", subscription: { type: "trades", coin: i.venueSymbol } }));
  }

  protected heartbeatFrame(): string {
    return JSON.stringify({ method: "ping" });
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseHyperliquidMessage(text, lookup);
  }
}
