import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { DYDX_ENDPOINTS } from "./endpoints.js";
import { parseDydxMessage } from "./feed-parse.js";
import { DYDX } from "./venue-id.js";

/** `v4_trades` subscriptions one connection may hold (socks `V4_TRADES_CHANNEL_LIMIT`, docs "Indexer Rate Limits"). */
export const DYDX_TRADES_PER_CONNECTION = 32;

const SPEC: VenueSpec = {
  venue: DYDX,
  defaultBaseUrl: DYDX_ENDPOINTS.ws.url,
  // The server pings every 30 s at the protocol level (`ws` answers); a quiet market may send nothing for minutes, so
  // `{"type":"ping"}` after 20 s idle keeps a `pong` coming before the 60 s stale timer.
  heartbeat: { everyMs: 20_000, idleOnly: true },
  rotateAfterMs: 0,
  // Each subscribe makes the server read the market's latest trades for its answer: a little spacing spreads them.
  sendSpacingMs: 50,
  maxSymbols: DYDX_TRADES_PER_CONNECTION,
  urlCarriesStreams: false,
};

/**
 * dYdX v4 indexer feed (`/v4/ws`): one `v4_trades` subscription per market (`{"type":"subscribe","channel":"v4_trades",
 * "id":"BTC-USD"}`), which carries the market's trades and, as `LIQUIDATED` rows, its liquidations: the liquidation
 * feed is per subscribed market (there is no all-market channel). The subscribe answer's latest trades are emitted too
 * (the replay guard and the stores drop what was already counted).
 */
export class DydxFeed extends VenueFeed {
  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/v4/ws`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return insts.map((i) => JSON.stringify({ type: "subscribe", channel: "v4_trades", id: i.venueSymbol, batched: false }));
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return insts.map((i) => JSON.stringify({ type: "unsubscribe", channel: "v4_trades", id: i.venueSymbol }));
  }

  protected heartbeatFrame(): string {
    return JSON.stringify({ type: "ping" });
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseDydxMessage(text, lookup);
  }
}
