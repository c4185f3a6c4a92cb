import type { AlertSignals, LiquidationRisk } from "../../src/alerts/engine.js";
import type { DeliveryAttempt, WebhookRequest, WebhookSender } from "../../src/alerts/webhook/send.js";
import { AppError } from "../../src/errors.js";

/*
 * In-test stand-ins for the alert engine's inputs (market readings) and its webhook transport: the
 * engine, store and dispatcher under test are real; these only supply chosen readings and answers.
 */

/** Signals answering from tables; every call is recorded (`risk:BTC`, `price:ETH`). */
export class FakeSignals implements AlertSignals {
  readonly risk = new Map<string, LiquidationRisk | Error>();
  readonly prices = new Map<string, number | Error>();
  readonly calls: string[] = [];

  liquidationRisk(symbol: string): Promise<LiquidationRisk> {
    return this.answer(this.risk, "risk", symbol);
  }

  price(symbol: string): Promise<number> {
    return this.answer(this.prices, "price", symbol);
  }

  private async answer<T>(table: Map<string, T | Error>, kind: string, symbol: string): Promise<T> {
    this.calls.push(`${kind}:${symbol}`);
    const v = table.get(symbol);
    if (v === undefined) throw new AppError("UNKNOWN_SYMBOL", `no ${kind} reading for ${symbol}`);
    if (v instanceof Error) throw v;
    return v;
  }

  count(call: string): number {
    return this.calls.filter((c) => c === call).length;
  }
}

/** A sender that records every request and answers with `answer(req, n)` (n 1-based). */
export function fakeSender(answer: (req: WebhookRequest, n: number) => DeliveryAttempt | Promise<DeliveryAttempt>): WebhookSender & { requests: WebhookRequest[] } {
  const requests: WebhookRequest[] = [];
  return {
    requests,
    async send(req) {
      requests.push(req);
      return answer(req, requests.length);
    },
  };
}

/** A delivered attempt. */
export const ok = (status = 200): DeliveryAttempt => ({ ok: true, status, durationMs: 7 });
/** A failed attempt with `status`. */
export const fail = (status = 500): DeliveryAttempt => ({ ok: false, status, error: `HTTP ${status}`, durationMs: 12 });

/** A liquidation-risk reading. */
export const risk = (oiAtRiskPct: number, oiAtRiskUsd: number, price = 64_000, cascadeRisk: LiquidationRisk["cascadeRisk"] = "medium"): LiquidationRisk => ({
  price,
  oiAtRiskUsd,
  oiAtRiskPct,
  cascadeRisk,
});
