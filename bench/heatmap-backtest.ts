/**
 * `npm run backtest:heatmap`: scores the liquidation-heatmap estimate on recordings
 * (docs/methods/liquidation-heatmap.md, "Backtest"). Replays, candle by candle:
 *
 * - the real recordings of the real-data folder (`--data DIR`, else $MARKETGATE_REAL_DATA_DIR, else the default below;
 *   docs/methods/liquidation-heatmap.md, "Backtest"):
 *   Binance XRPUSDT perp 5-minute candles of 2021-11-15 → 21 (aggregated to hours), 1-hour candles of
 *   2021-11-17 → 21 and 8-hour candles of 2021-11-18 → 12-18 with the 8-hourly funding history. They carry no
 *   liquidations and no open-interest history, so they are scored against the later price path;
 * - the real liquidation frames of that folder (Binance forceOrder, Bybit allLiquidation) are listed: too few,
 *   and for symbols/dates without candles, to score anything;
 * - the simulator, in-process (same models as `startSimulator`, seed 42): the eight pre-subscribed symbols,
 *   hourly, with open-interest history, funding, long/short ratios and maintenance-margin tiers, replayed the way
 *   production computes (the whole 168 h window after a week of warm-up, the OI path). This is a SIMULATOR CHECK,
 *   not a score: it prints the level distribution and the spread of the estimate's inputs only. The simulator's
 *   liquidation tape draws liquidations from the price move with a per-symbol base rate, with no positions (sized
 *   by open interest and leverage) behind them, so ranking the estimate against it would be circular (the trivial
 *   "liquidations of the last 4 h ÷ OI" scored 0.96 there); the tape is therefore neither an input nor an outcome
 *   here, and nothing is scored against the simulator's price path either. Skill is measured on real
 *   liquidations only (`npm run backtest:daily`, docs/methods/liquidation-heatmap.md section 8).
 *
 * Flags: `--data DIR`, `--sim-days N` (default 3), `--seed N` (default 42), `--no-sim`, `--no-real`, `--json`,
 * `--instants FILE` (writes every replayed instant as JSON, for calibration), `--ablation` (the simulator check
 * again without each optional input: open-interest history, funding and long/short ratio).
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { replay, score, type BacktestScore, type Instant, type Recording } from "../src/analytics/heatmap-backtest.js";
import { mmrByLeverage, type EntryCandle, type OiPoint } from "../src/analytics/liquidation-heatmap.js";
import { HOUR_MS } from "../src/lib/time.js";
import { fixedClock } from "../src/sim/clock.js";
import { createMarketModel } from "../src/sim/market.js";
import { perpModelFor, type PerpSimVenue } from "../src/sim/perp-model.js";
import { PRE_SUBSCRIBED } from "../src/ingestion/manager.js";

/** Default alert threshold (tools/alerts/liquidation.ts) whose firing rate is reported. */
const ALERT_THRESHOLD_PCT = 5;

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const str = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const num = (name: string, def: number) => {
  const i = args.indexOf(name);
  const v = i >= 0 ? Number(args[i + 1]) : NaN;
  return Number.isFinite(v) ? v : def;
};

// ---------------------------------------------------------------- real recordings

type Row = [number, number, number, number, number, number];

function readRows(dir: string, file: string): Row[] | undefined {
  const p = join(dir, file);
  return existsSync(p) ? (JSON.parse(readFileSync(p, "utf8")) as Row[]) : undefined;
}

/** freqtrade rows `[openTime, o, h, l, c, volume in coins]` as candles (volume × typical price in USD). */
function toCandles(rows: readonly Row[]): EntryCandle[] {
  return rows.map(([t, , h, l, c, v]) => ({ openTime: t, high: h, low: l, close: c, volumeUsd: (v * (h + l + c)) / 3 }));
}

