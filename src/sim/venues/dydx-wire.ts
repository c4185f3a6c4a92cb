/**
 * The simulated dYdX v4 indexer's block heights and trade ids, shared by its REST router (`dydx.ts`), its websocket
 * session (`../ws/dydx.ts`), their rows (`dydx-rows.ts`) and the tape's normalised records (`../tape.ts`
 * `tradeIdOf`). Imports nothing of the tape, so the tape may import it.
 *
 * - Blocks: one per tape slot (1 s; the real chain makes one about every 1.1 s): height = Unix second −
 *   {@link DYDX_HEIGHT_OFFSET}, chosen so that 2024-07-24T19:12:35Z is block 21,103,311, the height of the recorded
 *   trade `014206cf…` (src/venues/dydx/fixtures/README.md).
 * - Trade ids: the taker fill's event id as the indexer writes it, 24 hex digits: height, transaction index + 2 and
 *   event index, 32 bits each. Trade `i` of a slot (i < 15) is event `3i + 2`, liquidation `j` (j < 3) event `3j + 1`,
 *   so the ids of one block never collide and sort like the events.
 */
import type { PerpSimVenue } from "../perp-model.js";

/** dYdX's key in the simulator's perp model. */
export const DYDX_SIM = "dydx" as const satisfies PerpSimVenue;

/** The part of a tape trade or liquidation an id is made of: its time and `seq` (`slot × 16 + index`). */
export interface TapeEventIds {
  readonly time: number;
  readonly seq: number;
}

/** Unix second of block 0 of the simulated chain (see the module comment). */
export const DYDX_HEIGHT_OFFSET = 1_700_745_044;

/** The block height of a time (ms). */
export const dydxHeight = (ms: number): number => Math.floor(ms / 1000) - DYDX_HEIGHT_OFFSET;

/** The first millisecond of block `height`. */
export const dydxBlockStart = (height: number): number => (height + DYDX_HEIGHT_OFFSET) * 1000;

const hex8 = (x: number): string => (x >>> 0).toString(16).padStart(8, "0");
/** Index of an event inside its tape slot (`seq = slot × 16 + index`). */
const indexOf = (seq: number): number => seq % 16;

/** The indexer trade id of a tape trade: block height, transaction index + 2, event index `3i + 2`. */
export function dydxTradeId(t: TapeEventIds): string {
  return `${hex8(dydxHeight(t.time))}${hex8(2)}${hex8(3 * indexOf(t.seq) + 2)}`;
}

/** The indexer trade id of a tape liquidation's fill: event index `3j + 1`. */
export function dydxLiquidationId(l: TapeEventIds): string {
  return `${hex8(dydxHeight(l.time))}${hex8(2)}${hex8(3 * indexOf(l.seq) + 1)}`;
}
