import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { CircuitStateName } from "./circuit.js";

/** Value of `marketgate_circuit_state` per state: 0 closed, 1 half-open (probing), 2 open. */
export const CIRCUIT_STATE_VALUE: Record<CircuitStateName, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * Prometheus metrics of one service instance (prom-client). Served at `/metrics`
 * (text exposition, or JSON with `?format=json`).
 */
export class Metrics {
  readonly registry = new Registry();
  /** HTTP requests by route pattern, method and status. */
  readonly httpRequests = new Counter({ name: "marketgate_http_requests_total", help: "HTTP requests", labelNames: ["route", "method", "status"], registers: [this.registry] });
  /** HTTP latency in seconds by route pattern. */
  readonly httpDuration = new Histogram({
    name: "marketgate_http_request_duration_seconds",
    help: "HTTP request latency",
    labelNames: ["route", "method"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  /** Response-cache lookups per tool: result = hit | miss. */
  readonly cache = new Counter({ name: "marketgate_tool_cache_total", help: "Response cache lookups", labelNames: ["tool", "result"], registers: [this.registry] });
  /** Settled payments per tool, transport (http | mcp) and method (x402 | mpp | credits). */
  readonly paymentsSettled = new Counter({
    name: "marketgate_payments_settled_total",
    help: "Settled payments",
    labelNames: ["tool", "transport", "method"],
    registers: [this.registry],
  });
  /** Revenue in USDC (1 USDC = 1 USD) per tool. */
  readonly revenueUsdc = new Counter({ name: "marketgate_revenue_usdc_total", help: "Settled revenue in USDC", labelNames: ["tool"], registers: [this.registry] });
  /**
   * Payments refused or failed per tool, transport (http | mcp) and stage: `verify` (a payment or credit
   * proof the call presented was refused: 402), `settle` (settlement refused: 402, no data),
   * `settle_unknown` (outcome unknown: 502, data withheld for a retry with the same payment).
   */
  readonly paymentsFailed = new Counter({
    name: "marketgate_payments_failed_total",
    help: "Rejected or failed payments",
    labelNames: ["tool", "stage", "transport"],
    registers: [this.registry],
  });
  /**
   * Upstream venue attempts by venue and outcome (ok | error | rate_limited | timeout | deadline; `deadline`:
   * cut short by the request's deadline before the venue had a fair chance to answer).
   */
  readonly upstreamCalls = new Counter({
    name: "marketgate_upstream_requests_total",
    help: "Upstream venue requests",
    labelNames: ["venue", "outcome"],
    registers: [this.registry],
  });
  /** Upstream latency in seconds per venue. */
  readonly upstreamDuration = new Histogram({
    name: "marketgate_upstream_request_duration_seconds",
    help: "Upstream venue latency",
    labelNames: ["venue"],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /**
   * Circuit-breaker state per venue ({@link CIRCUIT_STATE_VALUE}), read at scrape time from the source
   * given to {@link Metrics.observeCircuits}. Labels are the configured venue keys only.
   */
  readonly circuitState = new Gauge({
    name: "marketgate_circuit_state",
    help: "Venue circuit breaker state: 0 closed, 1 half_open, 2 open",
    labelNames: ["venue"],
    registers: [this.registry],
    collect: () => {
      for (const { venue, circuit } of this.circuits?.() ?? []) this.circuitState.set({ venue }, CIRCUIT_STATE_VALUE[circuit]);
    },
  });
  private circuits?: () => ReadonlyArray<{ venue: string; circuit: CircuitStateName }>;

  /** Publishes the venues' circuit states (e.g. `() => health.snapshot()`) in {@link Metrics.circuitState}. */
  observeCircuits(source: () => ReadonlyArray<{ venue: string; circuit: CircuitStateName }>): void {
    this.circuits = source;
  }

  /** USD credited to prepaid-credit balances (top-ups). */
  readonly creditsCreditedUsd = new Counter({ name: "marketgate_credits_credited_usd_total", help: "USD credited by top-ups", registers: [this.registry] });
  /** USD spent from credits by paid calls (committed debits), per tool. */
  readonly creditsSpentUsd = new Counter({ name: "marketgate_credits_spent_usd_total", help: "USD debited from credits", labelNames: ["tool"], registers: [this.registry] });
  /**
   * USD outstanding in credits (balances + open holds) across the service, read at scrape time from the
   * ledger given to {@link Metrics.observeCredits} (shared by the replicas when the ledger is Redis).
   */
  readonly creditsOutstandingUsd = new Gauge({
    name: "marketgate_credits_outstanding_usd",
    help: "USD held in prepaid credits (custodial liability)",
    registers: [this.registry],
    collect: async () => {
      const totals = await this.creditTotals?.().catch(() => undefined);
      if (totals) this.creditsOutstandingUsd.set(totals.outstandingMicro / 1e6);
    },
  });
  private creditTotals?: () => Promise<{ outstandingMicro: number }>;

  /** Publishes the credit ledger's outstanding total in {@link Metrics.creditsOutstandingUsd}. */
  observeCredits(source: () => Promise<{ outstandingMicro: number }>): void {
    this.creditTotals = source;
  }

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    // Prometheus' standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, …), unprefixed, so
    // stock dashboards and alerts work; the service's own metrics keep the marketgate_ prefix.
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }
}
