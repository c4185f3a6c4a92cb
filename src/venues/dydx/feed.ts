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
  // The server pings every 30 s at the protocol level (`ws` answers) and never answers a `{"type":"ping"}` (socks
  // ignores it), so no client heartbeat: `v4_block_height` (a frame per block) keeps the connection's messages coming.
  heartbeat: null,
  rotateAfterMs: 0,
  // Each subscribe makes the server read the market's latest trades for its answer: a little spacing spreads them.
  sendSpacingMs: 50,
  maxSymbols: DYDX_TRADES_PER_CONNECTION,
  urlCarriesStreams: false,
};

/** The liveness channel: one small frame per block (≈ 1 s), whatever the markets trade. */
const BLOCK_HEIGHT = JSON.stringify({ type: "subscribe", channel: "v4_block_height" });

/**
 * dYdX v4 indexer feed (`/v4/ws`): one `v4_trades` subscription per market (`{"type":"subscribe","channel":"v4_trades",
 * "id":"BTC-USD"}`), which carries the market's trades and, as `LIQUIDATED` rows, its liquidations: the liquidation
 * feed is per subscribed market (there is no all-market channel). The subscribe answer's latest trades are emitted too
 * (the replay guard and the stores drop what was already counted), not its liquidations (history, not news). Each connection also subscribes `v4_block_height`
 * once: a quiet market may print no trade for many minutes, and the indexer sends nothing else a client can ask for,
 * so its per-block frames are what the stale timer watches (no block for 60 s: the indexer is stuck, reconnect).
 */
export class DydxFeed extends VenueFeed {
  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/v4/ws`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[], onOpen: boolean): string[] {
    const trades = insts.map((i) => JSON.stringify({ type: "subscribe", channel: "v4_trades", id: i.venueSymbol, batched: false }));
    return onOpen ? [BLOCK_HEIGHT, ...trades] : trades;
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return insts.map((i) => JSON.stringify({ type: "unsubscribe", channel: "v4_trades", id: i.venueSymbol }));
  }

  protected heartbeatFrame(): null {
    return null;
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseDydxMessage(text, lookup);
  }
}
