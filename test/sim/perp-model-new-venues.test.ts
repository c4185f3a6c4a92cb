/**
 * The simulator's perp model and tape for the venues of issue 22 (Gate, Bitget, Deribit, Aster): instruments and
 * their units, funding intervals and formulas, open-interest shares against the calibration, the tape's liquidation
 * rates and the venues' trade ids.
 */
import { describe, expect, it } from "vitest";
import { fixedClock } from "../../src/sim/clock.js";
import { createMarketModel } from "../../src/sim/market.js";
import { perpModelFor, PERP_SIM_VENUES, type PerpInstrumentSpec, type PerpSimVenue } from "../../src/sim/perp-model.js";
import { BTC_OI_PCT_OF_MARKET, liquidationsPerMin, NEW_PERP_SIM_VENUES, OI_SHARE } from "../../src/sim/perp/calibration.js";
import { DERIBIT_DAMPER } from "../../src/sim/perp/funding.js";
import {
  asterAggFields,
  bitgetTradeId,
  createTape,
  deribitLiquidationTrade,
  deribitTradeId,
  deribitTradeSeq,
  gateSignedSize,
  gateTradeId,
  normaliseLiquidation,
  normaliseTrade,
  type TapeTrade,
} from "../../src/sim/tape.js";

const NOW = Date.UTC(2026, 7, 9, 13, 0, 0);
const HOUR = 3_600_000;
const market = createMarketModel({ seed: 42, clock: fixedClock(NOW) });
const perp = perpModelFor(market);
const tape = createTape(market);

function must(venue: PerpSimVenue, symbol: string): PerpInstrumentSpec {
  const inst = perp.instrument(venue, symbol, NOW);
  if (!inst) throw new Error(`${venue} ${symbol} not listed`);
  return inst;
}
const target = (venue: PerpSimVenue, base: string): PerpInstrumentSpec => perp.perpOf(venue, base) as PerpInstrumentSpec;
const symbols = (venue: PerpSimVenue): string[] => perp.instruments(venue, NOW).map((i) => i.symbol);
const isMultipleOf = (x: number, step: number): boolean => Math.abs(x / step - Math.round(x / step)) < 1e-6;

describe("the venue list", () => {
  it("keeps the first four venues first, then gate, bitget, deribit, aster, then the venues added since", () => {
    expect(PERP_SIM_VENUES.slice(0, 8)).toEqual(["binance", "bybit", "okx", "hyperliquid", "gate", "bitget", "deribit", "aster"]);
    expect(NEW_PERP_SIM_VENUES).toEqual(PERP_SIM_VENUES.slice(4));
  });
});

describe("Gate: BTC_USDT contracts of quanto_multiplier coins", () => {
  it("lists `<BASE>_USDT` symbols with the real BTC/ETH quanto multipliers, MATIC absent", () => {
    expect(symbols("gate").every((s) => /^[A-Z0-9]+_USDT$/.test(s))).toBe(true);
    expect(must("gate", "BTC_USDT")).toMatchObject({ ctVal: 0.0001, ctValStr: "0.0001", multiplier: 1, inverse: false, quote: "USDT", qtyDecimals: 0, target: true });
    expect(must("gate", "ETH_USDT")).toMatchObject({ ctVal: 0.01, ctValStr: "0.01" });
    expect(must("gate", "DOGE_USDT").ctVal).toBe(10);
    expect(perp.perpOf("gate", "MATIC")).toBeUndefined();
  });

  it("trades whole contracts; a consumer's contracts × quanto_multiplier is the coin size, the sign of `size` the taker side", () => {
    const inst = target("gate", "BTC");
    const trades = tape.tradesOf(inst, NOW - 120_000, NOW);
    expect(trades.length).toBeGreaterThan(50);
    for (const t of trades) {
      expect(t.sz).toMatch(/^[1-9]\d*$/);
      const n = normaliseTrade(t);
      expect(n.size).toBeCloseTo(Number(t.sz) * 0.0001, 12);
      expect(n.price).toBe(Number(t.px));
      expect(Math.sign(gateSignedSize(t))).toBe(t.side === "buy" ? 1 : -1);
    }
  });
});

describe("Bitget: BTCUSDT sized in coins", () => {
  it("lists `<BASE>USDT` without 1000× symbols; sizes in coins", () => {
    expect(symbols("bitget").every((s) => /^[A-Z0-9]+USDT$/.test(s))).toBe(true);
    expect(must("bitget", "PEPEUSDT")).toMatchObject({ multiplier: 1, ctVal: 1, venueBase: "PEPE" });
    expect(perp.instrument("bitget", "1000PEPEUSDT", NOW)).toBeUndefined();
    const t = tape.tradesOf(target("bitget", "BTC"), NOW - 60_000, NOW)[0] as TapeTrade;
    expect(normaliseTrade(t).size).toBe(Number(t.sz));
  });
});

