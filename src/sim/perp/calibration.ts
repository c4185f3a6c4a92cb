/**
 * Calibration of the simulated perp layer to real recordings: premium and funding dispersion, open-interest and
 * turnover shares (docs/methods/simulator.md). test/sim/calibration.test.ts checks the simulator against these.
 */
import { PERP_SIM_VENUES, type PerpSimVenue } from "./types.js";

/** Bases with an extreme mean premium (fraction), hence |funding| ≥ 0.05 % per 8h on every venue listing them. */
export const EXTREME_PREMIUM: Readonly<Record<string, number>> = { WIF: 0.0024, PEPE: 0.0018, SEI: -0.0018 };

/** The four venues modelled first, whose calibration predates issue 22 and stays unchanged. */
export type FirstPerpSimVenue = "binance" | "bybit" | "okx" | "hyperliquid";
/**
 * Every venue added since (issue 22: Gate, Bitget, Deribit, Aster; issue 33: HTX, …): each has one row in each table
 * keyed by this type below (its OI share, turnover, premium and liquidation rate), which do not compile without it.
 */
export type NewPerpSimVenue = Exclude<PerpSimVenue, FirstPerpSimVenue>;
const FIRST_VENUES: readonly PerpSimVenue[] = ["binance", "bybit", "okx", "hyperliquid"];
/** The {@link NewPerpSimVenue}s, in id-list order. */
export const NEW_PERP_SIM_VENUES: readonly NewPerpSimVenue[] = PERP_SIM_VENUES.filter((v): v is NewPerpSimVenue => !FIRST_VENUES.includes(v));

/**
 * Shares of ALL BTC futures open interest (percent, CME included), the mean of four stored snapshots of
 * https://www.mytokencap.com/derivatives/open-interest ("BTC Total Open Interest", totals $38.1B-$60.3B): the first
 * four venues together 45.0 % (45.1, 45.6, 42.8, 46.4: Binance ≈ 21.7, Bybit ≈ 11.7, OKX ≈ 6.8, Hyperliquid ≈ 4.9),
 * Gate 9.9 % (7.88, 8.37, 12.15, 11.29), Bitget 6.5 % (6.71, 6.43, 6.14, 6.63), Deribit 5.1 % (5.94, 4.59, 4.64,
 * 5.37). Aster is not among the named rows (each named row ≥ 0.06 %): 1.5 %, the issue's estimate (an assumption).
 * Together the first eight venues hold ≈ 68 % of BTC futures OI (issue 22 said "roughly 70-75 %").
 * HTX 6.5 %: the same four snapshots (6.71, 6.60, 6.02, 6.59; issue 33 quoted one of them, "about 6.7 %"), most of
 * it taken as the USDT swap (an assumption). Kraken Futures 0.4 %: PF_XBTUSD held ≈ 1,950 BTC on 2026-09-02 (docs/methods/venues/kraken.md, a recorded
 * ticker) of ≈ 500,000 BTC in all BTC futures (the snapshots' $38-60B at ≈ $100k per BTC). dYdX v4 0.06 %: the same
 * mytokencap snapshots list it at 0.06 % ($32.14M of $51.53B, $26.34M of $38.09B, $35.47M of $57.31B;
 * docs/methods/venues/dydx.md). Lighter 0.3 %: the figure of docs/methods/venues/lighter.md, of the order the recorded
 * ETH market gives (ccxt `orderBookDetails`, Nov 2025: 39,559 ETH open on one side × $3,551 ≈ $140M; an estimate).
 */
export const BTC_OI_PCT_OF_MARKET: Readonly<Record<NewPerpSimVenue, number> & { firstFour: number }> = {
  firstFour: 45,
  gate: 9.9,
  bitget: 6.5,
  deribit: 5.1,
  aster: 1.5,
  htx: 6.5,
  kraken: 0.4,
  dydx: 0.06,
  lighter: 0.3,
};

/** The first four venues' shares (model units, below): unchanged since before issue 22. */
const FIRST_OI_SHARE: Readonly<Record<FirstPerpSimVenue, number>> = { binance: 0.36, bybit: 0.2, okx: 0.14, hyperliquid: 0.24 };
/** Model units per percent of BTC futures OI: the first four's shares (sum 0.94) stand for their 45 % of the market. */
const OI_UNITS_PER_PCT = (FIRST_OI_SHARE.binance + FIRST_OI_SHARE.bybit + FIRST_OI_SHARE.okx + FIRST_OI_SHARE.hyperliquid) / BTC_OI_PCT_OF_MARKET.firstFour;

