import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { KRAKEN_ENDPOINTS } from "./endpoints.js";
import { parseKrakenMessage } from "./feed-parse.js";
import { KRAKEN } from "./parse.js";

/** Product ids per (un)subscribe message. */
const BATCH = 50;

/** The public `heartbeat` feed's subscription: sent on connecting and, as our keepalive, every 30 s. */
export const KRAKEN_HEARTBEAT_REQUEST = JSON.stringify({ event: "subscribe", feed: "heartbeat" });

const SPEC: VenueSpec = {
  venue: KRAKEN,
  defaultBaseUrl: KRAKEN_ENDPOINTS.ws.url,
  // Kraken asks for "a ping request at least every 60 seconds"; it documents no application ping for this socket, so
  // the keepalive is a request it answers: the heartbeat subscription (its `subscribed` answer is our pong).
  heartbeat: { everyMs: 30_000, idleOnly: false },
  rotateAfterMs: 0,
  // 100 requests per connection, refilled every second (ccxt `requestLimit`): at most 10 per second here.
  sendSpacingMs: 100,
  // No published product limit per connection (100 connections per client); 200 keeps snapshots small.
  maxSymbols: 200,
  urlCarriesStreams: false,
};

/**
 * Kraken Futures feed (`/ws/v1`): the `trade` feed of each subscribed `PF_` perpetual (a `trade_snapshot` of recent
 * trades on subscribing, then one message per fill) and the `heartbeat` feed. Liquidations are the trades of `type`
 * `liquidation` on the same feed, so they are known for the subscribed perpetuals only: Kraken has no all-market
 * liquidation channel.
 */
export class KrakenFeed extends VenueFeed {
  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/ws/v1`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[], onOpen: boolean): string[] {
    return [...(onOpen ? [KRAKEN_HEARTBEAT_REQUEST] : []), ...requests("subscribe", insts)];
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return requests("unsubscribe", insts);
  }

  protected heartbeatFrame(): string {
    return KRAKEN_HEARTBEAT_REQUEST;
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseKrakenMessage(text, lookup);
  }
}

function requests(event: "subscribe" | "unsubscribe", insts: readonly FeedInstrument[]): string[] {
  const ids = insts.map((i) => i.venueSymbol);
  const out: string[] = [];
  for (let i = 0; i < ids.length; i += BATCH) out.push(JSON.stringify({ event, feed: "trade", product_ids: ids.slice(i, i + BATCH) }));
  return out;
}
