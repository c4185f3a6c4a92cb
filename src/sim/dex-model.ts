/**
 * DEX layer of the venue simulator: per-pool prices, liquidity, swaps and OHLCV built on the seeded spot
 * {@link MarketModel}, shared by the simulated DexScreener and GeckoTerminal routers (so both venues agree on the
 * same pool, and pools agree with CoinGecko and the perp venues to within each pool's small deviation).
 *
 * ALL NUMBERS PRODUCED HERE ARE SIMULATED. Deterministic for (seed, time):
 * - token USD price: canonical tokens follow `market.priceAt(asset)` (bridged/pegged ones with a ~2 bp peg wobble,
 *   wrapped natives exactly); stables 1 ± a few bp; other and look-alike tokens their own value-noise path around a
 *   fixed level;
 * - pool price of each side = token price × (1 + pool deviation), the deviation a static part plus slow noise scaled
 *   by the pool's `devBp` (≈ 2 bp for deep pools, a few % for dust pools); look-alike pools with `nativeRatio`
 *   value their base at ratio × quote price (absurd on purpose);
 * - swaps per minute ~ Poisson(λ), λ = volume24h / avgSwap / 1440 × hourly activity (the driver asset's model
 *   24h-volume ratio × slow noise); minute volume = swaps × avgSwap × log-normal noise; buys/sells split per minute.
 *   Window stats (m5 … h24) and candle volumes are sums of the same minutes, so they agree exactly;
 * - candles: open/close = pool price at the bounds (close = now for the running candle), high/low = extremes of
 *   sampled prices widened by a small intra-step wiggle; intervals without swaps are empty (skipped by default).
 */
import { fnv1a, hash4, normalFromHash, type MarketModel } from "./market.js";
import { poolCreatedAt, SIM_DEX_CHAINS, type SimDexPool, type SimDexToken } from "./dex-tokens.js";
import { MINUTE_MS, HOUR_MS, DAY_MS } from "../lib/time.js";

const YEAR_MS = 365.25 * DAY_MS;

const SALT_STATIC = 0x11;
const SALT_PEG = 0x12;
const SALT_DEV_SLOW = 0x13;
const SALT_DEV_FAST = 0x14;
const SALT_DEVQ = 0x15;
const SALT_LVL_W = 0x21;
const SALT_LVL_D = 0x22;
const SALT_LVL_H = 0x23;
const SALT_LVL_M = 0x24;
const SALT_ACT = 0x31;
const SALT_ACT_H = 0x32;
const SALT_N = 0x41;
const SALT_V = 0x42;
const SALT_B = 0x43;
const SALT_B2 = 0x44;
const SALT_LIQ = 0x51;
const SALT_WIG = 0x61;
const SALT_TRADERS = 0x71;

/** Swap statistics of a time window. */
export interface SwapStats {
  buys: number;
  sells: number;
  volumeUsd: number;
}

/** Window stats with unique-trader estimates (GeckoTerminal `buyers`/`sellers`). */
export interface WindowStats extends SwapStats {
  buyers: number;
  sellers: number;
}

/** Windows reported by the venues. */
export type DexWindow = "m5" | "m15" | "m30" | "h1" | "h6" | "h24";
export const DEX_WINDOW_MINUTES: Readonly<Record<DexWindow, number>> = { m5: 5, m15: 15, m30: 30, h1: 60, h6: 360, h24: 1440 };
const TRADER_RATIO: Readonly<Record<DexWindow, number>> = { m5: 0.93, m15: 0.88, m30: 0.84, h1: 0.78, h6: 0.66, h24: 0.52 };

/** Prices of a pool at one instant: USD price of each side and base-in-quote (`priceNative`). */
export interface PoolPrices {
  baseUsd: number;
  quoteUsd: number;
  /** Base price in quote tokens. */
  priceNative: number;
}

/** A pool as both venues report it at `t`. */
export interface PoolSnapshot extends PoolPrices {
  pool: SimDexPool;
  t: number;
  liquidityUsd: number;
  baseReserve: number;
  quoteReserve: number;
  windows: Record<DexWindow, WindowStats>;
  /** Base price change in % over each window (pool price path). */
  baseChangePct: Record<"m5" | "h1" | "h6" | "h24", number>;
}

export type OhlcvTimeframe = "minute" | "hour" | "day";
export const OHLCV_AGGREGATES: Readonly<Record<OhlcvTimeframe, readonly number[]>> = { minute: [1, 5, 15], hour: [1, 4, 12], day: [1] };