describe("Deribit: inverse BTC/ETH perpetuals beside USDC linear perps", () => {
  it("BTC-PERPETUAL and ETH-PERPETUAL are inverse, 10 and 1 USD per contract, and are the BTC/ETH targets", () => {
    expect(target("deribit", "BTC")).toMatchObject({ symbol: "BTC-PERPETUAL", inverse: true, quote: "USD", ctVal: 10, ctValStr: "10", tickSize: 0.5 });
    expect(target("deribit", "ETH")).toMatchObject({ symbol: "ETH-PERPETUAL", inverse: true, ctVal: 1, tickSize: 0.05 });
    expect(must("deribit", "BTC_USDC-PERPETUAL")).toMatchObject({ inverse: false, quote: "USDC", target: false });
  });

  it("lists only its few coins: linear `<BASE>_USDC-PERPETUAL`, nothing for PEPE or WIF", () => {
    const linear = symbols("deribit")
      .filter((s) => s.includes("_USDC-"))
      .sort();
    expect(linear).toEqual(["ADA", "AVAX", "BNB", "BTC", "DOGE", "DOT", "ETH", "LINK", "LTC", "NEAR", "SOL", "TRX", "UNI", "XRP"].map((b) => `${b}_USDC-PERPETUAL`));
    expect(target("deribit", "SOL")).toMatchObject({ symbol: "SOL_USDC-PERPETUAL", inverse: false, ctVal: 1 });
    expect(perp.perpOf("deribit", "PEPE")).toBeUndefined();
    expect(perp.perpOf("deribit", "WIF")).toBeUndefined();
  });

  it("inverse trades: `amount` in USD, a multiple of the contract size, priced on the 0.5 tick; coins = amount ÷ price", () => {
    const trades = tape.tradesOf(target("deribit", "BTC"), NOW - 300_000, NOW);
    expect(trades.length).toBeGreaterThan(20);
    for (const t of trades) {
      expect(isMultipleOf(Number(t.sz), 10)).toBe(true);
      expect(isMultipleOf(Number(t.px), 0.5)).toBe(true);
      expect(normaliseTrade(t).size).toBeCloseTo(Number(t.sz) / Number(t.px), 12);
    }
  });
});

describe("Aster: Binance-compatible", () => {
  it("lists 1000PEPEUSDT (1000 coins per unit) and puts its 4h symbols in fundingInfo", () => {
    expect(must("aster", "1000PEPEUSDT")).toMatchObject({ multiplier: 1000, venueBase: "1000PEPE", base: "PEPE" });
    const t = tape.tradesOf(target("aster", "PEPE"), NOW - 600_000, NOW)[0] as TapeTrade;
    expect(normaliseTrade(t).size).toBe(Number(t.sz) * 1000);
    expect(must("aster", "WIFUSDT")).toMatchObject({ fundingIntervalHours: 4, fundingInfoListed: true });
    expect(must("aster", "BTCUSDT")).toMatchObject({ fundingIntervalHours: 8, fundingInfoListed: false });
  });
});