/** Open interest of a base's target perps per unit of its aggregate 24h volume (× the venue's {@link OI_SHARE}); a rough level. */
export const OI_PER_DAILY_VOLUME = 0.55;

/**
 * Venue shares of a base's perp open interest (model units: a target perp holds 0.55 × the base's aggregate 24h
 * volume × share, in coins). The first four unchanged (Binance largest); the new four scaled from
 * {@link BTC_OI_PCT_OF_MARKET} so that their ratios to the first four match the cited market shares.
 */
const OI_SHARE_OF: Readonly<Record<PerpSimVenue, number>> = {
  ...FIRST_OI_SHARE,
  ...(Object.fromEntries(NEW_PERP_SIM_VENUES.map((v) => [v, BTC_OI_PCT_OF_MARKET[v] * OI_UNITS_PER_PCT])) as Record<NewPerpSimVenue, number>),
};
/**
 * Venue perp 24h turnover relative to the model's 24h (CoinGecko-style aggregate) volume, target perps. Real 2026
 * turnover ÷ the simulator's aggregate volume of the same base:
 * - Bybit: `bybit/cryptofeed_v5_ws_linear_..._2026-08-09.ndjson` `turnover24h` BTC 1.14e9 (÷ 40e9 = 0.029), ETH 0.51e9
 *   (0.026), SOL 0.28e9 (0.069), DOGE 0.036e9 (0.024) → 0.027;
 * - Hyperliquid: `hyperliquid/nautilus_ws_allDexsAssetCtxs.json` `dayNtlVlm` BTC 1.52e9 (0.038), ETH 0.59e9 (0.030),
 *   SOL 0.14e9 (0.035) → 0.034 for BTC/ETH/SOL ({@link HL_MAJORS}); the 13 other named coins (DOGE, XRP, BNB, AVAX,
 *   LTC, LINK, SUI, kPEPE, ATOM, OP, ARB, INJ, APT) median 0.006 → {@link HL_ALT_VOLUME_SHARE};
 * - Binance: https://bitcoinfuturesinfo.com/market-share-and-futures-curve (stored page, BTC:USD futures 24h volume)
 *   $14.41B ÷ 40e9 = 0.36: Binance's perps turn over ≈ 1.8 × their open interest a day (0.36 ÷ (0.55 × 0.36)), the
 *   cascade-risk forecast's turnover input (docs/methods/simulator.md, "Cascade-risk regimes"). Until issue 36 an
 *   assumed 2.5 × Bybit (0.068, 0.34 × OI), five times below that page.
 * - OKX: no 2026 volume capture; assumed 0.75× Bybit.
 * - Deribit: the same page, Deribit $0.654B vs Binance $14.41B = 0.045 of Binance → 0.045 × 0.068 (Binance's former
 *   share, kept for Deribit's calibration) = 0.003.
 * - Gate and Bitget: no volume capture; assumed 0.9× Bybit (0.024) each, as their BTC OI is of Bybit's order.
 *   Aster: assumed 0.01 (about 0.4× Bybit). HTX: no volume capture; assumed 0.9× Bybit (0.024) like Gate, its BTC OI
 *   being of the same order. Kraken Futures: 0.012, the midpoint of a recorded PF_XBTUSD 24h volume (8,309 BTC ≈ $643M,
 *   ccxt's 2026-09-02 ticker: 0.016 of the model's $40B) and recorded hourly candles (≈ $270M a day, 2026-10-08: 0.007;
 *   docs/methods/venues/kraken.md). The others are assumptions, not fits. dYdX v4: 0.0034, the recorded BTC-USD `volume24H` ÷ open interest (4.6 a day, nautilus `/perpetualMarkets`)
 *   at the snapshots' ≈ $30M of BTC OI, ÷ the model's $40B (docs/methods/venues/dydx.md; partly an assumption).
 *   Lighter: 0.024 (docs/methods/venues/lighter.md): the recorded ETH market turns over ≈ 12 × its open interest a day
 *   ($1.67B of 24h quote volume on ≈ $140M), three times dYdX's 4.6; an estimate, not a fit.
 */
