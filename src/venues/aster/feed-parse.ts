import { decode, type FeedInstrument, frame, type InstrumentLookup, type ParsedFrame } from "../../ingestion/feeds/normalise.js";
import { parseBinanceAggTrades, parseBinanceJson } from "../binance/feed-parse.js";

/*
 * Aster futures stream frames (https://github.com/asterdex/api-docs aster-finance-futures-api.md, "Websocket Market
 * Streams"): Binance's wire, so Binance's JSON path reads them with the venue key `aster`: combined-stream wrappers
 * `{"stream","data"}` (raw payloads too) carrying `aggTrade` (`m: true` = buyer is maker → taker SELL; trade id =
 * aggregate id `a`, so a trade is counted once) and `forceOrder` (`o.S` is the liquidation ORDER side: SELL → a
 * long was liquidated; size `o.z` filled else `o.q`; price `o.ap` else `o.p`); `{"result":null,"id":n}` acks.
 * What differs: the docs list request errors as a bare `{"code","msg"}` (no `id`), read here as a venue error.
 * Binance's layout scanner is not used: the docs' `aggTrade` puts `s` before `a`, not the key order it matches.
 */

const VENUE = "aster";

/** One raw Aster WS message (text or parsed JSON) → trades / liquidations / control. Never throws. */
export function parseAsterMessage(raw: unknown, lookup: InstrumentLookup): ParsedFrame {
  const d = decode(raw);
  if (!d.ok) return frame({ error: d.error });
  const v = d.value;
  if (typeof v === "object" && v !== null && !Array.isArray(v) && "code" in v && "msg" in v && !("id" in v)) {
    return frame({ control: { type: "venue_error", message: JSON.stringify(v) } });
  }
  return parseBinanceJson(v, lookup, VENUE);
}

/** A REST `GET /fapi/v1/aggTrades` body (array of rows `a,p,q,f,l,T,m`, oldest first) for `inst`. Never throws. */
export function parseAsterAggTrades(raw: unknown, inst: FeedInstrument): ParsedFrame {
  return parseBinanceAggTrades(raw, inst, VENUE);
}
