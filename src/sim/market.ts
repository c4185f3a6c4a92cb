/**
 * Seeded, deterministic market model behind the venue simulator.
 *
 * ALL NUMBERS PRODUCED HERE ARE SIMULATED. Price LEVELS are calibrated to real 2026 captures (see
 * {@link PRICE_CAPTURES_2026} and docs/methods/simulator.md): each asset moves inside a band around its captured
 * level, so BTC stays between its 2026 captures (65.1k-77.6k). Supplies, ranks, ATH/ATL and volumes are rough,
 * hand-picked levels chosen to look plausible; none of it may be presented as real prices, supplies or records.
 *
 * Construction (per asset, log price relative to its anchor):
 *   x(t) = sigma * (rho * M(t) + sqrt(1 - rho^2) * I(t)),   price = anchor * exp(B * tanh(x(t) / B))
 * where M is a market factor shared by every asset and I is the asset's own factor, and B is the asset's band
 * half-width (log units, {@link priceBandOf}). Both factors are "unit" processes (Brownian, variance 1 per year)
 * sampled on a 1-minute grid and built by a hash-based Brownian-bridge midpoint construction:
 *   - time is cut into blocks of 2^14 minutes (~11.4 days); block end points are independent N(0, END_SD^2) draws,
 *     which makes the level mean-revert around the anchor within days to weeks (an Ornstein-Uhlenbeck-like process);
 *   - inside a block, each dyadic midpoint is the mean of its two neighbours plus a N(0, span/4 minutes of variance)
 *     draw, keyed by (seed, stream, block, node), so intraday moves keep the asset's full annual volatility;
 *   - the tanh squash bounds the level to anchor * exp(+-B); with B >= 1.5 typical deviations it mostly leaves moves
 *     alone (slope ≥ 0.66 within one typical deviation) and damps them mostly near the band edges.
 * Evaluating one grid minute costs 14 steps, whatever the date, so a year of history is cheap.
 * Between grid minutes the price is linearly interpolated.
 */
import { assetByIdOrSymbol, listAssets } from "../assets/catalogue.js";
import type { Clock } from "./clock.js";
import { MINUTE_MS, HOUR_MS, DAY_MS } from "../lib/time.js";
import { intMemo } from "./int-memo.js";

/** Simulation parameters of one asset. Simulated levels; not real data (anchors are calibrated to 2026 captures). */
export interface SimAssetParams {
  /**
   * Centre of the simulated USD price band: the geometric centre of the asset's {@link PRICE_CAPTURES_2026}, or, for
   * an asset without a 2026 capture, its pre-calibration level × {@link UNCAPTURED_LEVEL_RATIO}.
   */
  readonly anchorUsd: number;
  /** Annualised volatility of log price (0.5 = 50 %/year). */
  readonly annualVol: number;
  /** Correlation of the asset's returns with the shared market factor, in [0, 1]. */
  readonly marketCorr: number;
  /** Circulating supply, in coins. */
  readonly circulatingSupply: number;
  /** Total supply in coins, or null where the venue reports none. */
  readonly totalSupply: number | null;
  /** Max supply in coins, or null when uncapped. */
  readonly maxSupply: number | null;
  /** Typical 24h traded volume, USD. */
  readonly volume24hUsd: number;
  /** Static market-cap rank reported by the simulator (unique across the catalogue). */
  readonly marketCapRank: number;
  /** Pre-window all-time high (USD) and its ISO date; the model raises it if its own past year exceeds it. */
  readonly ath: number;
  readonly athDate: string;
  /** Pre-window all-time low (USD) and its ISO date; the model lowers it if its own past year goes below it. */
  readonly atl: number;
  readonly atlDate: string;
}

const p = (
  anchorUsd: number,
  annualVol: number,
  marketCorr: number,
  circulatingSupply: number,
  totalSupply: number | null,
  maxSupply: number | null,
  volume24hUsd: number,
  marketCapRank: number,
  ath: number,
  athDate: string,
  atl: number,
  atlDate: string,
): SimAssetParams => ({
  anchorUsd,
  annualVol,
  marketCorr,
  circulatingSupply,
  totalSupply,
  maxSupply,
  volume24hUsd,
  marketCapRank,
  ath,
  athDate,
  atl,
  atlDate,
});

