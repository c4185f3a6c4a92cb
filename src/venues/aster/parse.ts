import type { FundingSnapshot, PerpInstrument, PredictedFunding } from "../perp/types.js";
import { parseExchangeInfo, parseFundingInfo, parsePremiumIndex } from "../binance/parse.js";

/*
 * Pure parsers for Aster futures (`fapi.asterdex.com`, https://github.com/asterdex/api-docs,
 * aster-finance-futures-api.md). The wire is Binance USDⓈ-M's: decimals as strings, times in ms, `{code,msg}`
 * errors (read with `parseBinanceError`). Binance's parsers serve it with the venue key `aster`: the ones below take
 * it as an argument; `parseFundingRateHistory`, `parseOpenInterest` and `parseKlines` (../binance/parse.ts) take it
 * from the instrument. Where Aster's wire differs, those parsers already cope, and test/venues/aster.test.ts proves it
 * on Aster's bodies: fundingRate rows carry no `markPrice` (→ null); fundingInfo rows add `interestRate`, `time` and
 * caps that may be null; exchangeInfo's `serverTime` may be a string. `premiumIndex.lastFundingRate` doubles as the
 * venue's published next-rate estimate ({@link asterPredicted}). Records are per ONE coin (`1000<COIN>` undone).
 */

const VENUE = "aster";

/**
 * `GET /fapi/v1/exchangeInfo` → the USDT-margined perpetuals in status TRADING, per canonical base
 * (`1000PEPE` → PEPE × 1000). @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseAsterExchangeInfo(raw: unknown): PerpInstrument[] {
  return parseExchangeInfo(raw, VENUE);
}

/**
 * `GET /fapi/v1/fundingInfo` → venue symbol → funding interval in hours (a symbol not listed settles
 * every 8 h, as on Binance; the live body lists BTCUSDT at 8 h and the docs ZORAUSDT at 4 h). Aster's extra fields (`interestRate`, `time`, nullable caps) are ignored.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseAsterFundingInfo(raw: unknown): Map<string, number> {
  return parseFundingInfo(raw, VENUE);
}

/**
 * `GET /fapi/v1/premiumIndex` (an object with `symbol`, an array without) → funding snapshots of the listed
 * instruments: `lastFundingRate` is the rate accruing for the settlement at `nextFundingTime`, a fraction per
 * interval (interval from `intervals`, else 8 h); mark/index per ONE coin; Aster reports no premium (null). @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseAsterPremiumIndex(raw: unknown, instruments: ReadonlyMap<string, PerpInstrument>, intervals: ReadonlyMap<string, number>): FundingSnapshot[] {
  return parsePremiumIndex(raw, instruments, intervals, VENUE);
}

/**
 * The venue's published estimate of the next funding rate from a premiumIndex snapshot: Aster's
 * `lastFundingRate` is the running estimate for the settlement at `nextFundingTime` (fraction per the symbol's
 * interval). Null when the snapshot has no next settlement time (the venue then publishes no estimate).
 */
export function asterPredicted(snap: FundingSnapshot): PredictedFunding | null {
  if (snap.nextFundingTime === null) return null;
  return { venue: snap.venue, base: snap.base, rate: snap.fundingRate, nextFundingTime: snap.nextFundingTime, fundingIntervalHours: snap.fundingIntervalHours };
}
