import type { AlertSignals } from "../../src/alerts/engine.js";
import type { ToolContext } from "../../src/core/context.js";
import { describeToken } from "../../src/analytics/dex-token.js";
import { assertSingleEpoch } from "../../src/core/replay-epochs.js";
import { recordVenueExchanges, VenueLog } from "../../src/core/request-scope.js";
import { AppError } from "../../src/errors.js";
import { computeHeatmap, medianMarkPrice } from "../perp/liquidation-heatmap.js";
import { parseTokenAlertSymbol } from "./token-symbol.js";

/**
 * The market readings of the alert engine, from the same code as the tools: the liquidation heatmap
 * (`GET /liquidation/heatmap/:symbol`) and the median perp mark price it starts from; for token alerts
 * (`token:<network>:<address>`, token-price.ts) the price of `dex_token`. In sandbox replay a reading that would mix
 * epochs throws AppError CONFLICT like a tool's answer (src/core/replay-epochs.ts): the engine skips it as unreadable.
 */
export function alertSignals(ctx: ToolContext): AlertSignals {
  return {
    async liquidationRisk(symbol) {
      const { market, heatmap } = await singleEpoch(() => computeHeatmap(ctx, symbol));
      const r = heatmap.risk;
      return { price: market.price, oiAtRiskUsd: r.total_oi_at_risk_usd, oiAtRiskPct: r.oi_at_risk_pct, cascadeRisk: r.cascade_risk };
    },
    async price(symbol) {
      const token = parseTokenAlertSymbol(symbol);
      if (!token) return (await singleEpoch(() => medianMarkPrice(ctx, symbol))).price;
      // A token alert (token-price.ts): the liquidity-weighted price of dex_token, read at background priority.
      const snap = await ctx.venues.dexTokens.snapshot(token.chain, token.address, "background");
      const price = describeToken(snap, ctx.now()).priceUsd;
      if (price === null) throw new AppError("UPSTREAM_ERROR", `no source prices ${token.address} on ${token.chain} now`);
      return price;
    },
  };
}

/** Runs a background reading, refusing it (AppError CONFLICT) when its venue data mixes epochs in sandbox replay. */
async function singleEpoch<T>(read: () => Promise<T>): Promise<T> {
  const log = new VenueLog();
  const value = await recordVenueExchanges(log, read);
  assertSingleEpoch(log);
  return value;
}