/**
 * Real 2026 prices (USD per coin) the simulated price levels are calibrated to. Files under the real-data directory
 * (`MARKETGATE_REAL_DATA_DIR`; docs/methods/simulator.md, "Targets and the real files they come from"):
 * - `coinbase/nautilus_advanced_trade_http_ticker.json`: BTC-USD 68,923.67 (2026-04-07);
 * - `hyperliquid/nautilus_ws_allDexsAssetCtxs.json`: main-dex `markPx` (≈ 2026-05-30; BTC 77,562). The file has no
 *   coin names; index i is `meta.universe[i]`, and Hyperliquid's universe is append-only, so indices 0-27 are named by
 *   `hyperliquid/sdk_cassette_meta_2023-07-17.json` (BTC, ETH, ATOM, MATIC (delisted, not used), …, APT). `kPEPE`
 *   is per 1000 coins;
 * - `bybit/cryptofeed_v5_ws_linear_spot_publicTrade_tickers_kline_2026-08-09.ndjson`: linear `tickers.*` `lastPrice`
 *   (BTC 65,114.3, ETH 1,922.54, SOL 77.26, DOGE 0.07056);
 * - `coinbase/cryptofeed_advanced_trade_ws_market_trades_ticker_candles_2026-08-09.ndjson`: last `market_trades`
 *   price (BTC-USD 65,083.67, ETH-USD 1,919.38).
 */
export const PRICE_CAPTURES_2026: Readonly<Record<string, readonly number[]>> = {
  BTC: [68_923.67, 77_562, 65_114.3, 65_083.67],
  ETH: [2_123.7, 1_922.54, 1_919.38],
  SOL: [86.148, 77.26],
  DOGE: [0.10289, 0.07056],
  XRP: [1.3586],
  BNB: [667.37],
  AVAX: [9.4287],
  LTC: [52.705],
  LINK: [9.5895],
  SUI: [1.0503],
  PEPE: [0.003632 / 1000],
  ATOM: [2.1315],
  OP: [0.13105],
  ARB: [0.10891],
  INJ: [5.709],
  APT: [0.9763],
};

/**
 * Level of an asset without a 2026 capture, relative to its pre-calibration anchor: the median ratio
 * (capture centre ÷ pre-calibration anchor) of the 16 captured assets (range 0.33-0.82).
 */
export const UNCAPTURED_LEVEL_RATIO = 0.653;

/**
 * Simulated parameters for every catalogue symbol (uppercase key). Anchors per {@link SimAssetParams.anchorUsd}; the
 * other columns are rough, illustrative levels only.
 * Columns: anchor USD, annual vol, market corr, circulating, total, max, 24h vol USD, rank, ATH, ATH date, ATL, ATL date.
 */