/** 5-minute rows aggregated to complete hours. */
function hourly(rows: readonly Row[]): EntryCandle[] {
  const by = new Map<number, { c: EntryCandle; n: number }>();
  for (const [t, , h, l, c, v] of rows) {
    const k = Math.floor(t / HOUR_MS) * HOUR_MS;
    const e = by.get(k);
    const usd = (v * (h + l + c)) / 3;
    if (!e) by.set(k, { c: { openTime: k, high: h, low: l, close: c, volumeUsd: usd }, n: 1 });
    else {
      e.c.high = Math.max(e.c.high, h);
      e.c.low = Math.min(e.c.low, l);
      e.c.close = c;
      e.c.volumeUsd += usd;
      e.n++;
    }
  }
  return [...by.values()]
    .filter((e) => e.n === 12)
    .map((e) => e.c)
    .sort((a, b) => a.openTime - b.openTime);
}

/** Binance XRPUSDT maintenance margin (first bracket 0.5%, 75x maximum in 2021): tiers 5x–50x. */
const XRP_MMR = mmrByLeverage([[{ maxLeverage: 75, maintenanceMarginRate: 0.005 }]]);

function realRecordings(dir: string): Recording[] {
  const out: Recording[] = [];
  const funding = readRows(dir, "binance/freqtrade_usdm_XRPUSDT_funding_8h_2021-11-18_to_2021-12-18.freqtrade_rows.json");
  // The rate settled last is the one in force (the recording has no accruing rate); none before the first settlement.
  const fundingAt = (t: number): number | null => {
    if (!funding) return null;
    let rate: number | null = null;
    for (const [ft, r] of funding) if (ft <= t) rate = r;
    return rate;
  };
  const five = readRows(dir, "binance/freqtrade_usdm_XRPUSDT_ohlcv_5m_2021-11-15_to_2021-11-21.freqtrade_rows.json");
  if (five) out.push({ name: "real XRPUSDT 1h (from 5m) 2021-11-15..21", candles: hourly(five), candleHours: 1, mmrByLeverage: XRP_MMR, fundingRate8h: fundingAt });
  const one = readRows(dir, "binance/freqtrade_usdm_XRPUSDT_ohlcv_1h_2021-11-17.freqtrade_rows.json");
  if (one) out.push({ name: "real XRPUSDT 1h 2021-11-17..21", candles: toCandles(one), candleHours: 1, mmrByLeverage: XRP_MMR, fundingRate8h: fundingAt });
  const eight = readRows(dir, "binance/freqtrade_usdm_XRPUSDT_mark_8h_2021-11-18_to_2021-12-18.freqtrade_rows.json");
  if (eight) out.push({ name: "real XRPUSDT 8h 2021-11-18..12-18", candles: toCandles(eight), candleHours: 8, mmrByLeverage: XRP_MMR, fundingRate8h: fundingAt });
  return out;
}

