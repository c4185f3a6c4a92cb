import { randomUUID } from "node:crypto";
import { toAppError } from "../errors.js";
import type { Logger } from "../lib/log.js";
import type { AlertRepository, Evaluation, EvaluationTarget, ReadingPart, SymbolReading } from "./repository.js";
import type { AlertRecord, LiquidationParams, PriceParams } from "./types.js";

/** Liquidation risk of a symbol, as the heatmap reports it. */
export interface LiquidationRisk {
  price: number;
  oiAtRiskUsd: number;
  oiAtRiskPct: number;
  cascadeRisk: "high" | "medium" | "low";
}

/** Market readings the engine evaluates alerts against; each is read once per symbol per round. */
export interface AlertSignals {
  /** Heatmap risk summary of a symbol (perp venues). @throws AppError when no venue answered. */
  liquidationRisk(symbol: string): Promise<LiquidationRisk>;
  /** Current price of a symbol, USD (median perp mark price). @throws AppError when no venue answered. */
  price(symbol: string): Promise<number>;
}

/** Options of {@link AlertEngine}. */
export interface AlertEngineOptions {
  now: () => number;
  /** An alert re-fires at most once per cooldown while its condition holds (default 15 min). */
  cooldownMs: number;
  /** Symbols read in parallel per round. */
  concurrency?: number;
  log?: Logger;
}

/** What one round did. */
export interface RoundStats {
  expired: number;
  evaluated: number;
  triggered: number;
  /** Symbols whose reading failed (their alerts keep their state; the error is recorded). */
  failedSymbols: string[];
  durationMs: number;
}

/** The condition of a liquidation alert (docs/alerts.md, "Evaluation"): OI at risk ≥ threshold_pct and ≥ min_value_usd. */
export function liquidationConditionMet(p: LiquidationParams, r: LiquidationRisk): boolean {
  return r.oiAtRiskPct >= p.threshold_pct && r.oiAtRiskUsd >= p.min_value_usd;
}

/** The condition of a price alert: price ≥ target (`above`) or ≤ target (`below`). */
export function priceConditionMet(p: PriceParams, price: number): boolean {
  return p.direction === "above" ? price >= p.target_price : price <= p.target_price;
}

/** What a webhook payload names of its alert. */
type PayloadAlert = Pick<AlertRecord, "id" | "symbol" | "params">;

/** Payload of a liquidation alert webhook (docs/alerts.md, "Webhooks and delivery"). `severity` is the cascade risk level. */
export function liquidationPayload(a: PayloadAlert, r: LiquidationRisk, now: number): Record<string, unknown> {
  const p = a.params as LiquidationParams;
  return {
    event: "liquidation_alert",
    alert_id: a.id,
    symbol: a.symbol,
    severity: r.cascadeRisk,
    data: {
      triggered: true,
      current_price: r.price,
      oi_at_risk_usd: Math.round(r.oiAtRiskUsd),
      oi_at_risk_pct: Math.round(r.oiAtRiskPct * 100) / 100,
      cascade_risk: r.cascadeRisk,
      threshold_pct: p.threshold_pct,
    },
    timestamp: new Date(now).toISOString(),
  };
}

/** Payload of a price alert webhook (our shape; docs/alerts.md). */
export function pricePayload(a: PayloadAlert, price: number, now: number): Record<string, unknown> {
  const p = a.params as PriceParams;
  return {
    event: "price_alert",
    alert_id: a.id,
    symbol: a.symbol,
    data: { triggered: true, direction: p.direction, target_price: p.target_price, current_price: price },
    timestamp: new Date(now).toISOString(),
  };
}

/** A symbol's reading this round: the value, or the error that replaced it. */
type Reading<T> = { value: T } | { error: string };

/**
 * Evaluates every active alert once per round: applies overdue expiries, reads each symbol once
 * (heatmap for liquidation alerts, price for price alerts), decides which alerts fire and writes the
 * round (the symbols' readings, then per alert only what changed: first evaluations, conditions that
 * flipped, triggers with their outbox deliveries) in one transaction. An alert fires when its condition
 * holds and it has not fired within the cooldown; it stays active until it expires or is cancelled.
 */
export class AlertEngine {
  private readonly concurrency: number;

  constructor(
    private readonly store: AlertRepository,
    private readonly signals: AlertSignals,
    private readonly opts: AlertEngineOptions,
  ) {
    this.concurrency = Math.max(1, opts.concurrency ?? 4);
  }

