import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { type FeedOptions, VenueFeed, type VenueSpec } from "../../ingestion/feeds/feed-base.js";
import { DERIBIT_ENDPOINTS } from "./endpoints.js";
import { parseDeribitMessage, TEST_REQUEST } from "./feed-parse.js";

/** Channels per `public/subscribe` request. */
const BATCH = 100;
/** Seconds between the server's `test_request` heartbeats we ask for with `public/set_heartbeat` (Deribit's minimum is 10). */
export const DERIBIT_HEARTBEAT_SEC = 30;
/**
 * Trade channel interval: `raw` is only available to authorised connections (Deribit docs, subscription channels:
 * "raw interval is only available to authorized users"); `100ms` batches every trade of 100 ms, none dropped.
 */
const INTERVAL = "100ms";

const SPEC: VenueSpec = {
  venue: "deribit",
  defaultBaseUrl: DERIBIT_ENDPOINTS.ws.url,
  // Besides answering the server's test_requests, a `public/test` after 20 s without traffic keeps quiet books alive.
  heartbeat: { everyMs: 20_000, idleOnly: true },
  rotateAfterMs: 0,
  // Non-matching requests share the 20/s credit budget (endpoints.ts): at most 10 client messages per second.
  sendSpacingMs: 100,
  maxSymbols: 500,
  urlCarriesStreams: false,
};

/** The trades channel of a perpetual: `trades.BTC-PERPETUAL.100ms`. */
export function deribitTradesChannel(instrumentName: string): string {
  return `trades.${instrumentName}.${INTERVAL}`;
}

/**
 * Deribit feed (`/ws/api/v2`, JSON-RPC 2.0): one `trades.{instrument}.100ms` channel per subscribed perpetual.
 * Liquidations come from the same channel (trades carrying a `liquidation` field), so they are known for
 * subscribed perpetuals only; Deribit has no all-market liquidation channel. On connecting the feed asks for
 * server heartbeats (`public/set_heartbeat`, every {@link DERIBIT_HEARTBEAT_SEC} s) and answers each
 * `test_request` with `public/test` (the server closes a connection that does not answer).
 */
export class DeribitFeed extends VenueFeed {
  private requestId = 0;

  constructor(opts: FeedOptions) {
    super(SPEC, opts);
  }

  protected endpoint(): string {
    return `${this.baseUrl}/ws/api/v2`;
  }

  protected subscribeFrames(insts: readonly FeedInstrument[], onOpen: boolean): string[] {
    const hb = onOpen ? [this.request("public/set_heartbeat", { interval: DERIBIT_HEARTBEAT_SEC })] : [];
    return [...hb, ...this.channelRequests("public/subscribe", insts)];
  }

  protected unsubscribeFrames(insts: readonly FeedInstrument[]): string[] {
    return this.channelRequests("public/unsubscribe", insts);
  }

  protected heartbeatFrame(): string {
    return this.request("public/test", {});
  }

  protected parse(text: string, lookup: InstrumentLookup): ParsedFrame {
    const f = parseDeribitMessage(text, lookup);
    // The answer must go out on the connection that asked; the primary is the only one (no rotation).
    if (f.control?.message === TEST_REQUEST) queueMicrotask(() => this.probe());
    return f;
  }

  private channelRequests(method: string, insts: readonly FeedInstrument[]): string[] {
    const channels = insts.map((i) => deribitTradesChannel(i.venueSymbol));
    const out: string[] = [];
    for (let i = 0; i < channels.length; i += BATCH) out.push(this.request(method, { channels: channels.slice(i, i + BATCH) }));
    return out;
  }

  private request(method: string, params: object): string {
    return JSON.stringify({ jsonrpc: "2.0", id: ++this.requestId, method, params });
  }
}