export const SIM_ASSET_PARAMS: Readonly<Record<string, SimAssetParams>> = {
  BTC: p(71_049, 0.5, 0.9, 19_960_000, 19_960_000, 21_000_000, 40e9, 1, 126_000, "2025-10-06T18:57:42.558Z", 67.81, "2013-07-06T00:00:00.000Z"),
  ETH: p(2_019, 0.7, 0.85, 120_700_000, 120_700_000, null, 20e9, 2, 4_950, "2025-08-24T19:21:03.333Z", 0.432979, "2015-10-20T00:00:00.000Z"),
  XRP: p(1.3586, 0.8, 0.7, 60_300_000_000, 99_986_000_000, 100_000_000_000, 3e9, 4, 3.65, "2025-07-18T03:40:53.808Z", 0.00268621, "2014-05-22T00:00:00.000Z"),
  BNB: p(667.37, 0.5, 0.75, 139_200_000, 139_200_000, 200_000_000, 1.5e9, 5, 1_370, "2025-10-13T08:41:24.131Z", 0.0398177, "2017-10-19T00:00:00.000Z"),
  SOL: p(81.583, 0.9, 0.85, 560_000_000, 612_000_000, null, 4e9, 6, 293, "2025-01-19T11:15:27.957Z", 0.500801, "2020-05-11T19:35:23.449Z"),
  TRX: p(0.1893, 0.45, 0.5, 94_700_000_000, 94_700_000_000, null, 700e6, 9, 0.431288, "2024-12-04T00:00:00.000Z", 0.00180434, "2017-11-12T00:00:00.000Z"),
  DOGE: p(0.085205, 0.9, 0.75, 151_000_000_000, 151_000_000_000, null, 1.5e9, 10, 0.731578, "2021-05-08T05:08:23.458Z", 0.0000869, "2015-05-06T00:00:00.000Z"),
  ADA: p(0.2938, 0.8, 0.8, 36_500_000_000, 45_000_000_000, 45_000_000_000, 700e6, 11, 3.09, "2021-09-02T06:00:10.474Z", 0.01925275, "2020-03-13T02:22:55.044Z"),
  LINK: p(9.5895, 0.85, 0.8, 680_000_000, 1_000_000_000, 1_000_000_000, 600e6, 14, 52.7, "2021-05-10T00:13:57.214Z", 0.148183, "2017-11-29T00:00:00.000Z"),
  AVAX: p(9.4287, 0.9, 0.8, 430_000_000, 460_000_000, 720_000_000, 400e6, 18, 144.96, "2021-11-21T14:18:56.538Z", 2.8, "2020-12-31T13:15:21.540Z"),
  SUI: p(1.0503, 1.0, 0.75, 3_600_000_000, 10_000_000_000, 10_000_000_000, 800e6, 20, 5.35, "2025-01-06T00:00:00.000Z", 0.364846, "2023-10-19T10:40:30.078Z"),
  LTC: p(52.705, 0.75, 0.75, 76_500_000, 84_000_000, 84_000_000, 400e6, 22, 410.26, "2021-05-10T03:13:07.904Z", 1.15, "2015-01-14T00:00:00.000Z"),
  SHIB: p(0.000005876, 0.9, 0.7, 589_250_000_000_000, 589_500_000_000_000, null, 200e6, 24, 0.00008616, "2021-10-28T03:54:55.568Z", 5.6366e-11, "2020-11-28T11:26:25.838Z"),
  TON: p(1.11, 0.8, 0.55, 2_500_000_000, 5_140_000_000, null, 200e6, 25, 8.25, "2024-06-15T00:36:51.509Z", 0.519364, "2021-09-21T00:33:11.092Z"),
  DOT: p(1.632, 0.85, 0.8, 1_620_000_000, 1_620_000_000, null, 250e6, 30, 54.98, "2021-11-04T14:10:09.301Z", 2.7, "2020-08-20T05:48:11.359Z"),
  UNI: p(3.917, 0.9, 0.8, 630_000_000, 1_000_000_000, 1_000_000_000, 300e6, 32, 44.92, "2021-05-03T05:25:04.822Z", 1.03, "2020-09-17T01:20:38.214Z"),
  NEAR: p(1.306, 0.95, 0.8, 1_280_000_000, 1_280_000_000, null, 250e6, 35, 20.44, "2022-01-16T22:09:45.873Z", 0.526762, "2020-11-04T16:09:15.137Z"),
  PEPE: p(
    0.000003632,
    1.1,
    0.7,
    420_690_000_000_000,
    420_690_000_000_000,
    420_690_000_000_000,
    600e6,
    40,
    0.00002803,
    "2024-12-09T07:36:24.766Z",
    5.5142e-8,
    "2023-04-18T02:14:41.591Z",
  ),
  APT: p(0.9763, 1.0, 0.75, 700_000_000, 1_160_000_000, null, 150e6, 45, 19.92, "2023-01-26T14:25:17.390Z", 1.8, "2025-10-10T21:05:00.000Z"),
  ATOM: p(2.1315, 0.85, 0.75, 480_000_000, 480_000_000, null, 150e6, 50, 44.45, "2022-01-17T00:34:41.497Z", 1.16, "2020-03-13T02:27:44.591Z"),
  ARB: p(0.10891, 0.95, 0.8, 5_400_000_000, 10_000_000_000, 10_000_000_000, 300e6, 60, 2.39, "2024-01-12T12:29:59.231Z", 0.2, "2025-10-10T21:10:00.000Z"),
  OP: p(0.13105, 0.95, 0.8, 1_800_000_000, 4_294_967_296, 4_294_967_296, 150e6, 70, 4.84, "2024-03-06T08:35:50.817Z", 0.3, "2025-10-10T21:10:00.000Z"),
  MATIC: p(0.1306, 0.9, 0.75, 9_300_000_000, 10_000_000_000, 10_000_000_000, 40e6, 300, 2.92, "2021-12-27T02:08:34.307Z", 0.00314376, "2019-05-10T00:00:00.000Z"),
};

