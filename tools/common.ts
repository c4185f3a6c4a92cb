import { z } from "zod";
import { assetByIdOrSymbol, type AssetInfo } from "../src/assets/catalogue.js";
import type { ToolContext } from "../src/core/context.js";
import { COMPLETENESS, REQUIRE_FIELD } from "../src/core/request-scope.js";
import { VENUES } from "../src/venues/index.js";
import { PERP_VENUES } from "../src/venues/perp/types.js";

/** Custom-issue marker that makes the mounts answer 404 UNKNOWN_SYMBOL instead of 400. */
export const UNKNOWN_SYMBOL_ISSUE = { appCode: "UNKNOWN_SYMBOL" } as const;

/** ISO 8601 UTC timestamp of an answer. */
export const Timestamp = z.string().describe("ISO 8601 UTC time the answer was produced");

/**
 * The `require` input field of every tool that reads several venues (spread into its input object): how
 * complete the answer must be. The runner hands it to `fanOut` through the request scope; being part of
 * the input, it also reaches OpenAPI, the MCP inputSchema and the cache key.
 */
export const RequireField = {
  [REQUIRE_FIELD]: z
    .enum(COMPLETENESS)
    .default("any")
    .describe(
      "any (default): answer from the venues that respond, unless more than half of those listing the symbol fail (then 503, not charged); all: every venue must answer, else 503 (not charged)",
    ),
};

/** `[unix_ms, value]` chart point. */
export const ChartPoint = z.tuple([z.number().int().describe("unix ms"), z.number()]);

/**
 * Path parameter naming a catalogue asset by CoinGecko id (`bitcoin`) or symbol (`btc`); resolves to the asset.
 * An unknown id fails with UNKNOWN_SYMBOL (404) before any payment is asked for.
 */
export const AssetIdParam = z
  .string()
  .min(1)
  .max(64)
  .describe("CoinGecko coin id of a supported asset (e.g. bitcoin, ethereum, avalanche-2); the symbol (btc) is accepted too")
  .transform((raw, ctx): AssetInfo => {
    const asset = assetByIdOrSymbol(raw);
    if (!asset) {
      ctx.addIssue({ code: "custom", message: `unknown or unsupported asset id '${raw}'`, params: UNKNOWN_SYMBOL_ISSUE });
      return z.NEVER;
    }
    return asset;
  });

/** Label of the data source of an answer: the venue, flagged when it is the local simulator. */
export function sourceLabel(ctx: ToolContext, venue: string): string {
  return ctx.dataMode === "sim" ? `${venue} (simulated)` : venue;
}

/** Current time as ISO 8601. */
export function isoNow(ctx: ToolContext): string {
  return new Date(ctx.now()).toISOString();
}

/** Display names of the perpetual venues (their definitions'), for descriptions; a key without one is shown as it is. */
const VENUE_NAMES: ReadonlyMap<string, string> = new Map(VENUES.map((v) => [v.id, v.name]));

/** `Binance, Bybit and OKX`: the venues' display names as a list in prose. */
export function venueList(venues: readonly string[] = PERP_VENUES): string {
  const names = venues.map((v) => VENUE_NAMES.get(v) ?? v);
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
