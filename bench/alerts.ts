/**
 * Alert evaluation benchmark (issue 6): one round over 10,000 active alerts on 20 symbols (8,000
 * liquidation, 2,000 price), with the alert store on a real SQLite file as in production.
 *
 * The market readings are the real heatmap model (`liquidationHeatmap`) over 72 synthetic hourly candles
 * per symbol, so the round pays for the model, not for network calls (venue latency is the perp tools'
 * concern and is measured there). The first round writes every alert's first evaluation and the triggers;
 * later rounds see the same readings, so they write the 20 readings and nothing per alert (issue 16: the
 * first round under 150 ms, a steady round under 50 ms). Baseline in the same run: the same round
 * evaluating one heatmap per ALERT instead of one per symbol (what a naive engine does).
 * Writes bench/results/alerts.json and the `alerts` section of bench/README.md.
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { liquidationHeatmap, mmrByLeverage, type EntryCandle } from "../src/analytics/liquidation-heatmap.js";
import { AlertEngine, type AlertSignals } from "../src/alerts/engine.js";
import { AlertService } from "../src/alerts/service.js";
import { AlertStore, alertDbPath } from "../src/alerts/store.js";
import { HOUR_MS, MINUTE_MS } from "../src/lib/time.js";
import { percentile, writeResults, writeSection } from "./report.js";

const ALERTS = Number(process.env.BENCH_ALERTS ?? 10_000);
const SYMBOLS = 20;
const ROUNDS = Number(process.env.BENCH_ALERT_ROUNDS ?? 7);

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ (t + Math.imul(t ^ (t >>> 14), 71 | t));
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 72 hourly candles of a random walk around `price`. */
function candles(price: number, rand: () => number): EntryCandle[] {
  const out: EntryCandle[] = [];
  let p = price;
  for (let i = 0; i < 72; i++) {
    const next = p * (1 + (rand() - 0.5) * 0.02);
    out.push({ openTime: i * HOUR_MS, high: Math.max(p, next) * 1.003, low: Math.min(p, next) * 0.997, close: next, volumeUsd: 1e6 + rand() * 1e7 });
    p = next;
  }
  return out;
}

/** Heatmap readings of the real model per symbol; counts model runs. */
function signals(markets: Map<string, { price: number; oi: number; candles: EntryCandle[] }>): AlertSignals & { runs: number } {
  const mmr = mmrByLeverage([[{ maxLeverage: 125, maintenanceMarginRate: 0.004 }]]);
  const s = {
    runs: 0,
    async liquidationRisk(symbol: string) {
      s.runs++;
      const m = markets.get(symbol)!;
      const h = liquidationHeatmap({ price: m.price, openInterestUsd: m.oi, candles: m.candles, mmrByLeverage: mmr });
      return { price: m.price, oiAtRiskUsd: h.risk.total_oi_at_risk_usd, oiAtRiskPct: h.risk.oi_at_risk_pct, cascadeRisk: h.risk.cascade_risk };
    },
    async price(symbol: string) {
      return markets.get(symbol)!.price;
    },
  };
  return s;
}

/** A round per alert: the baseline a shared-per-symbol engine is compared with. */
async function naiveRound(store: AlertStore, sig: AlertSignals): Promise<number> {
  const start = performance.now();
  for (const a of store.active()) {
    if (a.kind === "liquidation") await sig.liquidationRisk(a.symbol);
    else await sig.price(a.symbol);
  }
  return performance.now() - start;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-alerts-"));
  const rand = rng(42);
  const clock = { t: Date.UTC(2026, 10, 21) };
  const now = () => clock.t;
  const store = new AlertStore(alertDbPath(dir));
  const svc = new AlertService(store, { now, target: { allowLoopback: true }, maxActive: ALERTS + 1 });
  const markets = new Map<string, { price: number; oi: number; candles: EntryCandle[] }>();
  for (let i = 0; i < SYMBOLS; i++) {
    const price = 10 ** (rand() * 5 - 1);
    markets.set(`SYM${i}`, { price, oi: 1e8 + rand() * 1e10, candles: candles(price, rand) });
  }
  const insertStart = performance.now();
  for (let i = 0; i < ALERTS; i++) {
    const symbol = `SYM${i % SYMBOLS}`;
    const liq = Math.floor(i / SYMBOLS) % 5 !== 0;
    await svc.create(
      liq ? "liquidation" : "price",
      {
        symbol,
        params: liq
          ? { condition: "cascade_risk", threshold_pct: 1 + rand() * 60, min_value_usd: 0 }
          : { direction: rand() < 0.5 ? "above" : "below", target_price: markets.get(symbol)!.price * (0.9 + rand() * 0.2) },
        webhookUrl: `https://hooks.example.com/${i}`,
        expiresInHours: 168,
      },
      "0x000000000000000000000000000000000000dEaD",
    );
  }
  const insertMs = performance.now() - insertStart;

  const sig = signals(markets);
  const engine = new AlertEngine(store, sig, { now, cooldownMs: 15 * MINUTE_MS });
  // Round 1 triggers the alerts whose condition holds (outbox writes); later rounds are in cooldown.
  const first = await engine.evaluate();
  const runsFirst = sig.runs;
  const steady: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    clock.t += 30_000;
    steady.push((await engine.evaluate()).durationMs);
  }
  sig.runs = 0;
  const naive: number[] = [];
  for (let r = 0; r < 3; r++) naive.push(await naiveRound(store, sig));
  const naiveRuns = sig.runs / 3;
  store.close();
  rmSync(dir, { recursive: true, force: true });

  const median = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const results = {
    alerts: ALERTS,
    symbols: SYMBOLS,
    create_per_sec: Math.round(ALERTS / (insertMs / 1000)),
    first_round_ms: Math.round(first.durationMs),
    first_round_triggered: first.triggered,
    heatmaps_per_round: runsFirst,
    steady_round_ms_p50: Math.round(median(steady)),
    steady_round_ms_max: Math.round(Math.max(...steady)),
    naive_round_ms_p50: Math.round(median(naive)),
    naive_heatmaps_per_round: naiveRuns,
    ratio_steady_vs_naive: Number((median(steady) / median(naive)).toFixed(3)),
  };
  writeResults("alerts", results);
  const table = [
    "| measure | result |",
    "|---|---|",
    `| alerts created (SQLite file, one transaction each) | ${results.create_per_sec.toLocaleString("en-US")} per second |`,
    `| first round: ${ALERTS.toLocaleString("en-US")} alerts on ${SYMBOLS} symbols, every first evaluation written, ${first.triggered.toLocaleString("en-US")} fire (outbox rows written) | ${results.first_round_ms} ms, ${runsFirst} heatmaps |`,
    `| steady round, median of ${ROUNDS}: same readings, the ${first.triggered.toLocaleString("en-US")} that fired in cooldown, no condition changed (nothing written per alert) | ${results.steady_round_ms_p50} ms (max ${results.steady_round_ms_max} ms) |`,
    `| baseline in the same run: one heatmap per alert instead of per symbol | ${results.naive_round_ms_p50} ms, ${naiveRuns.toLocaleString("en-US")} heatmaps |`,
    `| ratio steady round / baseline | ${results.ratio_steady_vs_naive} |`,
  ].join("\n");
  writeSection("alerts", table);
  console.log(table);
}

await main();