/**
 * Simulated parameters for assets that are NOT in the catalogue but are listed as perpetuals on the simulated
 * derivatives venues (so universe scans see more than the catalogue). Priced by the same model; `symbols()` and
 * CoinGecko ignore them. Anchors per {@link SimAssetParams.anchorUsd} (none of them has a 2026 capture, except INJ);
 * the rest are rough, illustrative levels only.
 */
export const SIM_EXTRA_ASSET_PARAMS: Readonly<Record<string, SimAssetParams>> = {
  WIF: p(0.7835, 1.3, 0.65, 998_900_000, 998_900_000, 998_900_000, 400e6, 90, 4.83, "2024-03-31T00:00:00.000Z", 0.00155464, "2023-12-13T00:00:00.000Z"),
  TIA: p(1.045, 1.1, 0.7, 800_000_000, 1_100_000_000, null, 150e6, 95, 20.85, "2024-02-10T00:00:00.000Z", 1.2, "2025-10-10T21:00:00.000Z"),
  INJ: p(5.709, 1.0, 0.75, 97_000_000, 100_000_000, 100_000_000, 120e6, 85, 52.62, "2024-03-14T00:00:00.000Z", 0.657401, "2020-11-03T00:00:00.000Z"),
  SEI: p(0.1306, 1.1, 0.7, 6_500_000_000, 10_000_000_000, 10_000_000_000, 150e6, 88, 1.14, "2024-03-16T00:00:00.000Z", 0.0953, "2023-10-19T00:00:00.000Z"),
};

/** Generic parameters for a catalogue asset added later without its own entry (keeps the simulator working). */
const FALLBACK_PARAMS: SimAssetParams = p(1, 1.0, 0.7, 1_000_000_000, 1_000_000_000, null, 50e6, 500, 5, "2021-11-10T00:00:00.000Z", 0.01, "2020-03-13T00:00:00.000Z");

/** All-time high/low as the simulator reports them. Prices in USD, dates in epoch ms (UTC). */
export interface AthAtl {
  ath: number;
  athDate: number;
  atl: number;
  atlDate: number;
}

/**
 * The simulated market. Symbols are catalogue symbols or CoinGecko ids, case-insensitive, or the perp-only extras of
 * {@link SIM_EXTRA_ASSET_PARAMS} (by symbol); unknown ones throw RangeError.
 */
