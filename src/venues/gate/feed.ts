import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { GATE_ENDPOINTS } from "./endpoints.js";
import { parseGateMessage } from "./feed-parse.js";

/** Contracts per (un)subscribe request: Gate documents no limit, so requests stay small. */
const BATCH = 100;

const SPEC: VenueSpec = {
  venue: "gate",
  defaultBaseUrl: GATE_ENDPOINTS.ws.url,
  // Gate's demo client sends `futures.ping` every 10 s (answered by `futures.pong`); we send it after 10 s idle.
  heartbeat: { everyMs: 10_000, idleOnly: true },
  rotateAfterMs: 0,
  sendSpacingMs: 0,
  maxSymbols: 500,
  urlCarriesStreams: false,
};

/**
 * Gate Futures WebSocket v4 feed (`/v4/ws/usdt`): `futures.trades` per subscribed contract and, unless
 * disabled, one `futures.public_liquidates` subscription with payload `["!all"]` per connection (every
 * contract, filtered to known instruments). A system notice `{type: "upgrade"}` starts a reconnect.
 */
export class GateFeed extends VenueFeed {
  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/v4/ws/usdt`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[], onOpen: boolean): string[] {
    const liq = onOpen && this.liquidations ? [request("futures.public_liquidates", "subscribe", ["!all"])] : [];
    return [...liq, ...batches("subscribe", insts)];
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return batches("unsubscribe", insts);
  }

  protected heartbeatFrame(): string {
    return JSON.stringify({ time: Math.floor(Date.now() / 1000), channel: "futures.ping" });
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    return parseGateMessage(text, lookup);
  }
}

/** One Gate request frame: `{time (s), channel, event, payload}`. */
function request(channel: string, event: string, payload: string[]): string {
  return JSON.stringify({ time: Math.floor(Date.now() / 1000), channel, event, payload });
}

function batches(event: string, insts: readonly FeedInstrument[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < insts.length; i += BATCH)
    out.push(
      request(
        "futures.trades",
        event,
        insts.slice(i, i + BATCH).map((x) => x.venueSymbol),
      ),
    );
  return out;
}
