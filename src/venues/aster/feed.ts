import type { InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import type { FeedOptions, VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { BinanceFeed } from "../binance/feed.js";
import { ASTER_ENDPOINTS } from "./endpoints.js";
import { parseAsterMessage } from "./feed-parse.js";

/** Connection rules from Aster's "Websocket Market Streams" docs (https://github.com/asterdex/api-docs). */
const SPEC: VenueSpec = {
  venue: "aster",
  defaultBaseUrl: ASTER_ENDPOINTS.ws.url,
  // The server sends a ping frame every 5 min and drops a connection without a pong within 15 min; `ws` answers
  // pings with pongs itself. No client probe: the stale timer then watches for data, not for replies.
  heartbeat: null,
  // "A single connection is only valid for 24 hours": rotate at 23 h (make-before-break).
  rotateAfterMs: 23 * 3_600_000,
  // 10 incoming messages/s per connection: at most 5 of ours.
  sendSpacingMs: 200,
  // 200 streams per connection, one of them the liquidation stream.
  maxSymbols: 199,
  urlCarriesStreams: true,
};

/**
 * Aster futures feed: Binance's protocol (see {@link BinanceFeed}) on Aster's combined endpoint
 * `/stream?streams=…` (Binance's routed `/market/stream` is Binance's own). Streams: `<symbol>@aggTrade` per
 * subscribed symbol and `!forceOrder@arr` (all symbols, filtered to known instruments; for each symbol only the
 * latest liquidation per 1000 ms, so a lower bound). SUBSCRIBE / UNSUBSCRIBE in batches of 50, ≥ 200 ms apart.
 */
export class AsterFeed extends BinanceFeed {
  constructor(opts: FeedOptions) {
    super(opts, SPEC, "/stream");
  }

  protected override parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseAsterMessage(text, lookup);
  }
}