const VOLUME_SHARE_OF: Readonly<Record<PerpSimVenue, number>> = {
  binance: 0.36,
  bybit: 0.027,
  okx: 0.02,
  hyperliquid: 0.034,
  gate: 0.024,
  bitget: 0.024,
  deribit: 0.003,
  aster: 0.01,
  htx: 0.024,
  kraken: 0.012,
  dydx: 0.0034,
  lighter: 0.024,
};
/** Hyperliquid's turnover share for bases other than {@link HL_MAJORS} (see {@link VOLUME_SHARE}). */
export const HL_ALT_VOLUME_SHARE = 0.006;
export const HL_MAJORS: readonly string[] = ["BTC", "ETH", "SOL"];
/** Turnover share of the venue-typical non-target instruments (quarterlies, USDC perp, coin-margined swaps). */
export const NON_TARGET_VOLUME_SHARE = 0.002;

/**
 * Funding calibration targets, from real snapshots (fractions; "pinned" = the current rate equals the venue's
 * default for the symbol's interval, i.e. 0.01 % per 8h, 0.005 % per 4h, 0.00125 % per hour):
 * - Binance `binance/usdm_premiumIndex_all_symbols_2024-11-27.json` (371 symbols with a non-zero interest rate):
 *   8h symbols 151/205 = 73.7 % pinned (23.4 % above, 2.9 % below); 4h symbols 91/166 = 54.8 %; together 65.2 %.
 *   Of the unpinned, 88.4 % are above the default; the deviation F − I (8h-equivalent) has median 0.96 bp,
 *   p10 −1.1 bp, p90 4.3 bp. Mark/index − 1: p10 −2.3 bp, p50 4.5 bp, p90 11.8 bp.
 *   (Counting only rates of exactly 0.01 % over every symbol, 4h ones included, gives 151/371 = 40.7 %.)
 * - Hyperliquid `hyperliquid/nautilus_ws_allDexsAssetCtxs.json` (main dex, 179 live coins of 230): 126 = 70.4 %
 *   pinned at 0.00125 %/h (10.1 % above, 19.6 % below); of the unpinned 34 % above; deviation (8h-eq.) median
 *   −0.5 bp, p10 −7.4 bp, p90 3.1 bp. Mark/oracle − 1: p10 −15.3 bp, p50 −4.2 bp, p90 12.5 bp.
 *   (126 of all 230 ctxs, delisted included, is 54.8 %.)
 * - Bybit `bybit/cryptofeed_v5_ws_linear_..._2026-08-09.ndjson`: same formula as Binance; 2 of its 4 linear tickers
 *   pinned (BTC, DOGE), ETH and SOL below → calibrated like Binance with a smaller mean.
 * - OKX: no interest term (its published formula; `okx/nautilus_http_get_funding_rate_history.json` and the tardis
 *   `funding-rate` frames: 0.01515 %, −0.00236 %, 0.0481 %, none pinned) → never pinned.
 */
export const FUNDING_TARGETS = {
  binance: { pinned8h: 0.737, pinned4h: 0.548, aboveOfUnpinned: 0.884, markPremiumP10: -0.000226, markPremiumP50: 0.000447, markPremiumP90: 0.001184 },
  hyperliquid: { pinned: 0.704, aboveOfUnpinned: 0.34, markPremiumP10: -0.00153, markPremiumP50: -0.000424, markPremiumP90: 0.00125 },
  bybit: { pinned8h: 0.737 },
  okx: { pinned: 0 },
} as const;

/** Premium model of regular bases per venue (fractions): mean, sd of the venue part and of the fast noise. */
export interface PremiumCalibration {
  readonly mean: number;
  readonly venueSd: number;
  readonly fastSd: number;
}
/** Sd of the base sentiment shared by every venue listing a base (fraction). */
export const BASE_SENTIMENT_SD = 0.00025;
/**
 * The new venues have no recorded funding cross-section here, so their premium model is set BY ANALOGY (not fitted):
 * Gate and Aster use Binance's formula (Gate: "Funding Rate = Premium Index + clamp(Interest − Premium Index, ±0.05 %)",
 * gate.io funding-rate page; Aster is Binance-compatible) → Binance's row, Aster with wider venue and fast noise (a
 * thinner book); Bitget (same formula) → Bybit's row; Deribit (no interest term, a ±0.025 % damper: Deribit Funding
 * Specifications) → OKX's row with a larger venue sd, so that its funding leaves the damper's dead band at times.
 * HTX (USDT swaps settled in real time since 2024-01-08, intervals of 8, 4 or 1 h per pair: HTX support pages cited in
 * docs/methods/venues/htx.md; its premium formula is not stated there) → Binance's row, by analogy with the larger
 * USDT-swap venues. Kraken Futures (hourly, a premium-only rate with no interest term: none of its recorded rates sits
 * at a default value, docs/methods/venues/kraken.md) → Deribit's row. dYdX v4 (hourly, from an
 * impact-price premium) → Hyperliquid's row; Lighter (hourly, Hyperliquid's formula) → Hyperliquid's row.
 */
