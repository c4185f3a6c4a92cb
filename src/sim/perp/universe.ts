/**
 * The simulated perp universe: every instrument of each venue (its symbol, units, decimals, funding interval and
 * cap, listing time, leverage), built once per model from the listings (`listings.ts`), plus Binance's BTC and ETH
 * quarterlies, which roll with time. Gate sizes in `quanto_multiplier` contracts (`ctVal`), Deribit's BTC/ETH perps
 * are inverse (USD contracts, `ctVal` USD each) beside USDC linear perps.
 */
import { clamp } from "../../lib/math.js";
import { DAY_MS } from "../../lib/time.js";
import { fnv1a, type MarketModel } from "../market.js";
import {
  ABSENT_BASES,
  ASTER_MULTIPLIED,
  BASES,
  BINANCE_CAP_ADJUSTED,
  BYBIT_SUFFIX_MULTIPLIED,
  DERIBIT_INVERSE,
  DERIBIT_LINEAR_BASES,
  DERIBIT_LINEAR_LISTED,
  FUNDING_INTERVAL_OVERRIDES,
  GATE_QUANTO,
  HL_DELISTED_BASES,
  HOURLY_VENUES,
  htxContractSize,
  MULTIPLIED_BASES,
  type BaseRow,
} from "./listings.js";
import { PERP_SIM_VENUES, type PerpInstrumentSpec, type PerpModel, type PerpSimVenue } from "./types.js";

/** Decimals of a price quoted per `unitUsd` (≈ 5 significant digits), capped at `max`. */
function priceDecimalsFor(unitUsd: number, max: number): number {
  return clamp(Math.ceil(5 - Math.log10(unitUsd)), 0, max);
}

/** Decimals of a quantity whose unit is worth `unitUsd`: a lot worth ≈ 0.03-0.3 units (BTC 0.001, SOL 0.1). */
function qtyDecimalsFor(unitUsd: number): number {
  return clamp(Math.round(Math.log10(unitUsd)) - 1, 0, 3);
}

/** Days between a base's first perp listing (Binance) and its listing on each venue (illustrative). */
const LIST_DELAY_DAYS: Readonly<Record<PerpSimVenue, number>> = {
  binance: 0,
  bybit: 20,
  okx: 3,
  hyperliquid: 20,
  gate: 5,
  bitget: 15,
  deribit: 0,
  aster: 30,
  htx: 10,
  kraken: 30,
  dydx: 40,
  lighter: 60,
};
/**
 * Earliest listing per venue: Aster's perps went live in 2025 (after the APX Finance / Astherus merger), Lighter's
 * mainnet in 2025 (illustrative dates).
 */
const FIRST_LISTING: Partial<Record<PerpSimVenue, number>> = { aster: Date.parse("2025-03-31T08:00:00.000Z"), lighter: Date.parse("2025-01-15T08:00:00.000Z") };

/**
 * Funding cap per interval (fraction). Binance/Bybit/OKX/Hyperliquid as before; Gate, Aster and HTX like Binance (Gate's
 * `funding_rate_limit`, Aster's `adjustedFundingRateCap`), Bitget 0.375 %/1.5 % like OKX, Deribit 0.5 % per 8h
 * ("the funding cap can vary by instrument": Deribit Funding Specifications). Illustrative levels.
 */
function fundingCapOf(venue: PerpSimVenue, base: string, interval: number, major: boolean): number {
  switch (venue) {
    case "binance":
      return BINANCE_CAP_ADJUSTED[base] ?? (interval !== 8 ? 0.02 : major ? 0.003 : 0.0075);
    case "bybit":
      return major ? 0.005 : 0.01;
    case "okx":
      return major ? 0.00375 : 0.015;
    case "hyperliquid":
      return 0.32; // Hyperliquid: 4 %/h, as an 8h equivalent
    case "gate":
    case "aster":
    case "htx":
      return interval !== 8 ? 0.02 : major ? 0.003 : 0.0075;
    case "bitget":
      return major ? 0.00375 : 0.015;
    case "deribit":
      return 0.005;
    case "kraken":
    case "dydx":
    case "lighter":
      return major ? 0.003 : 0.0075; // per 8h equivalent, like Binance (illustrative)
  }
}

