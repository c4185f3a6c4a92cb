import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { BITGET_ENDPOINTS } from "./endpoints.js";
import { parseBitgetMessage } from "./feed-parse.js";
import { BITGET_PRODUCT_TYPE } from "./parse.js";

/**
 * Channel arguments per (un)subscribe message. Bitget caps one message at 4096 bytes; an argument is about
 * 60 bytes (`{"instType":"USDT-FUTURES","channel":"trade","instId":"1000BONKUSDT"}`), so 30 stay well under.
 */
const BATCH = 30;

const SPEC: VenueSpec = {
  venue: "bitget",
  defaultBaseUrl: BITGET_ENDPOINTS.ws.url,
  // The docs ask for the string `ping` every 30 s (answered by `pong`) and close a connection that sent no ping for
  // 30 s (English page; 2 min on the Chinese one): 25 s keeps a margin under the stricter reading.
  heartbeat: { everyMs: 25_000, idleOnly: false },
  rotateAfterMs: 0,
  // At most 10 messages per second per connection, pings included.
  sendSpacingMs: 120,
  // 1000 channels per connection are allowed; the docs advise at most 50 for stability.
  maxSymbols: 50,
  urlCarriesStreams: false,
};

/**
 * Bitget v2 public feed (`/v2/ws/public`): the `trade` channel of each subscribed USDT-FUTURES symbol. Trades only:
 * the v2 public websocket publishes no liquidations (see feed-parse.ts), so `liquidations` has no effect here.
 */
export class BitgetFeed extends VenueFeed {
  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/v2/ws/public`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return requests("subscribe", insts);
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return requests("unsubscribe", insts);
  }

  protected heartbeatFrame(): string {
    return "ping";
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseBitgetMessage(text, lookup);
  }
}

function requests(op: "subscribe" | "unsubscribe", insts: readonly FeedInstrument[]): string[] {
  const args = insts.map((i) => ({ instType: BITGET_PRODUCT_TYPE, channel: "trade", instId: i.venueSymbol }));
  const out: string[] = [];
  for (let i = 0; i < args.length; i += BATCH) out.push(JSON.stringify({ op, args: args.slice(i, i + BATCH) }));
  return out;
}