describe("funding intervals and formulas", () => {
  it("per-symbol intervals: 8h on most, 4h and 1h on some; settlements on UTC multiples of the interval", () => {
    const cases: Array<[PerpSimVenue, string, number]> = [
      ["gate", "BTC_USDT", 8],
      ["gate", "DOGE_USDT", 4],
      ["gate", "SEI_USDT", 1],
      ["bitget", "BTCUSDT", 8],
      ["bitget", "TIAUSDT", 4],
      ["bitget", "SEIUSDT", 1],
      ["aster", "OPUSDT", 4],
      ["deribit", "BTC-PERPETUAL", 8],
    ];
    for (const [venue, symbol, hours] of cases) {
      const inst = must(venue, symbol);
      expect(inst.fundingIntervalHours, `${venue} ${symbol}`).toBe(hours);
      const iv = hours * HOUR;
      const times = perp.settlementTimes(inst, NOW - 24 * HOUR + 1, NOW);
      expect(times.length).toBe(24 / hours);
      for (const s of times) expect(s % iv).toBe(0);
      expect(perp.nextFundingTime(inst, NOW + 1)).toBe(Math.ceil((NOW + 1) / iv) * iv);
    }
  });

  it("Gate, Bitget and Aster pin at the interest rate (0.01 % per 8h pro rata) while the premium is small", () => {
    for (const venue of ["gate", "bitget", "aster"] as const) {
      const rates = perp.instruments(venue, NOW).flatMap((i) => perp.settlementTimes(i, NOW - 24 * HOUR, NOW).map((s) => [i, perp.settledFundingRate(i, s)] as const));
      const pinned = rates.filter(([i, r]) => Math.abs(r - perp.interestRate(i)) < 1e-12).length;
      expect(pinned / rates.length, venue).toBeGreaterThan(0.3);
      expect(perp.interestRate(must(venue, venue === "gate" ? "SEI_USDT" : venue === "bitget" ? "SEIUSDT" : "WIFUSDT"))).toBeLessThan(0.0001);
    }
  });

  it("Deribit: no interest, a ±0.025 % damper, continuous funding readable at any hour (interest_8h)", () => {
    const inst = target("deribit", "BTC");
    expect(inst.continuousFunding).toBe(true);
    expect(perp.interestRate(inst)).toBe(0);
    let zero = 0;
    let total = 0;
    for (let h = 1; h <= 96; h++) {
      const t = NOW - h * HOUR; // every hour, not only 8h boundaries
      for (const i of [inst, target("deribit", "SOL"), target("deribit", "ETH")]) {
        const p = perp.settledPremium(i, t);
        const f = perp.settledFundingRate(i, t);
        const damped = Math.max(DERIBIT_DAMPER, p) + Math.min(-DERIBIT_DAMPER, p);
        expect(f).toBeCloseTo(Math.max(-i.fundingCap, Math.min(i.fundingCap, damped)), 15);
        total += 1;
        if (f === 0) zero += 1;
      }
    }
    // Both regimes occur: inside the dead band (0) and beyond it.
    expect(zero).toBeGreaterThan(0);
    expect(zero).toBeLessThan(total);
  });
});

describe("open interest against the calibration", () => {
  it("each new venue's BTC OI relative to Binance's is its calibrated share (same drift per base; ±15 % hourly noise)", () => {
    for (const venue of NEW_PERP_SIM_VENUES) {
      const ratios = [0, 1, 2, 3, 4, 5].map((d) => {
        const t = NOW - d * 24 * HOUR;
        return perp.openInterestCoins(target(venue, "BTC"), t) / perp.openInterestCoins(target("binance", "BTC"), t);
      });
      const mean = ratios.reduce((a, b) => a + b) / ratios.length;
      expect(mean / (OI_SHARE[venue] / OI_SHARE.binance), venue).toBeGreaterThan(0.85);
      expect(mean / (OI_SHARE[venue] / OI_SHARE.binance), venue).toBeLessThan(1.15);
    }
  });

  it("the new venues hold their cited share of all the venues' BTC OI (issue 22's four ≈ 23 of 68 %)", () => {
    const oi = (v: PerpSimVenue) => perp.openInterestCoins(target(v, "BTC"), NOW);
    const all = PERP_SIM_VENUES.reduce((a, v) => a + oi(v), 0);
    const added = NEW_PERP_SIM_VENUES.reduce((a, v) => a + oi(v), 0);
    const pct = BTC_OI_PCT_OF_MARKET;
    const newPct = NEW_PERP_SIM_VENUES.reduce((a, v) => a + pct[v], 0);
    const expected = newPct / (pct.firstFour + newPct);
    expect(added / all).toBeGreaterThan(expected - 0.04);
    expect(added / all).toBeLessThan(expected + 0.04);
    // The cited figures: Gate and Bitget large, Deribit mid, Aster small.
    expect(oi("gate")).toBeGreaterThan(oi("bitget"));
    expect(oi("bitget")).toBeGreaterThan(oi("deribit"));
    expect(oi("deribit")).toBeGreaterThan(3 * oi("aster"));
  });
});