/** The real liquidation frames of the folder (what a real liquidation backtest would need, and why it cannot run). */
function realLiquidationFrames(dir: string): string[] {
  const notes: string[] = [];
  const read = (file: string) =>
    existsSync(join(dir, file))
      ? readFileSync(join(dir, file), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
  for (const m of read("bybit/tardis_node_bybit_v5_allLiquidation_ws_message.ndjson")) {
    for (const e of (m.data as Array<{ T: number; s: string; S: string; v: string; p: string }>) ?? []) {
      notes.push(`bybit allLiquidation ${e.s} ${new Date(e.T).toISOString()} ${e.S === "Buy" ? "long" : "short"} ${(Number(e.v) * Number(e.p)).toFixed(0)} USD`);
    }
  }
  for (const m of read("binance/tardis_node_binance_futures_ws_messages.ndjson")) {
    const d = m.data as { e?: string; o?: { s: string; S: string; z: string; ap: string; T: number } } | undefined;
    if (d?.e === "forceOrder" && d.o)
      notes.push(`binance forceOrder ${d.o.s} ${new Date(d.o.T).toISOString()} ${d.o.S === "SELL" ? "long" : "short"} ${(Number(d.o.z) * Number(d.o.ap)).toFixed(0)} USD`);
  }
  return notes;
}

// ---------------------------------------------------------------- simulator

const ALL_VENUES: readonly PerpSimVenue[] = ["binance", "bybit", "okx", "hyperliquid"];

/**
 * Simulated recordings of `bases`, hourly, `days` of instants ending at `endMs` (plus a week of history
 * before and a day after). No liquidations: the tape's are not position-driven (file comment).
 */
function simRecordings(seed: number, endMs: number, days: number, bases: readonly string[]): Recording[] {
  const market = createMarketModel({ seed, clock: fixedClock(endMs + 2 * 24 * HOUR_MS) });
  const perp = perpModelFor(market);
  const out: Recording[] = [];
  const first = endMs - (days * 24 + 168) * HOUR_MS;
  const last = endMs + 24 * HOUR_MS;
  for (const base of bases) {
    const insts = ALL_VENUES.map((v) => perp.perpOf(v, base)).filter((i) => i !== undefined);
    const binance = perp.perpOf("binance", base)!;
    const candles: EntryCandle[] = [];
    for (let t = first; t < last; t += HOUR_MS) {
      const k = perp.candle(binance, t, HOUR_MS, last);
      candles.push({ openTime: t, high: k.high, low: k.low, close: k.close, volumeUsd: k.volumeUsd });
    }
    const oiUsd = (t: number) => insts.reduce((s, i) => s + perp.openInterestCoins(i, t) * perp.markPrice(i, t), 0);
    const oiHistory = (t: number): OiPoint[] => {
      const pts: OiPoint[] = [];
      for (let s = Math.floor(t / HOUR_MS) * HOUR_MS - 200 * HOUR_MS; s <= t; s += HOUR_MS) pts.push({ time: s, oi: perp.openInterestCoins(binance, s) });
      return pts;
    };
    const funding = (t: number) => {
      const rates = insts.map((i) => (perp.currentFundingRate(i, t) * 8) / (i.venue === "hyperliquid" ? 1 : i.fundingIntervalHours)).sort((a, b) => a - b);
      return rates.length ? rates[Math.floor(rates.length / 2)]! : null;
    };
    const ls = (t: number) => {
      const r = [perp.perpOf("binance", base), perp.perpOf("okx", base)].filter((i) => i !== undefined).map((i) => perp.longShortRatio(i, "top_position", t));
      const by = perp.perpOf("bybit", base);
      if (by) r.push(perp.longShortRatio(by, "account", t));
      return r.length ? r.reduce((s, x) => s + x, 0) / r.length : null;
    };
    const tiers = (["okx", "bybit"] as const)
      .map((v) => perp.perpOf(v, base))
      .filter((i) => i !== undefined)
      .map((i) => perp.marginTiers(i).map((t) => ({ maxLeverage: t.maxLeverage, maintenanceMarginRate: t.mmr })));
    out.push({
      name: `sim ${base} 1h (seed ${seed})`,
      candles,
      candleHours: 1,
      mmrByLeverage: mmrByLeverage(tiers),
      openInterestUsd: oiUsd,
      openInterestHistory: oiHistory,
      fundingRate8h: funding,
      longShortRatio: ls,
    });
  }
  return out;
}

// ---------------------------------------------------------------- report

const f1 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(1));
const f2 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(2));
const f3 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(3));

/** What the simulator check reports (file comment): the level distribution and the inputs' spread, no outcome. */
interface SimulatorCheck {
  name: string;
  instants: number;
  levels: BacktestScore["levels"];
  levelsByRegime: BacktestScore["levelsByRegime"];
  oiAtRiskPct: BacktestScore["oiAtRiskPct"];
  widePct: BacktestScore["widePct"];
  dailyVolPct: BacktestScore["dailyVolPct"];
  alertFirePct: number;
}

