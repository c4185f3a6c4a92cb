import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { LIGHTER_ENDPOINTS } from "./endpoints.js";
import { parseLighterMessage } from "./feed-parse.js";
import { lighterMarketId } from "./parse.js";
import { LIGHTER } from "./venue-id.js";

/** Connection rules from Lighter's docs (https://apidocs.lighter.xyz/docs/rate-limits, websocket reference). */
const SPEC: VenueSpec = {
  venue: LIGHTER,
  defaultBaseUrl: LIGHTER_ENDPOINTS.ws.url,
  // The server drops a connection the client sent nothing on for 2 minutes; a `{"type":"ping"}` (answered
  // `{"type":"pong"}`) or a protocol ping satisfies it: one every 30 s.
  heartbeat: { everyMs: 30_000, idleOnly: false },
  rotateAfterMs: 0,
  // The docs cap connections (100 per IP, 80 new per minute) and subscriptions, not client messages per second, but a
  // burst of subscribes was seen to get a connection closed (open-source recorders subscribe in batches): one per 300 ms.
  sendSpacingMs: 300,
  // 100 subscriptions per connection (1,000 per IP).
  maxSymbols: 100,
  urlCarriesStreams: false,
};

/**
 * Lighter feed (`/stream?readonly=true`: the read-only session is also served to IPs of regions the venue restricts):
 * one `trade/{market_id}` subscription per market, which carries the market's trades and, in `liquidation_trades`, its
 * liquidations (streamed markets only: there is no all-market liquidation channel). Frames name markets by id only,
 * so the feed keeps the market id → instrument map of what it subscribed (ids from the client's instruments).
 */
export class LighterFeed extends VenueFeed {
  readonly #byMarket = new Map<string, FeedInstrument>();

  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/stream?readonly=true`;
  }

  /** The `trade/{id}` channels of `insts`; an instrument without a market id (not listed by the client) is logged and left out. */
  #channels(insts: readonly FeedInstrument[]): string[] {
    const out: string[] = [];
    for (const i of insts) {
      const id = lighterMarketId(i);
      if (id === undefined) {
        this.log.warn({ symbol: i.venueSymbol }, "instrument without a Lighter market id; not subscribed");
        continue;
      }
      this.#byMarket.set(String(id), i);
      out.push(`trade/${id}`);
    }
    return out;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return this.#channels(insts).map((channel) => JSON.stringify({ type: "subscribe", channel }));
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return this.#channels(insts).map((channel) => JSON.stringify({ type: "unsubscribe", channel }));
  }

  protected heartbeatFrame(): string {
    return JSON.stringify({ type: "ping" });
  }

  protected parse(text: string, _lookup: InstrumentLookup): ParsedFrame {
    return parseLighterMessage(text, this.#byMarket);
  }
}