describe("liquidations on the tape", () => {
  it("over a simulated hour each venue's listed perps liquidate at its calibrated rate (Gate ≈ 1.8/min, Aster ≈ 0.1/min)", () => {
    for (const venue of NEW_PERP_SIM_VENUES) {
      const targets = perp.instruments(venue, NOW).filter((i) => i.target);
      const count = targets.reduce((a, i) => a + tape.liquidationsOf(i, NOW - HOUR, NOW).length, 0);
      const expected = liquidationsPerMin(venue)! * 60;
      // ±40 %, or 3 Poisson sd where the hour holds few events (Aster: 6 expected).
      const tol = Math.max(0.4 * expected, 3 * Math.sqrt(expected));
      expect(Math.abs(count - expected), `${venue}: ${count} in an hour, target ${expected}`).toBeLessThan(tol);
    }
  }, 180_000);

  it("normalised liquidations carry the venue and coin sizes; Aster and Deribit at most one per symbol per second", () => {
    for (const venue of ["aster", "deribit"] as const) {
      for (const inst of perp.instruments(venue, NOW).filter((i) => i.target)) {
        const liqs = tape.liquidationsOf(inst, NOW - 20 * 60_000, NOW);
        const seconds = new Set(liqs.map((l) => Math.floor(l.time / 1000)));
        expect(seconds.size).toBe(liqs.length);
      }
    }
    const l = tape.liquidationsOf(target("gate", "BTC"), NOW - 6 * HOUR, NOW)[0];
    expect(l).toBeDefined();
    const n = normaliseLiquidation(l as NonNullable<typeof l>);
    expect(n).toMatchObject({ venue: "gate", base: "BTC", venueSymbol: "BTC_USDT" });
    expect(n.size).toBeCloseTo(Number(l?.sz) * 0.0001, 12);
  });

  it("Deribit liquidations are trades flagged T/M/MT whose ids never collide with the regular trades'", () => {
    const inst = target("deribit", "BTC");
    const liqs = tape.liquidationsOf(inst, NOW - 2 * HOUR, NOW);
    expect(liqs.length).toBeGreaterThan(0);
    const tradeIds = new Set(tape.tradesOf(inst, NOW - 2 * HOUR, NOW).map((t) => deribitTradeId(t)));
    for (const l of liqs) {
      const lt = deribitLiquidationTrade(l);
      expect(["T", "M", "MT"]).toContain(lt.liquidation);
      expect(lt.trade_id).toMatch(/^BTC-\d+$/);
      expect(tradeIds.has(lt.trade_id)).toBe(false);
      // A liquidated long's order sells: the taker direction is sell unless the long was the maker.
      const orderSide = l.side === "long" ? "sell" : "buy";
      expect(lt.direction === orderSide).toBe(lt.liquidation !== "M");
    }
  });
});

describe("trade ids: unique and increasing per instrument", () => {
  const window = (venue: PerpSimVenue, base: string): TapeTrade[] => tape.tradesOf(target(venue, base), NOW - 10 * 60_000, NOW);
  const strictlyIncreasing = (xs: number[]): boolean => xs.every((x, k) => k === 0 || x > (xs[k - 1] as number));

  it("Gate integer `id`", () => {
    const ids = window("gate", "ETH").map(gateTradeId);
    expect(ids.every(Number.isSafeInteger)).toBe(true);
    expect(strictlyIncreasing(ids)).toBe(true);
  });

  it("Bitget string `tradeId`", () => {
    const ids = window("bitget", "BTC").map(bitgetTradeId);
    expect(ids.every((s) => /^\d+$/.test(s))).toBe(true);
    expect(strictlyIncreasing(ids.map(Number))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("Deribit `trade_seq` increasing and `trade_id` `<currency>-<seq>`", () => {
    for (const base of ["BTC", "SOL"]) {
      const trades = window("deribit", base);
      expect(strictlyIncreasing(trades.map(deribitTradeSeq))).toBe(true);
      const ids = trades.map(deribitTradeId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids[0]).toMatch(base === "BTC" ? /^BTC-\d+$/ : /^SOL_USDC-\d+$/);
    }
  });

  it("Aster aggTrade `a` increasing, fills `f..l` disjoint", () => {
    const fields = window("aster", "BTC").map(asterAggFields);
    expect(strictlyIncreasing(fields.map((f) => f.a))).toBe(true);
    for (let k = 1; k < fields.length; k++) expect((fields[k] as { f: number }).f).toBeGreaterThan((fields[k - 1] as { l: number }).l);
  });

  it("the normalised ids are the venue ids", () => {
    const g = window("gate", "BTC")[0] as TapeTrade;
    expect(normaliseTrade(g).id).toBe(String(gateTradeId(g)));
    const b = window("bitget", "BTC")[0] as TapeTrade;
    expect(normaliseTrade(b).id).toBe(bitgetTradeId(b));
    const d = window("deribit", "BTC")[0] as TapeTrade;
    expect(normaliseTrade(d).id).toBe(deribitTradeId(d));
    const a = window("aster", "BTC")[0] as TapeTrade;
    expect(normaliseTrade(a).id).toBe(String(asterAggFields(a).a));
  });
});