function simulatorCheck(s: BacktestScore): SimulatorCheck {
  return {
    name: s.name,
    instants: s.instants,
    levels: s.levels,
    levelsByRegime: s.levelsByRegime,
    oiAtRiskPct: s.oiAtRiskPct,
    widePct: s.widePct,
    dailyVolPct: s.dailyVolPct,
    alertFirePct: s.alert.firePct,
  };
}

function printCheck(c: SimulatorCheck): void {
  const l = c.levels;
  const q = (x: SimulatorCheck["widePct"]) => `p10 ${f2(x.p10)}, median ${f2(x.p50)}, p90 ${f2(x.p90)}, max ${f2(x.max)}`;
  console.log(`\n## ${c.name}: ${c.instants} instants (simulator check, not a score)`);
  console.log(`levels: high ${l.high.count} (${f1(l.high.pct)}%), medium ${l.medium.count} (${f1(l.medium.pct)}%), low ${l.low.count} (${f1(l.low.pct)}%)`);
  console.log(`  calm half:     high ${f1(c.levelsByRegime.calm.high)}%, medium ${f1(c.levelsByRegime.calm.medium)}%, low ${f1(c.levelsByRegime.calm.low)}%`);
  console.log(`  volatile half: high ${f1(c.levelsByRegime.volatile.high)}%, medium ${f1(c.levelsByRegime.volatile.medium)}%, low ${f1(c.levelsByRegime.volatile.low)}%`);
  console.log(
    `oi_at_risk_pct (within 1σ): ${q(c.oiAtRiskPct)}; within 2σ: ${q(c.widePct)}; daily σ %: ${q(c.dailyVolPct)}; alert (>= ${ALERT_THRESHOLD_PCT}) ${f1(c.alertFirePct)}% of instants`,
  );
}

function print(s: BacktestScore): void {
  const l = s.levels;
  console.log(`\n## ${s.name}: ${s.instants} instants`);
  console.log(`levels: high ${l.high.count} (${f1(l.high.pct)}%), medium ${l.medium.count} (${f1(l.medium.pct)}%), low ${l.low.count} (${f1(l.low.pct)}%)`);
  console.log(`  calm half:     high ${f1(s.levelsByRegime.calm.high)}%, medium ${f1(s.levelsByRegime.calm.medium)}%, low ${f1(s.levelsByRegime.calm.low)}%`);
  console.log(`  volatile half: high ${f1(s.levelsByRegime.volatile.high)}%, medium ${f1(s.levelsByRegime.volatile.medium)}%, low ${f1(s.levelsByRegime.volatile.low)}%`);
  const q = (x: BacktestScore["widePct"]) => `p10 ${f2(x.p10)}, median ${f2(x.p50)}, p90 ${f2(x.p90)}, max ${f2(x.max)}`;
  console.log(`oi_at_risk_pct (within 1σ): ${q(s.oiAtRiskPct)}; within 2σ: ${q(s.widePct)}; daily σ %: ${q(s.dailyVolPct)}`);
  const a = s.alert;
  console.log(
    `alert (oi_at_risk_pct >= ${a.thresholdPct}) fires at ${f1(a.firePct)}% of instants; calm half ${f1(a.calmFirePct)}%, volatile half ${f1(a.volatileFirePct)}%; ` +
      `before quiet days (next ${s.horizons.at(-1)?.hours ?? "?"}h move <= median) ${f1(a.quietFirePct)}%, before busy days (top quartile) ${f1(a.busyFirePct)}%`,
  );
  for (const h of s.horizons) {
    const row = (lv: "high" | "medium" | "low") => {
      const p = h.perLevel[lv];
      return `${lv} n=${p.n} crossed ${f2(p.crossedPct)}% adverse ${f2(p.adverseMovePct)}%${p.realisedPct !== undefined ? ` realised ${f3(p.realisedPct)}%` : ""}`;
    };
    console.log(`next ${h.hours}h, mean per level: ${row("high")} | ${row("medium")} | ${row("low")}`);
    console.log(
      `  Spearman(oi_at_risk_pct, ·): crossed ${f2(h.spearman.crossedPct)}, adverse move ${f2(h.spearman.adverseMovePct)}` +
        (h.spearman.realisedPct !== undefined ? `, realised liquidations ${f2(h.spearman.realisedPct)}; dominant side = side liquidated most ${f1(h.sideHitPct)}%` : ""),
    );
  }
}