/** First-tier max leverage: Binance, Gate and Bitget 125x/75x; Bybit, OKX, Aster 100x/50x; Deribit 50x (inverse) / 25x; Hyperliquid per base. */
function maxLeverageOf(venue: PerpSimVenue, row: BaseRow, major: boolean): number {
  switch (venue) {
    case "hyperliquid":
      return row.hlLeverage;
    case "binance":
    case "gate":
    case "bitget":
      return major ? 125 : 75;
    case "deribit":
      return major ? 50 : 25;
    default:
      return major ? 100 : 50;
  }
}

/** Last Friday of the quarter-end month at 08:00 UTC, first one strictly after `nowMs` (Binance quarterlies). */
export function nextQuarterlyExpiry(nowMs: number): number {
  const d = new Date(nowMs);
  let y = d.getUTCFullYear();
  let m = d.getUTCMonth();
  for (;;) {
    if (m % 3 === 2) {
      const last = new Date(Date.UTC(y, m + 1, 0, 8));
      const back = (last.getUTCDay() - 5 + 7) % 7;
      const expiry = last.getTime() - back * DAY_MS;
      if (expiry > nowMs) return expiry;
    }
    m += 1;
    if (m === 12) {
      m = 0;
      y += 1;
    }
  }
}

function yymmdd(ms: number): string {
  return new Date(ms).toISOString().slice(2, 10).replaceAll("-", "");
}

/** The instrument look-ups of the perp model. */
export type PerpUniverse = Pick<PerpModel, "instruments" | "instrument" | "perpOf">;