export interface CandleQuery {
  timeframe: OhlcvTimeframe;
  aggregate: number;
  /** Only candles starting strictly before this instant (epoch ms); default: up to now. */
  beforeMs?: number;
  limit: number;
  includeEmpty: boolean;
  /** Which token is priced: the pool's base (default) or quote. */
  side: "base" | "quote";
  /** `usd`: USD prices and volume; `token`: prices in the other token, volume in the other token's units. */
  currency: "usd" | "token";
}

/** `[startSeconds, open, high, low, close, volume]`. */
export type OhlcvRow = [number, number, number, number, number, number];

export interface DexModel {
  readonly market: MarketModel;
  /** Reference USD price of a token (before any pool deviation). */
  tokenUsd(token: SimDexToken, t: number): number;
  /** USD price of a chain's native asset (ETH, BNB, SOL, AVAX, MATIC). */
  nativeUsd(chain: SimDexPool["chain"], t: number): number;
  poolPrices(pool: SimDexPool, t: number): PoolPrices;
  /** USD price of `side` in `pool` at `t`. */
  sideUsd(pool: SimDexPool, side: "base" | "quote", t: number): number;
  /** True when the pool traded in the `minutes` minutes up to `t`. */
  hasSwaps(pool: SimDexPool, t: number, minutes: number): boolean;
  liquidityUsd(pool: SimDexPool, t: number): number;
  window(pool: SimDexPool, t: number, w: DexWindow): WindowStats;
  snapshot(pool: SimDexPool, t: number): PoolSnapshot;
  /** Token supply used for FDV / market cap: total and circulating; `model` tokens use the asset's model supplies. */
  supply(token: SimDexToken): { total: number; circulating: number; fromModel: boolean };
  /** OHLCV rows newest first. */
  candles(pool: SimDexPool, q: CandleQuery, now: number): OhlcvRow[];
  /** When `pool` was created (epoch ms): young pools are aged from the market clock's reading when this model was built. */
  createdAt(pool: SimDexPool): number;
}

const uniform = (h: number): number => (h + 0.5) / 4294967296;

/** Poisson draw with mean `lam` from a uniform `u` (inverse CDF; normal approximation for large means). */
function poisson(lam: number, u: number, z: number): number {
  if (lam <= 0) return 0;
  if (lam > 30) return Math.max(0, Math.round(lam + Math.sqrt(lam) * z));
  let p = Math.exp(-lam);
  let f = p;
  let k = 0;
  while (u > f && k < 200) {
    k++;
    p *= lam / k;
    f += p;
  }
  return k;
}

interface HourAgg extends SwapStats {
  /** Swap count (buys + sells). */
  n: number;
}

const MAX_CACHE = 250_000;

