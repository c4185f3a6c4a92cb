/**
 * Lighter's wire as the simulator writes it, shared by the REST venue (`venues/lighter.ts`) and the websocket session
 * (`ws/lighter.ts`): market ids, trade ids, the trade row and its frames, the margin fractions of a market.
 *
 * No import from the tape or the model on purpose (structural types only): the tape's per-venue trade ids
 * (`tradeIdOf`, src/sim/tape.ts) can read {@link lighterTradeId} from here without an import cycle.
 */
import { fnv1a, mix32 } from "../market.js";
import { fixed } from "./wire.js";

/**
 * Real Lighter market ids of the simulated bases (market id → symbol as recorded: `orderBookDetails`, `funding-rates`
 * and frames of the fixtures in src/venues/lighter/fixtures/, the lighter-ts SDK's market snapshot): ETH 0, BTC 1,
 * SOL 2, 1000PEPE 4, NEAR 10, DOT 11, TON 12, SUI 16, 1000SHIB 17, UNI 30, LTC 35, ARB 50, OP 55. Bases without a
 * known id get {@link FIRST_UNKNOWN_MARKET_ID} + their position in the venue's list (illustrative).
 */
export const LIGHTER_MARKET_IDS: Readonly<Record<string, number>> = {
  ETH: 0,
  BTC: 1,
  SOL: 2,
  PEPE: 4,
  NEAR: 10,
  DOT: 11,
  TON: 12,
  SUI: 16,
  SHIB: 17,
  UNI: 30,
  LTC: 35,
  ARB: 50,
  OP: 55,
};
/** First id of the bases without a known Lighter id (above every recorded one the simulator lists). */
export const FIRST_UNKNOWN_MARKET_ID = 300;

/** Market id of `base`, the `index`-th instrument of the venue's list. */
export function lighterMarketIdOf(base: string, index: number): number {
  return LIGHTER_MARKET_IDS[base] ?? FIRST_UNKNOWN_MARKET_ID + index;
}

/** Offset of liquidation prints in the per-millisecond id space (trades use 0..15, liquidations 16..31). */
const LIQUIDATION_ID_OFFSET = 16;
/** Ids per millisecond. */
const IDS_PER_MS = 32;

/**
 * The `trade_id` of a tape event: `time × 32 + (seq mod 16)`, plus 16 for a liquidation print. Lighter's ids are one
 * counter growing with time (`sequence` ids, docs/methods/cvd.md), so a market's trades and liquidation prints must
 * be ordered by id as they are by time whatever push or page carries them: an id made of the time keeps them so,
 * and stays a safe integer (2026 ms × 32 ≈ 5.7e13). Unique per market (the store keys ids by market), not across
 * markets as Lighter's one counter is.
 */
export function lighterTradeId(e: { readonly time: number; readonly seq: number }, liquidation = false): number {
  return e.time * IDS_PER_MS + (e.seq % 16) + (liquidation ? LIQUIDATION_ID_OFFSET : 0);
}

/** What a trade row needs of a tape trade or liquidation. */
export interface LighterPrint {
  readonly time: number;
  readonly seq: number;
  /** Venue price and size strings (per venue unit: 1000 coins on `1000PEPE`). */
  readonly px: string;
  readonly sz: string;
  /** The taker bought (`is_maker_ask` true). */
  readonly takerBought: boolean;
  readonly liquidation: boolean;
}

/** A 16-hex-digit block of `h`. */
const hex16 = (h: number, k: number): string => (mix32(h ^ k) >>> 0).toString(16).padStart(8, "0") + (mix32(h ^ (k + 1)) >>> 0).toString(16).padStart(8, "0");

/**
 * One trade row of `trades` / `liquidation_trades` (websocket) and `recentTrades` (REST), the recorded field set less
 * the position fields of the accounts: ids, `type`, sizes and prices as strings, `usd_amount`, `is_maker_ask`,
 * `timestamp` (ms) and `transaction_time` (µs).
 */
export function lighterTradeRow(marketId: number, p: LighterPrint): Record<string, unknown> {
  const id = lighterTradeId(p, p.liquidation);
  const h = fnv1a(`lighter:${marketId}:${id}`);
  const askId = 281_474_976_710_656 + (h % 1_000_000_000);
  const bidId = 562_949_953_421_312 + (mix32(h) % 1_000_000_000);
  const takerAccount = 100_000 + (mix32(h ^ 1) % 700_000);
  const makerAccount = 100_000 + (mix32(h ^ 2) % 700_000);
  return {
    trade_id: id,
    trade_id_str: String(id),
    tx_hash: `${hex16(h, 3)}${hex16(h, 5)}${"0".repeat(48)}`,
    type: p.liquidation ? "liquidation" : "trade",
    market_id: marketId,
    size: p.sz,
    price: p.px,
    usd_amount: fixed(Number(p.px) * Number(p.sz), 6),
    ask_id: askId,
    ask_id_str: String(askId),
    bid_id: bidId,
    bid_id_str: String(bidId),
    ask_account_id: p.takerBought ? makerAccount : takerAccount,
    bid_account_id: p.takerBought ? takerAccount : makerAccount,
    is_maker_ask: p.takerBought,
    block_height: Math.floor(p.time / 100),
    timestamp: p.time,
    ...(p.liquidation ? { taker_fee: 10000 } : {}),
    transaction_time: p.time * 1000 + (h % 1000),
  };
}

/** A `trade:{id}` frame (`subscribed/trade` or `update/trade`): rows newest first, as the venue sends them. */
export function lighterTradeFrame(
  kind: "subscribed" | "update",
  marketId: number,
  trades: readonly Record<string, unknown>[],
  liquidations: readonly Record<string, unknown>[],
  nonce: number,
): string {
  return JSON.stringify({ channel: `trade:${marketId}`, liquidation_trades: liquidations, nonce, trades, type: `${kind}/trade` });
}

/** Margin fractions per 10,000 of a market allowing `maxLeverage`: maintenance 0.6 × initial (ETH 200/120, 1000PEPE 1000/600 as recorded). */
export function lighterMarginFractions(maxLeverage: number): { min: number; default: number; maintenance: number; closeout: number } {
  const min = Math.round(10_000 / maxLeverage);
  return { min, default: Math.min(10_000, Math.max(min, 500)), maintenance: Math.round(min * 0.6), closeout: Math.round(min * 0.4) };
}
