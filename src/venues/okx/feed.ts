import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { OKX_ENDPOINTS } from "./endpoints.js";
import { parseOkxMessage } from "./feed-parse.js";

/** Channel arguments per (un)subscribe request (OKX allows 480 requests per hour per connection). */
const BATCH = 100;

const SPEC: VenueSpec = {
  venue: "okx",
  defaultBaseUrl: OKX_ENDPOINTS.ws.url,
  // OKX drops a connection after 30 s without traffic: text `ping` after 20 s idle, answered by `pong`.
  heartbeat: { everyMs: 20_000, idleOnly: true },
  rotateAfterMs: 0,
  sendSpacingMs: 0,
  maxSymbols: 500,
  urlCarriesStreams: false,
};

type Arg = { channel: string; instId?: string; instType?: string };

/**
 * OKX v5 public feed (`/ws/v5/public`): `trades` per subscribed swap and, unless disabled, one
 * `liquidation-orders` instType SWAP subscription per connection (all swaps, filtered to known
 * instruments). A `notice` 64008 (service upgrade) starts a make-before-break rotation.
 */
export class OkxFeed extends VenueFeed {
  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/ws/v5/public`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[], onOpen: boolean): string[] {
    const liq: Arg[] = onOpen && this.liquidations ? [{ channel: "liquidation-orders", instType: "SWAP" }] : [];
    return requests("subscribe", [...liq, ...insts.map((i) => ({ channel: "trades", instId: i.venueSymbol }))]);
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return requests(
      "unsubscribe",
      insts.map((i) => ({ channel: "trades", instId: i.venueSymbol })),
    );
  }

  protected heartbeatFrame(): string {
    return "ping";
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseOkxMessage(text, lookup);
  }
}

function requests(op: string, args: Arg[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += BATCH) out.push(JSON.stringify({ op, args: args.slice(i, i + BATCH) }));
  return out;
}
