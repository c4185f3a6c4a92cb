import type { AnyTool } from "../src/registry/tool.js";
import { validateRegistry } from "../src/registry/validate.js";
import { liquidationAlertTools } from "./alerts/liquidation.js";
import { priceAlertTools } from "./alerts/price.js";
import { tokenPriceAlertCreate } from "./alerts/token-price.js";
import { cexMarket } from "./cex/market.js";
import { cexMarketHistory } from "./cex/market-history.js";
import { cexPrices } from "./cex/prices.js";
import { dexPriceHistory } from "./dex/history.js";
import { dexPrice } from "./dex/price.js";
import { dexSpread } from "./dex/spread.js";
import { dexToken } from "./dex/token.js";
import { dexTokenOhlcv } from "./dex/token-ohlcv.js";
import { dexTokens } from "./dex/tokens.js";
import { volatilityIndex } from "./dex/volatility.js";
import { dexVolume } from "./dex/volume.js";
import { arbitrageOpportunity } from "./perp/arbitrage.js";
import { basis } from "./perp/basis.js";
import { fundingCompare } from "./perp/funding-compare.js";
import { fundingRate } from "./perp/funding-current.js";
import { fundingExtreme } from "./perp/funding-extreme.js";
import { fundingHistory } from "./perp/funding-history.js";
import { liquidationHeatmapTool } from "./perp/liquidation-heatmap.js";
import { longShort } from "./perp/long-short.js";
import { openInterest } from "./perp/open-interest.js";
import { predictedFunding } from "./perp/predicted-funding.js";
import { creditsGet, creditsSetCaps } from "./credits/account.js";
import { creditsRefund } from "./credits/refund.js";
import { creditsTopUp } from "./credits/top-up.js";
import { serviceStatus } from "./service/status.js";
import { cvdHistory } from "./streams/cvd-history.js";
import { cvd } from "./streams/cvd.js";
import { liquidationRecent } from "./streams/liquidations.js";
import { streamSubscribe } from "./live/subscribe.js";

export { STREAMS, streamSymbol } from "./live/index.js";

/** The catalogue: every tool the service offers, read by the HTTP and MCP mounts and the manifest generator. */
export const TOOLS: readonly AnyTool[] = [
  cexPrices,
  cexMarket,
  cexMarketHistory,
  // /price/history/:symbol before /price/:symbol (express matches in order).
  dexPriceHistory,
  dexPrice,
  dexVolume,
  dexSpread,
  volatilityIndex,
  // Any token by address (docs/methods/dex-tokens.md); the longer /ohlcv path first.
  dexTokenOhlcv,
  dexToken,
  dexTokens,
  // Literal funding paths before /funding-rate/:symbol so that express matches them first.
  fundingExtreme,
  fundingHistory,
  fundingRate,
  fundingCompare,
  predictedFunding,
  openInterest,
  longShort,
  basis,
  arbitrageOpportunity,
  // /cvd/history/:symbol before /cvd/:symbol.
  cvdHistory,
  cvd,
  liquidationRecent,
  streamSubscribe,
  liquidationHeatmapTool,
  ...liquidationAlertTools,
  ...priceAlertTools,
  tokenPriceAlertCreate,
  // /api/v1/credits/caps and /refund are literal paths: no order constraint with /api/v1/credits.
  creditsTopUp,
  creditsGet,
  creditsSetCaps,
  creditsRefund,
  serviceStatus,
];

validateRegistry(TOOLS);