  /** Runs one round. Never throws for venue failures (they are recorded per alert); rejects when the store does (e.g. Redis unreachable). */
  async evaluate(): Promise<RoundStats> {
    const started = performance.now();
    const now = this.opts.now();
    const expired = await this.store.expireDue(now);
    const alerts = await this.store.activeForEvaluation();
    const bySymbol = new Map<string, { liq: EvaluationTarget[]; price: EvaluationTarget[] }>();
    for (const a of alerts) {
      let g = bySymbol.get(a.symbol);
      if (!g) bySymbol.set(a.symbol, (g = { liq: [], price: [] }));
      (a.kind === "liquidation" ? g.liq : g.price).push(a);
    }
    const evaluations: Evaluation[] = [];
    const readings: SymbolReading[] = [];
    const failedSymbols: string[] = [];
    await mapLimit([...bySymbol], this.concurrency, async ([symbol, g]) => {
      const [risk, price] = await Promise.all([
        g.liq.length ? settle(this.signals.liquidationRisk(symbol)) : undefined,
        // A price alert reads the price from the heatmap when the symbol has one this round.
        g.price.length && !g.liq.length ? settle(this.signals.price(symbol)) : undefined,
      ]);
      const priceReading = price ?? (risk && "value" in risk ? { value: risk.value.price } : risk);
      if ((risk && "error" in risk) || (priceReading && "error" in priceReading)) failedSymbols.push(symbol);
      // What every alert of a kind on this symbol shares, computed once.
      const reading: SymbolReading = { symbol };
      if (risk) reading.liquidation = part(risk, (r) => ({ value: r.oiAtRiskPct, cascade_risk: r.cascadeRisk }));
      if (g.price.length) reading.price = part(priceReading!, (p) => ({ value: p }));
      readings.push(reading);
      const liq = outcomes(reading.liquidation);
      const px = outcomes(reading.price);
      for (const a of g.liq)
        this.decide(
          a,
          now,
          risk!,
          liq,
          (r) => liquidationConditionMet(a.params as LiquidationParams, r),
          (r) => liquidationPayload(a, r, now),
          evaluations,
        );
      for (const a of g.price)
        this.decide(
          a,
          now,
          priceReading!,
          px,
          (p) => priceConditionMet(a.params as PriceParams, p),
          (p) => pricePayload(a, p, now),
          evaluations,
        );
    });
    await this.store.recordEvaluations(now, evaluations, readings);
    const triggered = evaluations.filter((e) => e.trigger).length;
    const stats = { expired, evaluated: alerts.length, triggered, failedSymbols, durationMs: performance.now() - started };
    if (triggered || failedSymbols.length || expired) this.opts.log?.info(stats, "alert round");
    return stats;
  }

  /**
   * Decides one alert and queues its evaluation in `out` when its own state changes: its first
   * evaluation, a condition that flipped, or a trigger. Otherwise nothing is written for it: the
   * symbol's reading, written once, is its last evaluation (errors included).
   */
  private decide<T>(
    a: EvaluationTarget,
    now: number,
    reading: Reading<T>,
    shared: Outcomes | undefined,
    met: (v: T) => boolean,
    payload: (v: T) => Record<string, unknown>,
    out: Evaluation[],
  ): void {
    if ("error" in reading) {
      if (!a.evaluated) out.push({ alertId: a.id, evaluation: { error: reading.error } });
      return;
    }
    const conditionMet = met(reading.value);
    const cooled = a.lastTriggeredAt === null || now - a.lastTriggeredAt >= this.opts.cooldownMs;
    const fires = conditionMet && cooled;
    if (!fires && a.evaluated && a.conditionMet === conditionMet) return;
    const evaluation = conditionMet ? shared!.met : shared!.unmet;
    if (!fires) {
      out.push({ alertId: a.id, evaluation });
      return;
    }
    const body = payload(reading.value);
    out.push({
      alertId: a.id,
      evaluation,
      trigger: { deliveryId: `dlv_${randomUUID()}`, event: body.event as string, body: JSON.stringify(body), previousTriggeredAt: a.lastTriggeredAt },
    });
  }
}

/**
 * The two evaluations an alert of a kind on a symbol can get this round from a successful reading: one
 * object each, shared by every alert it fits, so that the store serialises each once.
 */
interface Outcomes {
  met: Evaluation["evaluation"];
  unmet: Evaluation["evaluation"];
}

/** The {@link Outcomes} of a reading's part; undefined without one or with an error. */
function outcomes(shared: ReadingPart | undefined): Outcomes | undefined {
  if (!shared || "error" in shared) return undefined;
  return { met: { ...shared, condition_met: true }, unmet: { ...shared, condition_met: false } };
}

/** The part of a reading every alert of a kind shares: `describe(value)`, or the error. */
function part<T>(reading: Reading<T>, describe: (v: T) => { value: number; cascade_risk?: string }): ReadingPart {
  return "error" in reading ? { error: reading.error } : describe(reading.value);
}

async function settle<T>(p: Promise<T>): Promise<{ value: T } | { error: string }> {
  try {
    return { value: await p };
  } catch (err) {
    const e = toAppError(err);
    return { error: e.code === "INTERNAL" ? "internal error" : `${e.code}: ${e.message}` };
  }
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
