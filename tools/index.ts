import type { AnyTool } from "../src/registry/tool.js";
import { validateRegistry } from "../src/registry/validate.js";
import { cexMarket } from "./cex/market.js";
import { cexMarketHistory } from "./cex/market-history.js";
import { cexPrices } from "./cex/prices.js";
import { serviceStatus } from "./service/status.js";

/** The catalogue: every tool the service offers, read by the HTTP and MCP mounts and the manifest generator. */
export const TOOLS: readonly AnyTool[] = [cexPrices, cexMarket, cexMarketHistory, serviceStatus];

validateRegistry(TOOLS);
