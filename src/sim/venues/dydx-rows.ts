/**
 * The simulated dYdX v4 indexer's trade rows, built from the tape for its REST router (`dydx.ts`) and websocket
 * session (`../ws/dydx.ts`): a tape trade is a `LIMIT` row, a tape liquidation a `LIQUIDATED` row (its own taker fill:
 * the liquidation order, a SELL when a long is liquidated) beside the slot's regular rows. Ids and heights:
 * `dydx-wire.ts`.
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import type { Tape, TapeLiquidation, TapeTrade } from "../tape.js";
import { dydxHeight, dydxLiquidationId, dydxTradeId } from "./dydx-wire.js";

/** How far back the tape looks for a market's previous trades (its `MAX_SCAN_SLOTS`, 6 h of 1-second slots). */
const TRADE_SCAN_MS = 6 * 3_600_000;

/** One trade row, as `/trades/perpetualMarket/{ticker}` and `v4_trades` send it (REST rows add `createdAtHeight`). */
export interface DydxTradeRow {
  id: string;
  side: "BUY" | "SELL";
  size: string;
  price: string;
  type: "LIMIT" | "LIQUIDATED";
  createdAt: string;
  createdAtHeight: string;
}

/** A tape event with its wire row and the order key (time, then id). */
export interface DydxEvent {
  time: number;
  row: DydxTradeRow;
}

/** The row of a tape trade (`LIMIT`, the taker's side). */
export function tradeEvent(t: TapeTrade): DydxEvent {
  return {
    time: t.time,
    row: {
      id: dydxTradeId(t),
      side: t.side === "buy" ? "BUY" : "SELL",
      size: t.sz,
      price: t.px,
      type: "LIMIT",
      createdAt: new Date(t.time).toISOString(),
      createdAtHeight: String(dydxHeight(t.time)),
    },
  };
}

/** The row of a tape liquidation (`LIQUIDATED`: the liquidation order takes, selling when a long is liquidated). */
export function liquidationEvent(l: TapeLiquidation): DydxEvent {
  return {
    time: l.time,
    row: {
      id: dydxLiquidationId(l),
      side: l.side === "long" ? "SELL" : "BUY",
      size: l.sz,
      price: l.px,
      type: "LIQUIDATED",
      createdAt: new Date(l.time).toISOString(),
      createdAtHeight: String(dydxHeight(l.time)),
    },
  };
}

const byTimeThenId = (a: DydxEvent, b: DydxEvent): number => a.time - b.time || (a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0);

/** Every trade and liquidation row of `inst` with `fromMs <= time < toMs`, oldest first. */
export function dydxEventsOf(tape: Tape, inst: PerpInstrumentSpec, fromMs: number, toMs: number): DydxEvent[] {
  return [...tape.tradesOf(inst, fromMs, toMs).map(tradeEvent), ...tape.liquidationsOf(inst, fromMs, toMs).map(liquidationEvent)].sort(byTimeThenId);
}

/**
 * Up to `limit` rows of `inst` with `minMs <= time < beforeMs`, NEWEST first, as the indexer lists a market's trades
 * (by block height, descending): the tape's trades and its liquidations' fills merged.
 */
export function dydxRowsBefore(tape: Tape, inst: PerpInstrumentSpec, beforeMs: number, limit: number, minMs: number): DydxTradeRow[] {
  const trades = tape.tradesBefore(inst, beforeMs, limit, minMs);
  // Liquidations down to the oldest trade returned, or as far as the tape scans trades (6 h) when they ran out first.
  const floor = trades.length < limit ? Math.max(minMs, beforeMs - TRADE_SCAN_MS) : trades[trades.length - 1]!.time;
  const events = [...trades.map(tradeEvent), ...tape.liquidationsOf(inst, Math.max(minMs, floor), beforeMs).map(liquidationEvent)];
  return events
    .sort((a, b) => byTimeThenId(b, a))
    .slice(0, limit)
    .map((e) => e.row);
}