/** The perp universe over `market` (anchor prices set decimals and OKX lot sizes). */
export function createUniverse(market: MarketModel): PerpUniverse {
  function makeSpec(venue: PerpSimVenue, row: BaseRow, over: Partial<PerpInstrumentSpec> & Pick<PerpInstrumentSpec, "symbol" | "venueBase">): PerpInstrumentSpec {
    const anchor = market.params(row.base).anchorUsd;
    const multiplier = over.multiplier ?? 1;
    const unit = anchor * multiplier;
    const interval = HOURLY_VENUES.includes(venue) ? 1 : (FUNDING_INTERVAL_OVERRIDES[venue][row.base] ?? 8);
    const major = row.base === "BTC" || row.base === "ETH";
    const fundingCap = fundingCapOf(venue, row.base, interval, major);
    const priceDecimals = priceDecimalsFor(unit, venue === "okx" ? 10 : 7);
    return {
      venue,
      base: row.base,
      quote: venue === "hyperliquid" ? "USDC" : "USDT",
      kind: "perpetual",
      inverse: false,
      multiplier,
      ctVal: 1,
      ctValStr: "1",
      fundingIntervalHours: interval,
      deliveryTime: 0,
      listTime: Math.max(Date.parse(`${row.listed}T08:00:00.000Z`) + LIST_DELAY_DAYS[venue] * DAY_MS, FIRST_LISTING[venue] ?? 0),
      priceDecimals,
      qtyDecimals: qtyDecimalsFor(unit),
      tickSize: Number(`1e-${priceDecimals}`),
      fundingCap,
      fundingInfoListed: (venue === "binance" && (interval !== 8 || BINANCE_CAP_ADJUSTED[row.base] !== undefined)) || (venue === "aster" && interval !== 8),
      continuousFunding: venue === "deribit",
      delisted: false,
      target: true,
      maxLeverage: maxLeverageOf(venue, row, major),
      szDecimals: row.szDecimals,
      stream: fnv1a(`perp:${venue}:${over.symbol}`),
      ...over,
    };
  }

  const staticLists = new Map<PerpSimVenue, PerpInstrumentSpec[]>();
  for (const venue of PERP_SIM_VENUES) {
    const list: PerpInstrumentSpec[] = [];
    const rows = BASES.filter((r) => !ABSENT_BASES[venue].includes(r.base) && (venue !== "deribit" || r.base in DERIBIT_INVERSE || DERIBIT_LINEAR_BASES.includes(r.base)));
    for (const row of rows) {
      const mult = MULTIPLIED_BASES[row.base] ?? 1;
      if (venue === "binance" || venue === "bybit") {
        const suffix = venue === "bybit" && BYBIT_SUFFIX_MULTIPLIED.includes(row.base);
        const vb = mult === 1 ? row.base : suffix ? `${row.base}${mult}` : `${mult}${row.base}`;
        list.push(makeSpec(venue, row, { symbol: `${vb}USDT`, venueBase: vb, multiplier: mult }));
      } else if (venue === "okx") {
        const ctVal = Number(row.ctVal);
        const unit = market.params(row.base).anchorUsd * ctVal;
        const lot = unit >= 50 ? 2 : unit >= 5 ? 1 : 0;
        list.push(makeSpec(venue, row, { symbol: `${row.base}-USDT-SWAP`, venueBase: row.base, ctVal, ctValStr: row.ctVal, qtyDecimals: lot }));
      } else if (venue === "gate") {
        // Sizes are whole contracts of `quanto_multiplier` coins (Gate's `size` is an integer).
        const q = GATE_QUANTO[row.base] ?? "1";
        list.push(makeSpec(venue, row, { symbol: `${row.base}_USDT`, venueBase: row.base, ctVal: Number(q), ctValStr: q, qtyDecimals: 0 }));
      } else if (venue === "bitget") {
        // Bitget USDT-FUTURES: plain `PEPEUSDT` (no 1000× symbols), sizes in coins.
        list.push(makeSpec(venue, row, { symbol: `${row.base}USDT`, venueBase: row.base }));
      } else if (venue === "aster") {
        const m = ASTER_MULTIPLIED.includes(row.base) ? mult : 1;
        const vb = m === 1 ? row.base : `${m}${row.base}`;
        list.push(makeSpec(venue, row, { symbol: `${vb}USDT`, venueBase: vb, multiplier: m }));
      } else if (venue === "htx") {
        // HTX USDT swaps `BTC-USDT`: whole contracts of `contract_size` coins (plain codes, no 1000× symbols).
        const size = htxContractSize(row.base, market.params(row.base).anchorUsd);
        list.push(makeSpec(venue, row, { symbol: `${row.base}-USDT`, venueBase: row.base, ctVal: size, ctValStr: String(size), qtyDecimals: 0 }));
      } else if (venue === "kraken") {
        // Kraken Futures `PF_<COIN>USD` (bitcoin is XBT): contracts of 1 coin, quoted in USD, no 1000× symbols.
        list.push(makeSpec(venue, row, { symbol: `PF_${row.base === "BTC" ? "XBT" : row.base}USD`, venueBase: row.base, quote: "USD" }));
      } else if (venue === "dydx") {
        // dYdX v4 markets `BTC-USD`: sizes in coins, USD-quoted (USDC collateral), no 1000× tickers.
        list.push(makeSpec(venue, row, { symbol: `${row.base}-USD`, venueBase: row.base, quote: "USD" }));
      } else if (venue === "lighter") {
        // Lighter perps by coin symbol (`BTC`, `1000PEPE` per 1000 coins), USDC-margined, sizes in venue units.
        const vb = mult === 1 ? row.base : `${mult}${row.base}`;
        list.push(makeSpec(venue, row, { symbol: vb, venueBase: vb, multiplier: mult, quote: "USDC" }));
      } else if (venue === "deribit") {
        const inv = DERIBIT_INVERSE[row.base];
        if (inv) {
          list.push(
            makeSpec(venue, row, {
              symbol: `${row.base}-PERPETUAL`,
              venueBase: row.base,
              quote: "USD",
              inverse: true,
              ctVal: Number(inv.ctVal),
              ctValStr: inv.ctVal,
              qtyDecimals: 0,
              tickSize: inv.tickSize,
              priceDecimals: inv.priceDecimals,
              listTime: Date.parse(`${inv.listed}T08:00:00.000Z`),
            }),
          );
        }
        if (inv || DERIBIT_LINEAR_BASES.includes(row.base)) {
          list.push(
            makeSpec(venue, row, {
              symbol: `${row.base}_USDC-PERPETUAL`,
              venueBase: row.base,
              quote: "USDC",
              target: !inv,
              listTime: Date.parse(`${DERIBIT_LINEAR_LISTED}T08:00:00.000Z`),
            }),
          );
        }
      } else if (venue === "hyperliquid") {
        const name = mult > 1 ? `k${row.base}` : row.base;
        const delisted = HL_DELISTED_BASES.includes(row.base);
        list.push(makeSpec(venue, row, { symbol: name, venueBase: name, multiplier: mult, delisted, target: !delisted }));
      } else {
        // A venue without a branch above does not compile here: every venue states its symbols and units.
        const unlisted: never = venue;
        throw new Error(`no simulated instruments for ${String(unlisted)}`);
      }
    }
    // Venue-typical instruments that are NOT a USDT linear perp (adapters must filter them out).
    const btc = BASES[0] as BaseRow;
    const eth = BASES[1] as BaseRow;
    if (venue === "bybit") {
      for (const row of [btc, eth]) {
        list.push(makeSpec(venue, row, { symbol: `${row.base}PERP`, venueBase: row.base, quote: "USDC", target: false }));
      }
    } else if (venue === "okx") {
      for (const [row, ctv] of [
        [btc, "100"],
        [eth, "10"],
      ] as const) {
        list.push(
          makeSpec(venue, row, {
            symbol: `${row.base}-USD-SWAP`,
            venueBase: row.base,
            quote: "USD",
            inverse: true,
            ctVal: Number(ctv),
            ctValStr: ctv,
            qtyDecimals: 0,
            target: false,
            listTime: Date.parse("2019-12-10T08:00:00.000Z"),
          }),
        );
      }
    }
    list.sort(venue === "bybit" ? (a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0) : venue === "hyperliquid" ? () => 0 : (a, b) => a.listTime - b.listTime);
    staticLists.set(venue, list);
  }

  const bySymbol = new Map<string, PerpInstrumentSpec>();
  const perpByBase = new Map<string, PerpInstrumentSpec>();
  for (const [venue, list] of staticLists) {
    for (const inst of list) {
      bySymbol.set(`${venue}:${inst.symbol}`, inst);
      if (inst.target) perpByBase.set(`${venue}:${inst.base}`, inst);
    }
  }

  /** Binance quarterlies (BTC, ETH) for the quarter containing `nowMs`; cached per expiry. */
  const quarterlyCache = new Map<number, PerpInstrumentSpec[]>();
  function binanceQuarterlies(nowMs: number): PerpInstrumentSpec[] {
    const expiry = nextQuarterlyExpiry(nowMs);
    let list = quarterlyCache.get(expiry);
    if (!list) {
      list = [BASES[0] as BaseRow, BASES[1] as BaseRow].map((row) =>
        makeSpec("binance", row, {
          symbol: `${row.base}USDT_${yymmdd(expiry)}`,
          venueBase: row.base,
          kind: "delivery",
          fundingIntervalHours: 0,
          deliveryTime: expiry,
          listTime: expiry - 182 * DAY_MS,
          target: false,
          fundingInfoListed: false,
          fundingCap: 0,
        }),
      );
      quarterlyCache.set(expiry, list);
    }
    return list;
  }

  return {
    instruments: (venue, nowMs) => {
      const list = staticLists.get(venue) ?? [];
      return venue === "binance" ? [...list, ...binanceQuarterlies(nowMs)] : list;
    },
    instrument: (venue, symbol, nowMs) => bySymbol.get(`${venue}:${symbol}`) ?? (venue === "binance" ? binanceQuarterlies(nowMs).find((i) => i.symbol === symbol) : undefined),
    perpOf: (venue, base) => perpByBase.get(`${venue}:${base.trim().toUpperCase()}`),
  };
}
