import { z } from "zod";
import { describe, expect, it } from "vitest";
import { defineTool, requestPath } from "../src/registry/tool.js";
import { RegistryError, validateRegistry, validateStreams } from "../src/registry/validate.js";
import { STREAMS, TOOLS } from "../tools/index.js";

const base = defineTool({
  name: "a_tool",
  title: "A",
  method: "GET",
  path: "/a/:id",
  priceUsd: "0.01",
  cacheTtlSec: 30,
  tags: [],
  summary: "a",
  description: "a",
  example: { id: "x" },
  input: z.object({ id: z.string() }),
  output: z.object({ ok: z.boolean() }),
  handler: async () => ({ ok: true }),
});

describe("registry", () => {
  it("accepts the catalogue and matches the spec's prices and cache TTLs", () => {
    expect(() => validateRegistry(TOOLS)).not.toThrow();
    const spec: Record<string, [string, string, number]> = {
      cex_prices: ["/api/v1/prices", "0.005", 10],
      cex_market: ["/api/v1/market/:id", "0.005", 30],
      cex_market_history: ["/api/v1/market/:id/history", "0.01", 300],
      dex_price: ["/price/:symbol", "0.01", 30],
      dex_price_history: ["/price/history/:symbol", "0.02", 30],
      dex_volume: ["/volume/:symbol", "0.02", 30],
      dex_spread: ["/spread/:pair", "0.02", 30],
      dex_token: ["/dex/tokens/:network/:address", "0.01", 30],
      dex_token_ohlcv: ["/dex/tokens/:network/:address/ohlcv", "0.02", 30],
      dex_tokens: ["/dex/tokens/:network", "0.05", 30],
      dex_token_alert_create: ["/dex/token-alert", "0.04", 0],
      volatility_index: ["/volatility-index/:symbol", "0.03", 30],
      funding_extreme: ["/funding-rate/extreme", "0.02", 30],
      funding_history: ["/funding-rate/history/:symbol", "0.03", 300],
      funding_rate: ["/funding-rate/:symbol", "0.02", 30],
      funding_compare: ["/futures/funding-compare/:symbol", "0.03", 30],
      predicted_funding: ["/futures/predicted-funding/:symbol", "0.02", 30],
      open_interest: ["/futures/open-interest/:symbol", "0.03", 30],
      long_short: ["/futures/long-short/:symbol", "0.02", 30],
      basis: ["/futures/basis/:symbol", "0.02", 30],
      arbitrage_opportunity: ["/arbitrage-opportunity", "0.05", 30],
      cvd: ["/cvd/:symbol", "0.02", 5],
      cvd_history: ["/cvd/history/:symbol", "0.03", 30],
      liquidation_recent: ["/liquidation/recent", "0.03", 15],
      liquidation_heatmap: ["/liquidation/heatmap/:symbol", "0.05", 15],
      liquidation_alert_create: ["/liquidation/alert", "0.06", 0],
      liquidation_alert_get: ["/liquidation/alert/:id", "free", 0],
      liquidation_alert_cancel: ["/liquidation/alert/:id", "free", 0],
      liquidation_alerts_list: ["/liquidation/alerts", "free", 0],
      liquidation_alert_extend: ["/liquidation/alert/:id/extend", "0.03", 0],
      price_alert_create: ["/price-alert", "0.04", 0],
      price_alert_get: ["/price-alert/:id", "free", 0],
      price_alert_cancel: ["/price-alert/:id", "free", 0],
      price_alerts_list: ["/price-alerts", "free", 0],
      price_alert_extend: ["/price-alert/:id/extend", "0.02", 0],
      service_status: ["/api/v1/status", "free", 0],
      // Prepaid credits (issue 17; docs/credits.md): a top-up costs what it credits (0.10 is the minimum).
      credits_top_up: ["/api/v1/credits", "0.10", 0],
      credits_get: ["/api/v1/credits", "free", 0],
      credits_set_caps: ["/api/v1/credits/caps", "free", 0],
      credits_refund: ["/api/v1/credits/refund", "free", 0],
      // Live streams (issue 13): where and how to subscribe; the streams themselves are priced per minute.
      stream_subscribe: ["/stream", "free", 0],
    };
    for (const t of TOOLS) expect([t.path, t.priceUsd, t.cacheTtlSec]).toEqual(spec[t.name]);
  });

  it("prices the live streams per minute and checks their definitions", () => {
    expect(Object.fromEntries(STREAMS.map((s) => [s.path, s.pricePerMinuteUsd]))).toEqual({
      "/stream/liquidations": "0.002",
      "/stream/cvd/:symbol": "0.002",
      "/stream/funding/:symbol": "0.001",
    });
    expect(() => validateStreams([...STREAMS, { ...STREAMS[0]!, path: "/x/:symbol", pricePerMinuteUsd: "0" }])).toThrow(
      /duplicate topic[\s\S]*must start with \/stream\/[\s\S]*:symbol in the path[\s\S]*bad pricePerMinuteUsd/,
    );
  });

  it("reports every problem at once", () => {
    const bad = [base, { ...base }, { ...base, name: "Bad-Name", path: "/b/:missing", priceUsd: "0.0000001", cacheTtlSec: -1, example: {} }];
    try {
      validateRegistry(bad);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(RegistryError);
      const problems = (err as RegistryError).problems.join("\n");
      for (const p of ["duplicate name", "duplicate route", "snake_case", "bad priceUsd", "bad cacheTtlSec", ":missing missing", "example input"]) {
        expect(problems).toContain(p);
      }
    }
  });

  it("checks MCP maxima: numeric input fields, within the field's own maximum", () => {
    const history = TOOLS.find((t) => t.name === "funding_history")!;
    expect(() => validateRegistry([{ ...history, mcpMaxima: { limit: 400 } }])).not.toThrow();
    for (const [mcpMaxima, problem] of [
      [{ limit: 1001 }, "mcpMaxima.limit must be a positive integer within the field's maximum"],
      [{ limit: 0 }, "mcpMaxima.limit must be a positive integer"],
      [{ exchange: 5 }, "mcpMaxima.exchange is not a numeric input field"],
      [{ nope: 5 }, "mcpMaxima.nope is not a numeric input field"],
    ] as const) {
      expect(() => validateRegistry([{ ...history, mcpMaxima }]), problem).toThrow(problem);
    }
  });

  it("builds request paths from raw inputs", () => {
    expect(requestPath(base, { id: "a b" })).toBe("/a/a%20b");
    const history = TOOLS.find((t) => t.name === "cex_market_history")!;
    expect(requestPath(history)).toBe("/api/v1/market/ethereum/history?days=7");
  });
});