const NEW_VENUE_PREMIUM: Readonly<Record<NewPerpSimVenue, PremiumCalibration>> = {
  gate: { mean: 0.0003, venueSd: 0.00033, fastSd: 0.00044 },
  bitget: { mean: 0.00025, venueSd: 0.00045, fastSd: 0.00044 },
  deribit: { mean: 0.0001, venueSd: 0.0003, fastSd: 0.0004 },
  aster: { mean: 0.0003, venueSd: 0.0005, fastSd: 0.0006 },
  htx: { mean: 0.0003, venueSd: 0.00033, fastSd: 0.00044 },
  kraken: { mean: 0.0001, venueSd: 0.0003, fastSd: 0.0004 },
  dydx: { mean: 0, venueSd: 0.00015, fastSd: 0.0006 },
  lighter: { mean: 0, venueSd: 0.00015, fastSd: 0.0006 },
};

/**
 * Regular-base premium per venue, tuned so the simulated cross-section (symbols × times) reproduces
 * {@link FUNDING_TARGETS}: total slow sd = sqrt(BASE_SENTIMENT_SD² + venueSd²); fast noise widens the mark premium.
 */
const PREMIUM_OF: Readonly<Record<PerpSimVenue, PremiumCalibration>> = {
  binance: { mean: 0.0003, venueSd: 0.00033, fastSd: 0.00044 },
  bybit: { mean: 0.00025, venueSd: 0.00045, fastSd: 0.00044 },
  okx: { mean: 0.0001, venueSd: 0.00017, fastSd: 0.0003 },
  hyperliquid: { mean: 0, venueSd: 0.00015, fastSd: 0.0006 },
  ...NEW_VENUE_PREMIUM,
};

/**
 * Liquidations per minute the tape produces on a quiet day, summed over a venue's listed target perps. Gate 1.8 and
 * Aster 0.1 are issue 22's figures; Bitget and Deribit have no cited figure and sit between them (assumptions): Bitget
 * 1.0 (its BTC OI is two thirds of Gate's), Deribit 0.3 (few coins listed). Binance, Bybit and OKX liquidate a share
 * of their open interest instead ({@link LIQ_TURNOVER_PRODUCT}). HTX 0.25: no published count; an open-source collector
 * of its all-swap liquidation topic reports about 5 events in 22 minutes (0.23 a minute, 2026-09-18), so an assumption
 * near that (Gate's rate scaled by OI would give 1.2, five times the observation). Kraken Futures: Aster's 0.1 (a BTC OI a quarter of Aster's, more
 * coins listed; an assumption). dYdX v4 0.02: Gate's 1.8 × 0.06 / 9.9 ≈ 0.011, doubled as dYdX prints one event per
 * fill of a liquidation order (an assumption; docs/methods/venues/dydx.md). Lighter 0.2: docs/methods/venues/lighter.md's figure (an assumption).
 */
const LIQUIDATIONS_PER_MIN_OF: Readonly<Record<NewPerpSimVenue, number>> = { gate: 1.8, bitget: 1.0, deribit: 0.3, aster: 0.1, htx: 0.25, kraken: 0.1, dydx: 0.02, lighter: 0.2 };

/** How the tape sets a venue's liquidations at rest (src/sim/tape.ts). */
export type LiquidationCalibration =
  /** A share of the venue's open interest per day, from the real liquidations ÷ OI × turnover ({@link LIQ_TURNOVER_PRODUCT}). */
  | { readonly kind: "share_of_oi" }
  /** A rate per minute summed over the venue's listed target perps (a cited figure or an assumption). */
  | { readonly kind: "per_min"; readonly perMin: number };

/**
 * Everything the simulator is calibrated to, per venue: the one table a new venue adds a row to (docs/adding-a-venue.md,
 * "The simulator"); the views below ({@link OI_SHARE}, {@link VOLUME_SHARE}, {@link PREMIUM_CALIBRATION},
 * {@link liquidationsPerMin}) are read from it.
 */