export interface MarketModel {
  /** Seed the model was built with. */
  readonly seed: number;
  /** Clock used for "now" (ATH/ATL window). */
  readonly clock: Clock;
  /** Uppercase catalogue symbols the model covers, in catalogue order. */
  symbols(): readonly string[];
  /** Parameters used for `symbol`. */
  params(symbol: string): SimAssetParams;
  /** USD price at `tsMs` (epoch ms); deterministic for (seed, symbol, time). */
  priceAt(symbol: string, tsMs: number): number;
  /** Trailing 24h traded volume in USD as of `tsMs`. */
  volume24hUsdAt(symbol: string, tsMs: number): number;
  /** Market cap in USD at `tsMs`: `priceAt * circulatingSupply`. */
  marketCapUsdAt(symbol: string, tsMs: number): number;
  /** Circulating supply, coins. */
  circulatingSupply(symbol: string): number;
  /** Total supply, coins, or null. */
  totalSupply(symbol: string): number | null;
  /** Max supply, coins, or null when uncapped. */
  maxSupply(symbol: string): number | null;
  /** Static simulated market-cap rank (1 = largest). */
  marketCapRank(symbol: string): number;
  /** The band every price of `symbol` stays in (see {@link priceBandOf}). */
  priceBand(symbol: string): PriceBand;
  /**
   * Highest and lowest price in [fromMs, toMs] (epoch ms, from <= to), sampled on the 1-minute grid for spans up
   * to 1 day and on a coarser minute-aligned grid (~1440 samples) beyond; both ends are always included.
   */
  highLow(symbol: string, fromMs: number, toMs: number): { high: number; low: number };
  /** ATH/ATL as of `clock.now()`: ath >= every model price in the past 365 days, atl <= every one (to grid precision). */
  athAtl(symbol: string): AthAtl;
}

/** Options of {@link createMarketModel}. `seed` is any number (hashed via its string form); `clock` gives "now". */
export interface MarketModelOptions {
  seed: number;
  clock: Clock;
}

const YEAR_MS = 365 * DAY_MS;
const MINUTES_PER_YEAR = 525_960;
const BLOCK_LEVELS = 14;
/** Minute prices cached per asset (a power of two: 4,096 minutes, about 2.8 days; 64 KB per asset). */
const MINUTE_CACHE_SLOTS = 4096;
const BLOCK_MINUTES = 2 ** BLOCK_LEVELS;
/** Std-dev of the unit process at block end points, in "years of variance" units (see header). */
const END_SD = 0.07;
/**
 * Typical (time-averaged) std-dev of the unit process: sqrt(END_SD² · 2/3 + block length in years / 6). An asset's
 * typical log deviation from its anchor is `annualVol × UNIT_SD` (BTC: ≈ 4.6 %).
 */
export const UNIT_SD = Math.sqrt((END_SD * END_SD * 2) / 3 + BLOCK_MINUTES / MINUTES_PER_YEAR / 6);
/** Band half-width (log units) of an asset with a single capture or none, at least; see {@link priceBandOf}. */
const MIN_BAND_SINGLE = 0.1;

/** The price band of an asset: prices stay in (low, high) = anchor × exp(∓halfWidth); see the header. */
export interface PriceBand {
  readonly anchorUsd: number;
  readonly halfWidth: number;
  readonly low: number;
  readonly high: number;
}

/**
 * Band of an asset: half-width = max(half the log range of its 2026 captures, 1.5 × its typical deviation), and at
 * least {@link MIN_BAND_SINGLE} when it has fewer than two captures. BTC: the captures' own range, 65,084-77,562.
 */
export function priceBandOf(symbol: string, params: SimAssetParams): PriceBand {
  const caps = PRICE_CAPTURES_2026[symbol] ?? [];
  const typical = 1.5 * params.annualVol * UNIT_SD;
  const halfRange = caps.length >= 2 ? Math.log(Math.max(...caps) / Math.min(...caps)) / 2 : 0;
  const halfWidth = Math.max(halfRange, typical, caps.length >= 2 ? 0 : MIN_BAND_SINGLE);
  return { anchorUsd: params.anchorUsd, halfWidth, low: params.anchorUsd * Math.exp(-halfWidth), high: params.anchorUsd * Math.exp(halfWidth) };
}
const SALT_NODE = 0x1b873593;
const SALT_END = 0x2f8e1a53;
const SALT_VOL_HOUR = 0x3c6ef372;
const SALT_VOL_DAY = 0x4a7c15a9;

/** Std-dev of a midpoint draw for a span of 2^k minutes, unit process. */
const LEVEL_SD: readonly number[] = Array.from({ length: BLOCK_LEVELS + 1 }, (_, k) => Math.sqrt(2 ** k / MINUTES_PER_YEAR / 4));