async function main(): Promise<void> {
  const json = flag("--json");
  const scores: BacktestScore[] = [];
  const dump: Record<string, Instant[]> = {};
  const run = (rec: Recording, warmupHours: number) => {
    const instants = replay(rec, { warmupHours });
    dump[rec.name] = instants;
    const s = score(rec.name, instants, ALERT_THRESHOLD_PCT);
    scores.push(s);
    if (!json) print(s);
    return s;
  };
  const notes: string[] = [];
  if (!flag("--no-real")) {
    // Overridden by --data or MARKETGATE_REAL_DATA_DIR; else the shared real-data folder.
    const dir = str("--data") ?? process.env.MARKETGATE_REAL_DATA_DIR ?? "/work/shared/data/real";
    const recs = realRecordings(dir);
    if (!recs.length) notes.push(`no real recordings under ${dir}`);
    if (!json) console.log(`# Real recordings (${dir}), scored against the later price path`);
    for (const r of recs) run(r, r.candleHours >= 8 ? 48 : 24);
    const frames = realLiquidationFrames(dir);
    notes.push(`real liquidation frames: ${frames.length} (${frames.join("; ")}); no candles of those symbols and dates are recorded, so they cannot be scored`);
  }
  const checks: SimulatorCheck[] = [];
  if (!flag("--no-sim")) {
    const seed = num("--seed", 42);
    const days = num("--sim-days", 3);
    const end = Date.UTC(2026, 9, 1);
    if (!json) console.log(`\n# Simulator check (seed ${seed}, ${days} days of hourly instants to ${new Date(end).toISOString()}): level distribution only, no score`);
    const started = performance.now();
    const all: Instant[] = [];
    const recs = simRecordings(seed, end, days, PRE_SUBSCRIBED);
    const check = (name: string, instants: Instant[]) => {
      const c = simulatorCheck(score(name, instants, ALERT_THRESHOLD_PCT));
      checks.push(c);
      if (!json) printCheck(c);
    };
    for (const r of recs) {
      // Production's computation: the whole 168 h entry window (a week of warm-up) and the OI path.
      const instants = replay(r, { warmupHours: 168 });
      dump[r.name] = instants;
      all.push(...instants);
      check(r.name, instants);
    }
    check(`sim, ${PRE_SUBSCRIBED.length} symbols pooled`, all);
    if (flag("--ablation")) {
      const variants: Array<[string, (r: Recording) => Recording]> = [
        ["without open-interest history", (r) => ({ ...r, openInterestHistory: undefined })],
        ["without funding and long/short ratio", (r) => ({ ...r, fundingRate8h: undefined, longShortRatio: undefined })],
      ];
      for (const [label, change] of variants)
        check(
          `sim pooled, ${label}`,
          recs.flatMap((r) => replay(change(r), { warmupHours: 168 })),
        );
    }
    notes.push(
      "simulator: a check of the level distribution, not a score. Its liquidation tape has no positions behind it " +
        "(liquidations drawn from the price move with a per-symbol base rate), so a correlation with it would be circular; " +
        "the model's skill is measured on real liquidations by npm run backtest:daily",
    );
    notes.push(`simulator replay took ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  const file = str("--instants");
  if (file) writeFileSync(file, JSON.stringify(dump));
  if (json) console.log(JSON.stringify({ scores, simulator_checks: checks, notes }, null, 2));
  else for (const n of notes) console.log(`\nnote: ${n}`);
}

await main();
