import { defineStream } from "../../src/registry/stream.js";
import { LiquidationEvent } from "../streams/common.js";

/** `GET /stream/liquidations[?symbol=BTC]`: every liquidation as it is stored, all symbols or one. */
export const liquidationStream = defineStream({
  topic: "liquidations",
  title: "Liquidation stream",
  path: "/stream/liquidations",
  symbol: "optional",
  pricePerMinuteUsd: "0.002",
  summary: "Forced liquidations on every venue with a public liquidation feed (as /liquidation/recent lists them) pushed as they happen, all symbols or one",
  description:
    "Each event is one liquidation, exactly as /liquidation/recent lists it (id liq_<unix_seconds>_<sequence>), sent when the venue's feed delivers it. symbol filters by base (BTC, BTCUSDT and BTC-USDT-SWAP all mean BTC); without it every symbol is sent. Venue coverage as in /liquidation/recent: Binance sends at most one liquidation per symbol per second.",
  resumable:
    "Last-Event-ID replays the stored liquidations after that id of the last LIVE_RESUME_WINDOW_SEC (10 minutes), at most the newest 200, in id order; when that cuts the replay, replay_truncated comes first (the rest: /liquidation/recent)",
  events: { liquidation: LiquidationEvent },
  exampleSymbol: "BTC",
});