export interface VenueCalibration {
  /** Share of a base's perp open interest, model units (see {@link OI_PER_DAILY_VOLUME}). */
  readonly oiShare: number;
  /** 24h turnover of the target perps relative to the model's aggregate 24h volume. */
  readonly volumeShare: number;
  /** Premium model of regular bases. */
  readonly premium: PremiumCalibration;
  readonly liquidations: LiquidationCalibration;
}

/** The venues whose liquidations are a share of their open interest (the first ones modelled; Hyperliquid has no feed). */
const SHARE_OF_OI: readonly PerpSimVenue[] = ["binance", "bybit", "okx", "hyperliquid"];

/** The calibration of every simulated venue (the figures and their sources are above). */
export const VENUE_CALIBRATION: Readonly<Record<PerpSimVenue, VenueCalibration>> = Object.fromEntries(
  PERP_SIM_VENUES.map((v) => [
    v,
    {
      oiShare: OI_SHARE_OF[v],
      volumeShare: VOLUME_SHARE_OF[v],
      premium: PREMIUM_OF[v],
      liquidations: SHARE_OF_OI.includes(v) ? { kind: "share_of_oi" } : { kind: "per_min", perMin: LIQUIDATIONS_PER_MIN_OF[v as NewPerpSimVenue] },
    },
  ]),
) as Record<PerpSimVenue, VenueCalibration>;

/** A view of {@link VENUE_CALIBRATION}: one field per venue. */
function view<T>(field: (c: VenueCalibration) => T): Readonly<Record<PerpSimVenue, T>> {
  return Object.fromEntries(PERP_SIM_VENUES.map((v) => [v, field(VENUE_CALIBRATION[v])])) as Record<PerpSimVenue, T>;
}
/** Venue shares of a base's perp open interest (model units), from {@link VENUE_CALIBRATION}. */
export const OI_SHARE = view((c) => c.oiShare);
/** Venue perp 24h turnover relative to the model's 24h volume, target perps, from {@link VENUE_CALIBRATION}. */
export const VOLUME_SHARE = view((c) => c.volumeShare);
/** Regular-base premium per venue, from {@link VENUE_CALIBRATION}. */
export const PREMIUM_CALIBRATION = view((c) => c.premium);
/** Liquidations per minute of a venue calibrated by rate (`per_min`), else undefined (a share of OI). */
export function liquidationsPerMin(venue: PerpSimVenue): number | undefined {
  const l = VENUE_CALIBRATION[venue].liquidations;
  return l.kind === "per_min" ? l.perMin : undefined;
}
/**
 * Hyperliquid's mark is not oracle × (1 + premium): its mark price is a median of several references while funding
 * uses the impact-price premium (real 2026 ctxs: ETH mark/oracle −4.2 bp vs premium −2.8 bp, ATOM −14 vs −5.6 bp).
 * Sd (fraction) of the mark-only deviation added to Hyperliquid marks of regular bases (10-minute noise).
 */
export const HL_MARK_ONLY_SD = 0.0006;

/**
 * Real medians of (mean of the last 7 days' liquidations ÷ OI) × (the day's volume ÷ OI), the cascade-risk forecast's
 * input (docs/methods/cascade-risk.md), per symbol: Binance USDT perpetuals 2023-01-01..2023-06-29
 * (`shared/data/real/coinalyze-daily`, the walk-forward headline window; test/sim/cascade-regimes.test.ts recomputes
 * them). Other bases: {@link LIQ_TURNOVER_PRODUCT_MEDIAN}, the median over all 66 symbols. Binance, Bybit and OKX
 * liquidate, per day, OI × this ÷ Binance's turnover (≈ 1.8, {@link VOLUME_SHARE}) × the regime below, so that the
 * forecast's input has the real days' level per symbol. As the 2026 turnover is about half of 2022-23's (3.8), the
 * liquidations per OI are about twice those days' (docs/methods/simulator.md, "Cascade-risk regimes").
 */
export const LIQ_TURNOVER_PRODUCT: Readonly<Record<string, number>> = { BTC: 0.011, ETH: 0.011, SOL: 0.0436, XRP: 0.0152, BNB: 0.0076, DOGE: 0.0111, LINK: 0.0225 };
export const LIQ_TURNOVER_PRODUCT_MEDIAN = 0.021;
/**
 * Spread (sd of the log) of a base's liquidation regime, a smooth day-scale noise shared by its venues: 0.61, the
 * median over the 66 symbols of the spread of ln(7-day mean of liquidations ÷ OI) within 2023-01..06 (same file).
 */
export const LIQ_REGIME_SD = 0.61;
