import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

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
  /** Settled payments per tool and transport (http | mcp). */
  readonly paymentsSettled = new Counter({ name: "marketgate_payments_settled_total", help: "Settled payments", labelNames: ["tool", "transport"], registers: [this.registry] });
  /** Revenue in USDC (1 USDC = 1 USD) per tool. */
  readonly revenueUsdc = new Counter({ name: "marketgate_revenue_usdc_total", help: "Settled revenue in USDC", labelNames: ["tool"], registers: [this.registry] });
  /** Payments refused or failed, by stage (verify | settle) and reason. */
  readonly paymentsFailed = new Counter({ name: "marketgate_payments_failed_total", help: "Rejected or failed payments", labelNames: ["tool", "stage"], registers: [this.registry] });
  /** Upstream venue calls by venue and outcome (ok | error | rate_limited | timeout). */
  readonly upstreamCalls = new Counter({ name: "marketgate_upstream_requests_total", help: "Upstream venue requests", labelNames: ["venue", "outcome"], registers: [this.registry] });
  /** Upstream latency in seconds per venue. */
  readonly upstreamDuration = new Histogram({
    name: "marketgate_upstream_request_duration_seconds",
    help: "Upstream venue latency",
    labelNames: ["venue"],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "marketgate_" });
  }
}