/** Builds the DEX model over `market` (same seed → same pools, prices, swaps and candles). */
export function createDexModel(market: MarketModel): DexModel {
  const seedH = fnv1a(`marketgate-sim-dex:${String(market.seed)}`);
  // Young pools are dated from the simulator's start, so they stay young whatever the calendar says.
  const startMs = market.clock.now();
  const createdAt = (pool: SimDexPool): number => poolCreatedAt(pool, startMs);

  function vn(stream: number, salt: number, t: number, period: number): number {
    const k = Math.floor(t / period);
    const f = t / period - k;
    const z0 = normalFromHash(hash4(seedH, stream, salt, k | 0));
    const z1 = normalFromHash(hash4(seedH, stream, salt, (k + 1) | 0));
    return z0 * (1 - f) + z1 * f;
  }
  const zStatic = (stream: number, salt: number): number => normalFromHash(hash4(seedH, stream, salt, 0x5eed));
  const tokenStream = (t: SimDexToken): number => fnv1a(`dex-token:${t.key}`);

  function tokenUsd(token: SimDexToken, t: number): number {
    const s = tokenStream(token);
    if (token.asset !== null) {
      const p = market.priceAt(token.asset, t);
      if (token.wrappedNative || token.role !== "canonical") return p;
      return p * (1 + 2e-4 * (0.7 * zStatic(s, SALT_PEG) + 0.7 * vn(s, SALT_PEG, t, 2 * HOUR_MS)));
    }
    if (token.role === "stable") {
      return 1 + 1e-4 * (2.5 * zStatic(s, SALT_STATIC) + 3 * vn(s, SALT_LVL_H, t, 6 * HOUR_MS) + 1.5 * vn(s, SALT_LVL_M, t, 10 * MINUTE_MS));
    }
    const x = 0.5 * vn(s, SALT_LVL_W, t, 7 * DAY_MS) + 0.25 * vn(s, SALT_LVL_D, t, DAY_MS) + 0.08 * vn(s, SALT_LVL_H, t, HOUR_MS) + 0.02 * vn(s, SALT_LVL_M, t, 5 * MINUTE_MS);
    return token.level * Math.exp(token.vol * x);
  }

  function dev(pool: SimDexPool, t: number): number {
    return (
      pool.devBp *
      1e-4 *
      (0.7 * zStatic(pool.stream, SALT_STATIC) + 0.6 * vn(pool.stream, SALT_DEV_SLOW, t, 30 * MINUTE_MS) + 0.3 * vn(pool.stream, SALT_DEV_FAST, t, 2 * MINUTE_MS))
    );
  }
  function devQ(pool: SimDexPool, t: number): number {
    return pool.devBp * 0.3e-4 * (zStatic(pool.stream, SALT_DEVQ) + vn(pool.stream, SALT_DEVQ, t, HOUR_MS));
  }

  function poolPrices(pool: SimDexPool, t: number): PoolPrices {
    const quoteUsd = tokenUsd(pool.quote, t) * (1 + devQ(pool, t));
    const baseRef = pool.nativeRatio !== null ? quoteUsd * pool.nativeRatio : tokenUsd(pool.base, t);
    const baseUsd = baseRef * (1 + dev(pool, t));
    return { baseUsd, quoteUsd, priceNative: baseUsd / quoteUsd };
  }

  function sideUsd(pool: SimDexPool, side: "base" | "quote", t: number): number {
    const p = poolPrices(pool, t);
    return side === "base" ? p.baseUsd : p.quoteUsd;
  }

  function nativeUsd(chain: SimDexPool["chain"], t: number): number {
    return market.priceAt(SIM_DEX_CHAINS[chain].nativeAsset, t);
  }

  function liquidityUsd(pool: SimDexPool, t: number): number {
    return pool.liquidityUsd * Math.exp(0.08 * vn(pool.stream, SALT_LIQ, t, DAY_MS) + 0.03 * vn(pool.stream, SALT_LIQ + 1, t, HOUR_MS));
  }

  /** Model asset whose volume cycle drives the pool's activity (base first), or null. */
  function driverOf(pool: SimDexPool): string | null {
    for (const tk of [pool.base, pool.quote]) if (tk.asset !== null && tk.role !== "lookalike") return tk.asset;
    return null;
  }
  const drivers = new Map<number, string | null>();
  const driver = (pool: SimDexPool): string | null => {
    if (!drivers.has(pool.index)) drivers.set(pool.index, driverOf(pool));
    return drivers.get(pool.index) ?? null;
  };

  const actCache = new Map<number, Map<number, number>>();
  const hourCache = new Map<number, Map<number, HourAgg>>();
  let cacheSize = 0;
  function cacheGuard(): void {
    if (cacheSize > MAX_CACHE) {
      actCache.clear();
      hourCache.clear();
      cacheSize = 0;
    }
  }

  /** Swap rate (per minute) during hour `h`. */
  function lambda(pool: SimDexPool, h: number): number {
    let m = actCache.get(pool.index);
    if (!m) {
      m = new Map();
      actCache.set(pool.index, m);
    }
    const hit = m.get(h);
    if (hit !== undefined) return hit;
    const tMid = h * HOUR_MS + HOUR_MS / 2;
    let act = Math.exp(0.35 * vn(pool.stream, SALT_ACT, tMid, 6 * HOUR_MS) + 0.2 * normalFromHash(hash4(seedH, pool.stream, SALT_ACT_H, h | 0)) - 0.08);
    const d = driver(pool);
    if (d !== null) act *= Math.min(4, market.volume24hUsdAt(d, h * HOUR_MS) / market.params(d).volume24hUsd);
    const lam = (pool.volume24hUsd / pool.avgSwapUsd / 1440) * act;
    cacheGuard();
    m.set(h, lam);
    cacheSize++;
    return lam;
  }

  function minute(pool: SimDexPool, m: number, lam: number): HourAgg {
    const u = uniform(hash4(seedH, pool.stream, SALT_N, m | 0));
    const n = poisson(lam, u, normalFromHash(hash4(seedH, pool.stream, SALT_N + 0x100, m | 0)));
    if (n === 0) return { n: 0, buys: 0, sells: 0, volumeUsd: 0 };
    const z = normalFromHash(hash4(seedH, pool.stream, SALT_V, m | 0));
    const volumeUsd = n * pool.avgSwapUsd * Math.exp(0.55 * z - 0.15);
    const pb = Math.min(0.85, Math.max(0.15, 0.5 + 0.12 * normalFromHash(hash4(seedH, pool.stream, SALT_B, m | 0))));
    const buys = Math.min(n, Math.floor(n * pb + uniform(hash4(seedH, pool.stream, SALT_B2, m | 0))));
    return { n, buys, sells: n - buys, volumeUsd };
  }

  function hourAgg(pool: SimDexPool, h: number): HourAgg {
    let c = hourCache.get(pool.index);
    if (!c) {
      c = new Map();
      hourCache.set(pool.index, c);
    }
    const hit = c.get(h);
    if (hit) return hit;
    const lam = lambda(pool, h);
    const acc: HourAgg = { n: 0, buys: 0, sells: 0, volumeUsd: 0 };
    for (let m = h * 60; m < h * 60 + 60; m++) {
      const s = minute(pool, m, lam);
      acc.n += s.n;
      acc.buys += s.buys;
      acc.sells += s.sells;
      acc.volumeUsd += s.volumeUsd;
    }
    cacheGuard();
    c.set(h, acc);
    cacheSize++;
    return acc;
  }

  /** Sum over minute indices [m0, m1), ignoring minutes before the pool existed. */
  function sumMinutes(pool: SimDexPool, m0: number, m1: number): HourAgg {
    const first = Math.max(m0, Math.ceil(createdAt(pool) / MINUTE_MS));
    const acc: HourAgg = { n: 0, buys: 0, sells: 0, volumeUsd: 0 };
    let m = first;
    while (m < m1) {
      const h = Math.floor(m / 60);
      if (m === h * 60 && m + 60 <= m1) {
        const a = hourAgg(pool, h);
        acc.n += a.n;
        acc.buys += a.buys;
        acc.sells += a.sells;
        acc.volumeUsd += a.volumeUsd;
        m += 60;
        continue;
      }
      const end = Math.min(m1, (h + 1) * 60);
      const lam = lambda(pool, h);
      for (; m < end; m++) {
        const s = minute(pool, m, lam);
        acc.n += s.n;
        acc.buys += s.buys;
        acc.sells += s.sells;
        acc.volumeUsd += s.volumeUsd;
      }
    }
    return acc;
  }

  /** Minutes of the window ending at `t`: the `minutes` minutes up to and including the minute containing `t`. */
  function windowAgg(pool: SimDexPool, t: number, minutes: number): HourAgg {
    const mNow = Math.floor(t / MINUTE_MS);
    return sumMinutes(pool, mNow - minutes + 1, mNow + 1);
  }

  function traders(pool: SimDexPool, count: number, w: DexWindow, salt: number): number {
    if (count === 0) return 0;
    const f = TRADER_RATIO[w] * (0.9 + 0.1 * uniform(hash4(seedH, pool.stream, SALT_TRADERS + salt, DEX_WINDOW_MINUTES[w])));
    return Math.max(1, Math.min(count, Math.round(count * f)));
  }

  function window(pool: SimDexPool, t: number, w: DexWindow): WindowStats {
    const a = windowAgg(pool, t, DEX_WINDOW_MINUTES[w]);
    return { buys: a.buys, sells: a.sells, volumeUsd: a.volumeUsd, buyers: traders(pool, a.buys, w, 1), sellers: traders(pool, a.sells, w, 2) };
  }

  function supply(token: SimDexToken): { total: number; circulating: number; fromModel: boolean } {
    if (token.supply === "model" && token.asset !== null) {
      const circ = market.circulatingSupply(token.asset);
      return { total: market.totalSupply(token.asset) ?? circ, circulating: circ, fromModel: true };
    }
    const n = typeof token.supply === "number" ? token.supply : 0;
    return { total: n, circulating: n, fromModel: false };
  }

  function snapshot(pool: SimDexPool, t: number): PoolSnapshot {
    const prices = poolPrices(pool, t);
    const liq = liquidityUsd(pool, t);
    const windows = {} as Record<DexWindow, WindowStats>;
    for (const w of Object.keys(DEX_WINDOW_MINUTES) as DexWindow[]) windows[w] = window(pool, t, w);
    const change = (minutes: number) => (prices.baseUsd / sideUsd(pool, "base", t - minutes * MINUTE_MS) - 1) * 100;
    return {
      pool,
      t,
      ...prices,
      liquidityUsd: liq,
      baseReserve: liq / 2 / prices.baseUsd,
      quoteReserve: liq / 2 / prices.quoteUsd,
      windows,
      baseChangePct: { m5: change(5), h1: change(60), h6: change(360), h24: change(1440) },
    };
  }

  function volOf(pool: SimDexPool): number {
    const d = driver(pool);
    return d !== null ? market.params(d).annualVol : 1.2;
  }

  function candles(pool: SimDexPool, q: CandleQuery, now: number): OhlcvRow[] {
    const unit = q.timeframe === "minute" ? MINUTE_MS : q.timeframe === "hour" ? HOUR_MS : DAY_MS;
    const span = unit * q.aggregate;
    const step = q.timeframe === "minute" ? span : q.timeframe === "hour" ? 5 * MINUTE_MS : 30 * MINUTE_MS;
    const upto = Math.min(now, (q.beforeMs ?? Infinity) - 1);
    const rows: OhlcvRow[] = [];
    const born = createdAt(pool);
    if (upto < born) return rows;
    const sigma = volOf(pool) * Math.sqrt(step / YEAR_MS) * 0.6 + pool.devBp * 3e-5;
    const price = (t: number): number => {
      const p = poolPrices(pool, t);
      if (q.side === "base") return q.currency === "usd" ? p.baseUsd : p.priceNative;
      return q.currency === "usd" ? p.quoteUsd : 1 / p.priceNative;
    };
    const volumeIn = (usd: number, t: number): number => {
      if (q.currency === "usd") return usd;
      const p = poolPrices(pool, t);
      return usd / (q.side === "base" ? p.quoteUsd : p.baseUsd);
    };
    const maxSlots = Math.max(q.limit * 40, 20_000);
    let oldestOpen: number | undefined;
    const pendingEmpty: number[] = [];
    for (let s = Math.floor(upto / span) * span, slots = 0; rows.length < q.limit && s + span > born && slots < maxSlots; s -= span, slots++) {
      const end = Math.min(s + span, upto + 1);
      const agg = sumMinutes(pool, Math.floor(s / MINUTE_MS), Math.ceil(end / MINUTE_MS));
      if (agg.n === 0) {
        if (q.includeEmpty) pendingEmpty.push(s);
        continue;
      }
      const closeT = Math.min(s + span, upto);
      const open = price(s);
      const close = price(closeT);
      // Empty slots seen so far are newer than this candle: they carry this candle's close.
      for (const e of pendingEmpty) if (rows.length < q.limit) rows.push([e / 1000, close, close, close, close, 0]);
      pendingEmpty.length = 0;
      if (rows.length >= q.limit) break;
      let hi = Math.max(open, close);
      let lo = Math.min(open, close);
      for (let t = s + step; t < closeT; t += step) {
        const p = price(t);
        if (p > hi) hi = p;
        if (p < lo) lo = p;
      }
      const w1 = Math.abs(normalFromHash(hash4(seedH, pool.stream, SALT_WIG, (s / MINUTE_MS) | 0)));
      const w2 = Math.abs(normalFromHash(hash4(seedH, pool.stream, SALT_WIG + 1, (s / MINUTE_MS) | 0)));
      hi *= 1 + Math.min(0.05, w1 * sigma);
      lo *= 1 - Math.min(0.05, w2 * sigma);
      rows.push([s / 1000, open, hi, lo, close, volumeIn(agg.volumeUsd, closeT)]);
      oldestOpen = open;
    }
    // Empty slots older than the oldest candle (or with no candle at all): flat at the price of their start.
    if (q.includeEmpty) {
      for (const e of pendingEmpty) {
        if (rows.length >= q.limit) break;
        const p = oldestOpen ?? price(e);
        rows.push([e / 1000, p, p, p, p, 0]);
      }
    }
    return rows;
  }

  return {
    market,
    tokenUsd,
    nativeUsd,
    poolPrices,
    sideUsd,
    hasSwaps: (pool, t, minutes) => windowAgg(pool, t, minutes).n > 0,
    liquidityUsd,
    window,
    snapshot,
    supply,
    candles,
    createdAt,
  };
}

const dexCache = new WeakMap<MarketModel, DexModel>();

/** The DEX model of `market`, built once per market model and shared by both DEX venue routers. */
export function dexModelFor(market: MarketModel): DexModel {
  let m = dexCache.get(market);
  if (!m) {
    m = createDexModel(market);
    dexCache.set(market, m);
  }
  return m;
}
