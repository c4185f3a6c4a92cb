import type { AlertSignals } from "../../src/alerts/engine.js";
import type { ToolContext } from "../../src/core/context.js";
import { computeHeatmap, medianMarkPrice } from "../perp/liquidation-heatmap.js";

/**
 * The market readings of the alert engine, from the same code as the tools: the liquidation heatmap
 * (`GET /liquidation/heatmap/:symbol`) and the median perp mark price it starts from.
 */
export function alertSignals(ctx: ToolContext): AlertSignals {
  return {
    async liquidationRisk(symbol) {
      const { market, heatmap } = await computeHeatmap(ctx, symbol);
      const r = heatmap.risk;
      return { price: market.price, oiAtRiskUsd: r.total_oi_at_risk_usd, oiAtRiskPct: r.oi_at_risk_pct, cascadeRisk: r.cascade_risk };
    },
    price: async (symbol) => (await medianMarkPrice(ctx, symbol)).price,
  };
}
