/**
 * The simulated dYdX v4 indexer's wire pieces shared by its REST router (`dydx.ts`) and websocket session
 * (`../ws/dydx.ts`): block heights, trade ids and trade rows built from the tape. Imports types only, so the tape
 * (`../tape.ts`) may use {@link dydxTradeId} for the normalised records without a cycle.
 *
 * - Blocks: one per tape slot (1 s; the real chain makes one about every 1.1 s): height = Unix second −
 *   {@link DYDX_HEIGHT_OFFSET}, chosen so that 2024-07-24T19:12:35Z is block 21,103,311, the height of the recorded
 *   trade `014206cf…` (src/venues/dydx/fixtures/README.md).
 * - Trade ids: the taker fill's event id as the indexer writes it, 24 hex digits: height, transaction index + 2 and
 *   event index, 32 bits each. Trade `i` of a slot (i < 15) is event `3i + 2`, liquidation `j` (j < 3) event `3j + 1`,
 *   so the ids of one block never collide and sort like the events.
 * - A tape liquidation is a `LIQUIDATED` row (its own taker fill: the liquidation order, a SELL when a long is
 *   liquidated) beside the slot's regular `LIMIT` rows.
 */
import type { PerpInstrumentSpec } from "../perp-model.js";
import type { Tape, TapeLiquidation, TapeTrade } from "../tape.js";

/** Unix second of block 0 of the simulated chain (see the module comment). */
export const DYDX_HEIGHT_OFFSET = 1_700_745_044;

/** How far back the tape looks for a market's previous trades (its `MAX_SCAN_SLOTS`, 6 h of 1-second slots). */
const TRADE_SCAN_MS = 6 * 3_600_000;

/** The block height of a time (ms). */
export const dydxHeight = (ms: number): number => Math.floor(ms / 1000) - DYDX_HEIGHT_OFFSET;

/** The first millisecond of block `height`. */
export const dydxBlockStart = (height: number): number => (height + DYDX_HEIGHT_OFFSET) * 1000;

const hex8 = (x: number): string => (x >>> 0).toString(16).padStart(8, "0");
/** Index of an event inside its tape slot (`seq = slot × 16 + index`). */
const indexOf = (seq: number): number => seq % 16;

/** The indexer trade id of a tape trade: block height, transaction index + 2, event index `3i + 2`. */
export function dydxTradeId(t: TapeTrade): string {
  return `${hex8(dydxHeight(t.time))}${hex8(2)}${hex8(3 * indexOf(t.seq) + 2)}`;
}

/** The indexer trade id of a tape liquidation's fill: event index `3j + 1`. */
export function dydxLiquidationId(l: TapeLiquidation): string {
  return `${hex8(dydxHeight(l.time))}${hex8(2)}${hex8(3 * indexOf(l.seq) + 1)}`;
}

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