/** 32-bit integer mixer (murmur3-style finaliser). Exported for the perp layer of the simulator. */
export function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Hash of four 32-bit keys. */
export function hash4(a: number, b: number, c: number, d: number): number {
  let h = mix32(a ^ 0x9e3779b9);
  h = mix32(h ^ b);
  h = mix32(h ^ c);
  return mix32(h ^ d);
}

/** 32-bit hash of a string (FNV-1a, then mixed). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mix32(h);
}

/** Standard normal from a 32-bit hash (Box-Muller on two derived uniforms). */
export function normalFromHash(h: number): number {
  const u1 = (h + 1) / 4294967297;
  const u2 = mix32(h ^ 0x5bd1e995) / 4294967296;
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

interface AssetState {
  readonly symbol: string;
  readonly params: SimAssetParams;
  readonly stream: number;
  /** Weight of the market factor and of the idiosyncratic factor in x(t). */
  readonly wMarket: number;
  readonly wIdio: number;
  readonly logAnchor: number;
  /** Band half-width B (log units): price = anchor × exp(B × tanh(x / B)). */
  readonly band: PriceBand;
}

/**
 * Builds a deterministic market model. Same seed => same prices for the same (symbol, time), independent of the
 * clock; the clock only decides what "now" is for {@link MarketModel.athAtl}. Pure CPU, no I/O.
 */
export function createMarketModel(opts: MarketModelOptions): MarketModel {
  const { seed, clock } = opts;
  if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${seed}`);
  const seedH = fnv1a(`marketgate-sim:${String(seed)}`);
  const marketStream = fnv1a("__market_factor__");

  const states = new Map<string, AssetState>();
  for (const a of listAssets()) {
    const params = SIM_ASSET_PARAMS[a.symbol] ?? FALLBACK_PARAMS;
    const rho = Math.min(1, Math.max(0, params.marketCorr));
    states.set(a.symbol, {
      symbol: a.symbol,
      params,
      stream: fnv1a(`asset:${a.symbol}`),
      wMarket: params.annualVol * rho,
      wIdio: params.annualVol * Math.sqrt(1 - rho * rho),
      logAnchor: Math.log(params.anchorUsd),
      band: priceBandOf(a.symbol, params),
    });
  }
  const symbolList = [...states.keys()];
  // Perp-only extras: priced like any asset, but not part of `symbols()` (the catalogue).
  for (const [sym, params] of Object.entries(SIM_EXTRA_ASSET_PARAMS)) {
    if (states.has(sym)) continue;
    const rho = Math.min(1, Math.max(0, params.marketCorr));
    states.set(sym, {
      symbol: sym,
      params,
      stream: fnv1a(`asset:${sym}`),
      wMarket: params.annualVol * rho,
      wIdio: params.annualVol * Math.sqrt(1 - rho * rho),
      logAnchor: Math.log(params.anchorUsd),
      band: priceBandOf(sym, params),
    });
  }

  function state(symbol: string): AssetState {
    const a = assetByIdOrSymbol(symbol);
    const s = states.get(a ? a.symbol : symbol.trim().toUpperCase());
    if (!s) throw new RangeError(`unknown simulator symbol: ${JSON.stringify(symbol)}`);
    return s;
  }

  function endPoint(s: AssetState, block: number): number {
    return END_SD * (s.wMarket * normalFromHash(hash4(seedH, marketStream, SALT_END, block)) + s.wIdio * normalFromHash(hash4(seedH, s.stream, SALT_END, block)));
  }

  /** Log price offset x at integer minute index `m` (minutes since epoch). */
  function xAtMinute(s: AssetState, m: number): number {
    const block = Math.floor(m / BLOCK_MINUTES);
    const i = m - block * BLOCK_MINUTES;
    let lo = 0;
    let hi = BLOCK_MINUTES;
    let vlo = endPoint(s, block);
    if (i === 0) return vlo;
    let vhi = endPoint(s, block + 1);
    // Node keys: (block, node index within the block).
    const blockKey = Math.imul(block | 0, 0x27d4eb2f);
    for (let level = BLOCK_LEVELS; level >= 1; level--) {
      const mid = (lo + hi) >>> 1;
      const zm = normalFromHash(hash4(seedH, marketStream, SALT_NODE ^ blockKey, mid));
      const zi = normalFromHash(hash4(seedH, s.stream, SALT_NODE ^ blockKey, mid));
      const vmid = (vlo + vhi) / 2 + (LEVEL_SD[level] ?? 0) * (s.wMarket * zm + s.wIdio * zi);
      if (i === mid) return vmid;
      if (i < mid) {
        hi = mid;
        vhi = vmid;
      } else {
        lo = mid;
        vlo = vmid;
      }
    }
    return vlo; // unreachable: every integer i in (0, 2^14) is some dyadic midpoint
  }

  // Minute prices, direct-mapped per asset: the tape and the perp layer read the same minutes again and again (a
  // second's slot reads the minutes around it; a minute spans 60 slots), and each costs a 14-level bridge walk.
  // The model is a pure function of (seed, symbol, minute), so a cached value is always the computed one.
  const priceAtMinute = intMemo(MINUTE_CACHE_SLOTS, (s: AssetState, m: number): number => {
    const b = s.band.halfWidth;
    return Math.exp(s.logAnchor + b * Math.tanh(xAtMinute(s, m) / b));
  });

  function price(s: AssetState, tsMs: number): number {
    if (!Number.isFinite(tsMs)) throw new RangeError(`timestamp must be finite epoch ms, got ${tsMs}`);
    const m = Math.floor(tsMs / MINUTE_MS);
    const f = (tsMs - m * MINUTE_MS) / MINUTE_MS;
    const p0 = priceAtMinute(s, m);
    if (f === 0) return p0;
    return p0 * (1 - f) + priceAtMinute(s, m + 1) * f;
  }

  /** Smooth N(0,1)-ish noise: hash values on a grid of `periodMs`, linearly interpolated. */
  function valueNoise(s: AssetState, salt: number, tsMs: number, periodMs: number): number {
    const k = Math.floor(tsMs / periodMs);
    const f = tsMs / periodMs - k;
    const z0 = normalFromHash(hash4(seedH, s.stream, salt, k | 0));
    const z1 = normalFromHash(hash4(seedH, s.stream, salt, (k + 1) | 0));
    return z0 * (1 - f) + z1 * f;
  }

  function volume(s: AssetState, tsMs: number): number {
    const pNow = price(s, tsMs);
    const pDayAgo = price(s, tsMs - DAY_MS);
    const move = Math.abs(Math.log(pNow / pDayAgo));
    const noise = 0.35 * valueNoise(s, SALT_VOL_DAY, tsMs, DAY_MS) + 0.15 * valueNoise(s, SALT_VOL_HOUR, tsMs, HOUR_MS);
    return s.params.volume24hUsd * Math.exp(noise) * (1 + 4 * move) * Math.sqrt(pNow / s.params.anchorUsd);
  }

  interface Extremes {
    high: number;
    highTs: number;
    low: number;
    lowTs: number;
  }

  /** Min/max over every minute-grid point in [from, to] plus both ends. Cost: one eval per minute. */
  function scanMinutes(s: AssetState, fromMs: number, toMs: number, acc: Extremes): void {
    const consider = (ts: number, v: number) => {
      if (v > acc.high) {
        acc.high = v;
        acc.highTs = ts;
      }
      if (v < acc.low) {
        acc.low = v;
        acc.lowTs = ts;
      }
    };
    consider(fromMs, price(s, fromMs));
    consider(toMs, price(s, toMs));
    for (let m = Math.ceil(fromMs / MINUTE_MS); m * MINUTE_MS <= toMs; m++) consider(m * MINUTE_MS, priceAtMinute(s, m));
  }

  /**
   * Extremes over [from, to]: coarse scan on a minute-aligned grid of `stepMs`, then a full minute scan within one
   * step around the top-3 highs and bottom-3 lows.
   */
  function scanCoarse(s: AssetState, fromMs: number, toMs: number, stepMs: number): Extremes {
    const samples: Array<[number, number]> = [];
    for (let t = Math.ceil(fromMs / stepMs) * stepMs; t <= toMs; t += stepMs) samples.push([t, price(s, t)]);
    const acc: Extremes = { high: -Infinity, highTs: fromMs, low: Infinity, lowTs: fromMs };
    const byPrice = [...samples].sort((a, b) => a[1] - b[1]);
    const candidates = [...byPrice.slice(0, 3), ...byPrice.slice(-3)];
    for (const [t] of candidates) scanMinutes(s, Math.max(fromMs, t - stepMs), Math.min(toMs, t + stepMs), acc);
    // Ends of the window (partial steps) at full resolution.
    scanMinutes(s, fromMs, Math.min(toMs, fromMs + stepMs), acc);
    scanMinutes(s, Math.max(fromMs, toMs - stepMs), toMs, acc);
    return acc;
  }

  const athCache = new Map<string, { bucket: number; ext: Extremes }>();

  function athAtl(s: AssetState): AthAtl {
    const now = clock.now();
    const bucket = Math.floor(now / HOUR_MS);
    let cached = athCache.get(s.symbol);
    if (!cached || cached.bucket !== bucket) {
      const bucketStart = bucket * HOUR_MS;
      cached = { bucket, ext: scanCoarse(s, bucketStart - YEAR_MS - HOUR_MS, bucketStart, HOUR_MS) };
      athCache.set(s.symbol, cached);
    }
    const ext = { ...cached.ext };
    scanMinutes(s, bucket * HOUR_MS, now, ext);
    const paramAthTs = Date.parse(s.params.athDate);
    const paramAtlTs = Date.parse(s.params.atlDate);
    const useParamAth = paramAthTs < now && s.params.ath >= ext.high;
    const useParamAtl = paramAtlTs < now && s.params.atl <= ext.low;
    return {
      ath: useParamAth ? s.params.ath : ext.high,
      athDate: useParamAth ? paramAthTs : ext.highTs,
      atl: useParamAtl ? s.params.atl : ext.low,
      atlDate: useParamAtl ? paramAtlTs : ext.lowTs,
    };
  }

  return {
    seed,
    clock,
    symbols: () => symbolList,
    params: (symbol) => state(symbol).params,
    priceAt: (symbol, tsMs) => price(state(symbol), tsMs),
    volume24hUsdAt: (symbol, tsMs) => volume(state(symbol), tsMs),
    marketCapUsdAt: (symbol, tsMs) => {
      const s = state(symbol);
      return price(s, tsMs) * s.params.circulatingSupply;
    },
    circulatingSupply: (symbol) => state(symbol).params.circulatingSupply,
    totalSupply: (symbol) => state(symbol).params.totalSupply,
    maxSupply: (symbol) => state(symbol).params.maxSupply,
    marketCapRank: (symbol) => state(symbol).params.marketCapRank,
    priceBand: (symbol) => state(symbol).band,
    highLow: (symbol, fromMs, toMs) => {
      const s = state(symbol);
      if (!(Number.isFinite(fromMs) && Number.isFinite(toMs) && fromMs <= toMs)) {
        throw new RangeError(`highLow needs finite from <= to, got ${fromMs}..${toMs}`);
      }
      let ext: Extremes;
      if (toMs - fromMs <= DAY_MS) {
        ext = { high: -Infinity, highTs: fromMs, low: Infinity, lowTs: fromMs };
        scanMinutes(s, fromMs, toMs, ext);
      } else {
        const step = Math.max(MINUTE_MS, Math.ceil((toMs - fromMs) / 1440 / MINUTE_MS) * MINUTE_MS);
        ext = scanCoarse(s, fromMs, toMs, step);
      }
      return { high: ext.high, low: ext.low };
    },
    athAtl: (symbol) => athAtl(state(symbol)),
  };
}
