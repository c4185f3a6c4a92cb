import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { BYBIT_ENDPOINTS } from "./endpoints.js";
import { parseBybitMessage } from "./feed-parse.js";

/** Topics per subscribe request (the spot limit; linear has none stated). */
const BATCH = 10;

const SPEC: VenueSpec = {
  venue: "bybit",
  defaultBaseUrl: BYBIT_ENDPOINTS.ws.url,
  heartbeat: { everyMs: 20_000, idleOnly: false }, // `{"op":"ping"}` every 20 s
  rotateAfterMs: 0,
  sendSpacingMs: 0,
  // `args` may total 21,000 characters per connection: ~50 per symbol (two topics).
  maxSymbols: 300,
  urlCarriesStreams: false,
};

/**
 * Bybit v5 public linear feed (`/v5/public/linear`): `publicTrade.{symbol}` and, unless disabled,
 * `allLiquidation.{symbol}` per subscribed symbol (the old `liquidation.` topic is dead).
 */
export class BybitFeed extends VenueFeed {
  private reqId = 0;

  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/v5/public/linear`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return this.requests("subscribe", insts);
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return this.requests("unsubscribe", insts);
  }

  protected heartbeatFrame(): string {
    return JSON.stringify({ req_id: `ping-${++this.reqId}`, op: "ping" });
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseBybitMessage(text, lookup);
  }

  private requests(op: string, insts: readonly FeedInstrument[]): string[] {
    const topics = insts.flatMap((i) => [`publicTrade.${i.venueSymbol}`, ...(this.liquidations ? [`allLiquidation.${i.venueSymbol}`] : [])]);
    const out: string[] = [];
    for (let i = 0; i < topics.length; i += BATCH) out.push(JSON.stringify({ req_id: String(++this.reqId), op, args: topics.slice(i, i + BATCH) }));
    return out;
  }
}
