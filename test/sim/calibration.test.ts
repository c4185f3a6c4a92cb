/**
 * Issue 15, "a simulator that looks like a market": the simulator's funding, premium, trade tape and price levels
 * against statistics of the real recordings (targets documented in src/sim/perp-model.ts, tape.ts, market.ts and
 * docs/methods/simulator.md). The first block recomputes the targets from the recordings when they are present.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { createService } from "../../src/service.js";
import { fixedClock } from "../../src/sim/clock.js";
import { createMarketModel, PRICE_CAPTURES_2026, type MarketModel } from "../../src/sim/market.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";
import { FUNDING_TARGETS, perpModelFor, PERP_SIM_VENUES, type PerpInstrumentSpec, type PerpModel, type PerpSimVenue } from "../../src/sim/perp-model.js";
import { DEFAULT_REPLAY_DIR } from "../../src/sim/replay.js";
import { DEFAULT_SIM_SEED, startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { createTape, TRADE_SIZE_TARGETS, type Tape } from "../../src/sim/tape.js";

const NOW = Date.parse("2026-11-21T12:34:56.789Z");
const HOUR = 3_600_000;
const DAY = 86_400_000;
const BP = 0.0001;

/** Linear-interpolated quantile (numpy's default). */
function quantile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const k = (s.length - 1) * p;
  const lo = Math.floor(k);
  const hi = Math.min(lo + 1, s.length - 1);
  return (s[lo] as number) + ((s[hi] as number) - (s[lo] as number)) * (k - lo);
}
const median = (xs: readonly number[]): number => quantile(xs, 0.5);

/** Spearman rank correlation. */
function spearman(a: readonly number[], b: readonly number[]): number {
  const rank = (v: readonly number[]) => {
    const r = new Array<number>(v.length);
    [...v.keys()].sort((i, j) => (v[i] as number) - (v[j] as number)).forEach((i, k) => (r[i] = k));
    return r;
  };
  const ra = rank(a);
  const rb = rank(b);
  const m = (a.length - 1) / 2;
  let num = 0;
  let da = 0;
  let db = 0;
  for (let i = 0; i < a.length; i++) {
    num += ((ra[i] as number) - m) * ((rb[i] as number) - m);
    da += ((ra[i] as number) - m) ** 2;
    db += ((rb[i] as number) - m) ** 2;
  }
  return num / Math.sqrt(da * db);
}

// ---------------------------------------------------------------- the targets, recomputed from the recordings

/** The real recordings the targets come from (the shared real-data folder; the project copy lacks some of them). */
const REAL_FILES = [
  "binance/usdm_premiumIndex_all_symbols_2024-11-27.json",
  "hyperliquid/nautilus_ws_allDexsAssetCtxs.json",
  "bybit/cryptofeed_v5_ws_linear_spot_publicTrade_tickers_kline_2026-08-09.ndjson",
];
/** Overridden by MARKETGATE_REAL_DATA_DIR; else the project recordings, else the shared real-data folder. */
const REAL = [process.env.MARKETGATE_REAL_DATA_DIR, DEFAULT_REPLAY_DIR, "/work/shared/data/real"].find(
  (d): d is string => d !== undefined && REAL_FILES.every((f) => existsSync(join(d, f))),
);
const haveReal = REAL !== undefined;
const readJson = <T>(rel: string): T => JSON.parse(readFileSync(join(REAL ?? "", rel), "utf8")) as T;
const readNdjson = (rel: string): Array<Record<string, unknown>> =>
  readFileSync(join(REAL ?? "", rel), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe.skipIf(!haveReal)("calibration targets match the real recordings", () => {
  it("Binance premiumIndex 2024-11-27: pinned shares per interval, the unpinned side, mark/index quantiles", () => {
    type Row = { symbol: string; markPrice: string; indexPrice: string; lastFundingRate: string; interestRate: string };
    const rows = readJson<Row[]>("binance/usdm_premiumIndex_all_symbols_2024-11-27.json").filter(
      (r) => Number(r.interestRate) > 0 && Number(r.indexPrice) > 0 && !r.symbol.includes("_"),
    );
    expect(rows).toHaveLength(371);
    const pinned = (r: Row) => r.lastFundingRate === r.interestRate;
    const eight = rows.filter((r) => r.interestRate === "0.00010000");
    const four = rows.filter((r) => r.interestRate === "0.00005000");
    expect(eight.filter(pinned).length / eight.length).toBeCloseTo(FUNDING_TARGETS.binance.pinned8h, 3);
    expect(four.filter(pinned).length / four.length).toBeCloseTo(FUNDING_TARGETS.binance.pinned4h, 3);
    // The "41 %": rates of exactly 0.01 % among every symbol, 4h ones (pinned at 0.005 %) counted as unpinned.
    expect(rows.filter((r) => r.lastFundingRate === "0.00010000").length / rows.length).toBeCloseTo(0.407, 3);
    const unpinned = rows.filter((r) => !pinned(r));
    const above = unpinned.filter((r) => Number(r.lastFundingRate) > Number(r.interestRate));
    expect(above.length / unpinned.length).toBeCloseTo(FUNDING_TARGETS.binance.aboveOfUnpinned, 3);
    const prem = rows.map((r) => Number(r.markPrice) / Number(r.indexPrice) - 1);
    expect(quantile(prem, 0.1)).toBeCloseTo(FUNDING_TARGETS.binance.markPremiumP10, 5);
    expect(quantile(prem, 0.5)).toBeCloseTo(FUNDING_TARGETS.binance.markPremiumP50, 5);
    expect(quantile(prem, 0.9)).toBeCloseTo(FUNDING_TARGETS.binance.markPremiumP90, 5);
  });

  it("Hyperliquid allDexsAssetCtxs (main dex): pinned share of live coins, the unpinned side, mark/oracle quantiles", () => {
    type Ctx = { funding: string; premium: string | null; markPx: string; oraclePx: string; openInterest: string };
    const doc = readJson<{ data: { ctxs: Array<[string, Ctx[]]> } }>("hyperliquid/nautilus_ws_allDexsAssetCtxs.json");
    const main = doc.data.ctxs.find(([dex]) => dex === "")?.[1] ?? [];
    const live = main.filter((c) => c.premium !== null && Number(c.openInterest) > 0);
    expect([main.length, live.length]).toEqual([230, 179]);
    const pinned = live.filter((c) => c.funding === "0.0000125");
    expect(pinned.length / live.length).toBeCloseTo(FUNDING_TARGETS.hyperliquid.pinned, 3);
    expect(pinned.length / main.length).toBeCloseTo(0.548, 3); // the "55 %" (delisted coins included)
    const unpinned = live.filter((c) => c.funding !== "0.0000125");
    expect(unpinned.filter((c) => Number(c.funding) > 0.0000125).length / unpinned.length).toBeCloseTo(FUNDING_TARGETS.hyperliquid.aboveOfUnpinned, 2);
    const prem = live.map((c) => Number(c.markPx) / Number(c.oraclePx) - 1);
    expect(quantile(prem, 0.1)).toBeCloseTo(FUNDING_TARGETS.hyperliquid.markPremiumP10, 5);
    expect(quantile(prem, 0.5)).toBeCloseTo(FUNDING_TARGETS.hyperliquid.markPremiumP50, 5);
    expect(quantile(prem, 0.9)).toBeCloseTo(FUNDING_TARGETS.hyperliquid.markPremiumP90, 5);
  });

  it("Bybit 2026-08-09: linear trade sizes in USD and the price captures", () => {
    const frames = readNdjson("bybit/cryptofeed_v5_ws_linear_spot_publicTrade_tickers_kline_2026-08-09.ndjson");
    const sizes = new Map<string, number[]>();
    const last = new Map<string, number>();
    for (const f of frames) {
      const d = f.data as { topic?: string; data?: unknown } | undefined;
      if (f.conn !== "BYBIT.ws.2" || typeof d?.topic !== "string") continue; // BYBIT.ws.2 is /v5/public/linear
      if (d.topic.startsWith("publicTrade.")) {
        for (const t of d.data as Array<{ s: string; p: string; v: string }>) sizes.set(t.s, [...(sizes.get(t.s) ?? []), Number(t.p) * Number(t.v)]);
      } else if (d.topic.startsWith("tickers.")) {
        const t = d.data as { symbol: string; lastPrice?: string };
        if (t.lastPrice !== undefined) last.set(t.symbol, Number(t.lastPrice));
      }
    }
    const btc = sizes.get("BTCUSDT") ?? [];
    expect(btc).toHaveLength(56);
    expect(quantile(btc, 0.5)).toBeCloseTo(TRADE_SIZE_TARGETS.btcBybit.p50, 0);
    expect(quantile(btc, 0.9)).toBeCloseTo(TRADE_SIZE_TARGETS.btcBybit.p90, 0);
    expect(quantile(btc, 0.99)).toBeCloseTo(TRADE_SIZE_TARGETS.btcBybit.p99, 0);
    const majors = ["BTCUSDT", "ETHUSDT", "SOLUSDT"].flatMap((s) => sizes.get(s) ?? []);
    expect(quantile(majors, 0.5)).toBeCloseTo(TRADE_SIZE_TARGETS.majorsBybit.p50, 0);
    expect(quantile(majors, 0.9)).toBeCloseTo(TRADE_SIZE_TARGETS.majorsBybit.p90, 0);
    expect(quantile(majors, 0.99)).toBeCloseTo(TRADE_SIZE_TARGETS.majorsBybit.p99, 0);
    for (const [sym, base] of [
      ["BTCUSDT", "BTC"],
      ["ETHUSDT", "ETH"],
      ["SOLUSDT", "SOL"],
      ["DOGEUSDT", "DOGE"],
    ] as const) {
      expect(PRICE_CAPTURES_2026[base], sym).toContain(last.get(sym));
    }
  });
});

// ---------------------------------------------------------------- the simulator against the targets

let market: MarketModel;
let perp: PerpModel;

beforeAll(() => {
  market = createMarketModel({ seed: DEFAULT_SIM_SEED, clock: fixedClock(NOW) });
  perp = perpModelFor(market);
});

/** 120 instants spread over ~5 weeks before NOW, at irregular offsets within the funding intervals. */
const INSTANTS = Array.from({ length: 120 }, (_, i) => NOW - i * 25_000_000 - ((i * 1_234_567) % HOUR));

/**
 * The live target perpetuals of a venue, extreme ones included: like the real snapshots, which count every live
 * symbol (the simulator's EXTREME_PREMIUM bases are its share of markets beyond ±0.05 % per 8h).
 */
function live(venue: PerpSimVenue): PerpInstrumentSpec[] {
  return perp.instruments(venue, NOW).filter((i) => i.target && i.kind === "perpetual" && !i.delisted);
}

interface FundingStats {
  pinned: number;
  aboveOfUnpinned: number;
  /** |F − I| of the unpinned, 8h-equivalent. */
  absDeviations: number[];
  markPremiums: number[];
  /** Per sample: mark premium and whether funding is above / at / below the default. */
  samples: Array<{ premium: number; rate8h: number; side: 1 | 0 | -1 }>;
}

/** Pinned = the current rate equals the venue default for the interval (0.01 % per 8h, Hyperliquid 0.00125 %/h). */
function fundingStats(venue: PerpSimVenue, interval?: number): FundingStats {
  const insts = live(venue).filter((i) => interval === undefined || i.fundingIntervalHours === interval);
  const out: FundingStats = { pinned: 0, aboveOfUnpinned: 0, absDeviations: [], markPremiums: [], samples: [] };
  let n = 0;
  let pinned = 0;
  let above = 0;
  for (const t of INSTANTS) {
    for (const inst of insts) {
      const f = perp.currentFundingRate(inst, t);
      const def = venue === "hyperliquid" ? 0.0001 / 8 : (0.0001 * inst.fundingIntervalHours) / 8;
      const k = venue === "hyperliquid" ? 8 : 8 / inst.fundingIntervalHours;
      const premium = perp.markPrice(inst, t) / perp.indexPrice(inst, t) - 1;
      n += 1;
      const side = Math.abs(f - def) < 1e-12 ? 0 : f > def ? 1 : -1;
      if (side === 0) pinned += 1;
      else out.absDeviations.push(Math.abs(f - def) * k);
      if (side === 1) above += 1;
      out.markPremiums.push(premium);
      out.samples.push({ premium, rate8h: f * k, side });
    }
  }
  out.pinned = pinned / n;
  out.aboveOfUnpinned = above / Math.max(1, n - pinned);
  return out;
}

describe("funding: pinned share and dispersion per venue", () => {
  it("Binance: ≈ 74 % of 8h markets pinned at 0.01 % (real 73.7 %), the rest mostly just above", () => {
    const s = fundingStats("binance", 8);
    expect(s.pinned).toBeGreaterThan(FUNDING_TARGETS.binance.pinned8h - 0.1);
    expect(s.pinned).toBeLessThan(FUNDING_TARGETS.binance.pinned8h + 0.1);
    expect(s.aboveOfUnpinned).toBeGreaterThan(FUNDING_TARGETS.binance.aboveOfUnpinned - 0.15);
    // Real: the unpinned sit close to the default (median |F − I| 1.26 bp per 8h).
    expect(median(s.absDeviations)).toBeGreaterThan(0.4 * BP);
    expect(median(s.absDeviations)).toBeLessThan(3 * BP);
  });

  it("Bybit (Binance's formula): ≈ 74 % pinned; OKX (no interest term): never pinned", () => {
    const by = fundingStats("bybit", 8);
    expect(by.pinned).toBeGreaterThan(FUNDING_TARGETS.bybit.pinned8h - 0.12);
    expect(by.pinned).toBeLessThan(FUNDING_TARGETS.bybit.pinned8h + 0.12);
    const okx = fundingStats("okx");
    expect(okx.pinned).toBeLessThan(0.01);
    expect(okx.aboveOfUnpinned).toBeGreaterThan(0.3);
    expect(okx.aboveOfUnpinned).toBeLessThan(0.7);
  });

  it("Hyperliquid: ≈ 70 % of live coins pinned at 0.00125 %/h (real 70.4 %), the rest mostly below", () => {
    const s = fundingStats("hyperliquid");
    expect(s.pinned).toBeGreaterThan(FUNDING_TARGETS.hyperliquid.pinned - 0.1);
    expect(s.pinned).toBeLessThan(FUNDING_TARGETS.hyperliquid.pinned + 0.1);
    expect(s.aboveOfUnpinned).toBeGreaterThan(FUNDING_TARGETS.hyperliquid.aboveOfUnpinned - 0.15);
    expect(s.aboveOfUnpinned).toBeLessThan(FUNDING_TARGETS.hyperliquid.aboveOfUnpinned + 0.15);
    expect(median(s.absDeviations)).toBeGreaterThan(0.4 * BP);
    expect(median(s.absDeviations)).toBeLessThan(4 * BP);
  });

  it("the four venues' annualised rates differ: never all equal for a base at one instant", () => {
    let equal = 0;
    let total = 0;
    for (const t of INSTANTS.slice(0, 60)) {
      for (const base of ["BTC", "ETH", "SOL", "XRP", "DOGE", "LINK"]) {
        const aprs = PERP_SIM_VENUES.map((v) => {
          const inst = perp.perpOf(v, base) as PerpInstrumentSpec;
          return Number(((perp.currentFundingRate(inst, t) * 8760) / inst.fundingIntervalHours).toPrecision(12));
        });
        total += 1;
        if (aprs.every((a) => a === aprs[0])) equal += 1;
      }
    }
    expect(equal / total).toBe(0);
  });
});

describe("premium (mark vs index) consistent with funding", () => {
  it("Binance: mark/index − 1 quantiles within 4 bp of the real snapshot; higher premium, higher funding", () => {
    const s = fundingStats("binance");
    expect(Math.abs(quantile(s.markPremiums, 0.1) - FUNDING_TARGETS.binance.markPremiumP10)).toBeLessThan(4 * BP);
    expect(Math.abs(quantile(s.markPremiums, 0.5) - FUNDING_TARGETS.binance.markPremiumP50)).toBeLessThan(4 * BP);
    expect(Math.abs(quantile(s.markPremiums, 0.9) - FUNDING_TARGETS.binance.markPremiumP90)).toBeLessThan(4 * BP);
    // Real: median mark premium 6.7 bp where funding is above the default, 3.5 bp pinned, −12.7 bp below; ρ = 0.31.
    const med = (side: number) => median(s.samples.filter((x) => x.side === side).map((x) => x.premium));
    expect(med(1)).toBeGreaterThan(med(0));
    expect(med(0)).toBeGreaterThan(med(-1));
    expect(
      spearman(
        s.samples.map((x) => x.premium),
        s.samples.map((x) => x.rate8h),
      ),
    ).toBeGreaterThan(0.2);
  });

  it("Hyperliquid: mark/oracle − 1 spread (p90 − p10) within 0.5-1.5× the real one; same ordering with funding", () => {
    const s = fundingStats("hyperliquid");
    const realSpread = FUNDING_TARGETS.hyperliquid.markPremiumP90 - FUNDING_TARGETS.hyperliquid.markPremiumP10;
    const spread = quantile(s.markPremiums, 0.9) - quantile(s.markPremiums, 0.1);
    expect(spread / realSpread).toBeGreaterThan(0.5);
    expect(spread / realSpread).toBeLessThan(1.5);
    // The real median (−4.2 bp) sits below the simulated one (≈ 0): the simulator's mark is oracle × (1 + premium).
    expect(Math.abs(quantile(s.markPremiums, 0.5) - FUNDING_TARGETS.hyperliquid.markPremiumP50)).toBeLessThan(6 * BP);
    const med = (side: number) => median(s.samples.filter((x) => x.side === side).map((x) => x.premium));
    expect(med(1)).toBeGreaterThan(med(0));
    expect(med(0)).toBeGreaterThan(med(-1));
    expect(
      spearman(
        s.samples.map((x) => x.premium),
        s.samples.map((x) => x.rate8h),
      ),
    ).toBeGreaterThan(0.2);
  });
});

// ---------------------------------------------------------------- the trade tape

describe("trade tape: sizes and volume", () => {
  let tape: Tape;
  beforeAll(() => {
    tape = createTape(market);
  });

  /** USD notionals of `venue`/`base` trades in 24 ten-minute windows, one per hour of the day before NOW. */
  function sizes(venue: PerpSimVenue, base: string): number[] {
    const out: number[] = [];
    for (let h = 0; h < 24; h++) {
      const from = NOW - (h + 1) * HOUR + 17 * 60_000;
      for (const t of tape.trades(venue, base, from, from + 10 * 60_000)) out.push(t.price * t.size);
    }
    return out;
  }

  it("BTC on Bybit: p50/p90/p99 within 1.6× of the real fills ($456 / $18.8k / $93k)", () => {
    const s = sizes("bybit", "BTC");
    expect(s.length).toBeGreaterThan(10_000);
    const t = TRADE_SIZE_TARGETS.btcBybit;
    for (const [p, target] of [
      [0.5, t.p50],
      [0.9, t.p90],
      [0.99, t.p99],
    ] as const) {
      const ratio = quantile(s, p) / target;
      expect(ratio, `p${p * 100}`).toBeGreaterThan(1 / 1.6);
      expect(ratio, `p${p * 100}`).toBeLessThan(1.6);
    }
  });

  it("BTC, ETH and SOL pooled on Bybit: within 2× of the real pooled fills; Binance's BTC tail reaches ≈ $100k+", () => {
    const s = [...sizes("bybit", "BTC"), ...sizes("bybit", "ETH"), ...sizes("bybit", "SOL")];
    const t = TRADE_SIZE_TARGETS.majorsBybit;
    for (const [p, target] of [
      [0.5, t.p50],
      [0.9, t.p90],
      [0.99, t.p99],
    ] as const) {
      const ratio = quantile(s, p) / target;
      expect(ratio, `p${p * 100}`).toBeGreaterThan(0.5);
      expect(ratio, `p${p * 100}`).toBeLessThan(2);
    }
    const p99 = quantile(sizes("binance", "BTC"), 0.99);
    expect(p99).toBeGreaterThan(70_000);
    expect(p99).toBeLessThan(250_000);
  });

  it("the tape's 24h notional equals the venue's own 24h ticker turnover (ratio 0.8-1.25, not 30×)", () => {
    for (const [venue, base] of [
      ["binance", "BTC"],
      ["bybit", "ETH"],
      ["okx", "SOL"],
      ["hyperliquid", "BTC"],
      ["bybit", "DOGE"],
      ["binance", "ATOM"],
    ] as const) {
      // 48 windows of 3 minutes, one every 30 minutes of the last 24h, scaled to 24h.
      let notional = 0;
      for (let k = 0; k < 48; k++) {
        const from = NOW - DAY + k * 30 * 60_000 + 7 * 60_000;
        for (const t of tape.trades(venue, base, from, from + 3 * 60_000)) notional += t.price * t.size;
      }
      const ratio = (notional * 10) / perp.turnover24hUsd(perp.perpOf(venue, base) as PerpInstrumentSpec, NOW);
      expect(ratio, `${venue} ${base}`).toBeGreaterThan(0.8);
      expect(ratio, `${venue} ${base}`).toBeLessThan(1.25);
    }
  });

  it("venue 24h turnover at 2026 levels: Bybit BTC ≈ $1.1bn, Hyperliquid BTC ≈ $1.5bn (0.4-2.5×)", () => {
    const days = Array.from({ length: 20 }, (_, i) => NOW - i * 3 * DAY);
    const avg = (venue: PerpSimVenue, base: string) => days.reduce((a, t) => a + perp.turnover24hUsd(perp.perpOf(venue, base) as PerpInstrumentSpec, t), 0) / days.length;
    for (const [venue, base, real] of [
      ["bybit", "BTC", 1.14e9],
      ["bybit", "ETH", 0.51e9],
      ["hyperliquid", "BTC", 1.52e9],
      ["hyperliquid", "ETH", 0.59e9],
    ] as const) {
      expect(avg(venue, base) / real, `${venue} ${base}`).toBeGreaterThan(0.4);
      expect(avg(venue, base) / real, `${venue} ${base}`).toBeLessThan(2.5);
    }
  });
});

// ---------------------------------------------------------------- price levels

describe("price levels: 2026", () => {
  const times = [...Array.from({ length: 146 }, (_, i) => Date.UTC(2026, 0, 1) + i * 2.5 * DAY + ((i * 7_777_777) % DAY)), Date.now()];

  it("BTC stays within 65-78k (its 2026 captures 65,084-77,562), at any time of 2026 and now", () => {
    const band = market.priceBand("BTC");
    expect(band.low).toBeGreaterThan(65_000);
    expect(band.high).toBeLessThan(78_000);
    const px = times.map((t) => market.priceAt("BTC", t));
    expect(Math.min(...px)).toBeGreaterThan(65_000);
    expect(Math.max(...px)).toBeLessThan(78_000);
    // and it moves around inside: not pinned to an edge
    expect(quantile(px, 0.9) / quantile(px, 0.1)).toBeGreaterThan(1.05);
  });

  it("every captured base sits at its 2026 level: within 25 % of its captures, median within 10 % of their centre", () => {
    for (const [base, caps] of Object.entries(PRICE_CAPTURES_2026)) {
      const lo = Math.min(...caps);
      const hi = Math.max(...caps);
      const px = times.map((t) => market.priceAt(base, t));
      expect(Math.min(...px), base).toBeGreaterThan(lo / 1.25);
      expect(Math.max(...px), base).toBeLessThan(hi * 1.25);
      expect(Math.abs(Math.log(median(px) / Math.sqrt(lo * hi))), base).toBeLessThan(Math.log(1.1));
      expect(market.params(base).anchorUsd / Math.sqrt(lo * hi), base).toBeCloseTo(1, 3);
    }
  });
});

// ---------------------------------------------------------------- through the tools, on a sandbox-like stack

describe("funding tools on the simulator (seed 42 and the system clock, like `npm run sandbox`)", () => {
  let sim: RunningSimulator;
  let url: string;
  let close: () => Promise<void>;
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`);
    return { status: res.status, source: res.headers.get("x-data-source"), body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    sim = await startSimulator({ seed: DEFAULT_SIM_SEED });
    const service = await createService({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim) }) });
    const l = await service.listen();
    url = l.url;
    close = async () => {
      await l.close();
      await sim.close();
    };
  });
  afterAll(async () => {
    await close?.();
  });

  it("funding-compare: best_arb is an object for BTC, ETH and SOL; every answer is labelled simulated", async () => {
    for (const base of ["BTC", "ETH", "SOL"]) {
      const r = await get(`/futures/funding-compare/${base}`);
      expect(r.status, base).toBe(200);
      expect(r.source, base).toBe("simulated");
      const exchanges = r.body.exchanges as Record<string, { annualized_pct: number }>;
      expect(Object.keys(exchanges).sort()).toEqual([...PERP_VENUES].sort());
      const arb = r.body.best_arb as { long_exchange: string; short_exchange: string; annualized_spread_pct: number } | null;
      expect(arb, base).not.toBeNull();
      expect(arb?.annualized_spread_pct, base).toBeGreaterThan(0);
      expect(new Set(Object.values(exchanges).map((e) => e.annualized_pct)).size, base).toBeGreaterThan(1);
    }
  });

  it("/arbitrage-opportunity (defaults) returns funding spreads", async () => {
    const r = await get("/arbitrage-opportunity");
    expect(r.status).toBe(200);
    expect(r.source).toBe("simulated");
    const ops = r.body.opportunities as Array<{ type: string; annualized_yield_pct: number }>;
    expect(ops.filter((o) => o.type === "funding_spread").length).toBeGreaterThan(0);
    for (const o of ops) expect(o.annualized_yield_pct).toBeGreaterThanOrEqual(5);
  });

  it("the sandbox's BTC price is at its 2026 level", async () => {
    const r = await fetch(`${sim.urls.coingecko}/simple/price?ids=bitcoin&vs_currencies=usd`);
    const body = (await r.json()) as { bitcoin: { usd: number } };
    expect(body.bitcoin.usd).toBeGreaterThan(65_000);
    expect(body.bitcoin.usd).toBeLessThan(78_000);
  });
});
