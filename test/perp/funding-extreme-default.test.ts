/**
 * The default threshold of `/funding-rate/extreme` (tools/perp/funding-extreme.ts, docs/methods/perpetuals.md) on the
 * recorded Binance `GET /fapi/v1/premiumIndex` snapshot of 2024-11-27 (test/perp/fixtures/README.md): the spec's 0.01
 * flags almost every market (0.01% per 8 h is the neutral rate); the default flags the tail.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/core/context.js";
import type { CallerInfo } from "../../src/registry/tool.js";
import { PERP_VENUES, type FundingSnapshot } from "../../src/venues/perp/types.js";
import { DEFAULT_THRESHOLD_PCT, fundingExtreme } from "../../tools/perp/funding-extreme.js";

type Row = { symbol: string; markPrice: string; indexPrice: string; lastFundingRate: string; interestRate: string; nextFundingTime: number; time: number };
const rows = JSON.parse(readFileSync(new URL("./fixtures/usdm_premiumIndex_all_symbols_2024-11-27.json", import.meta.url), "utf8")) as Row[];

/**
 * The USDT perpetuals as Binance snapshots. The payload has no interval; Binance's interest component is 0.01% per
 * 8 h, so a row with interestRate 0.005% settles every 4 h (an inference, stated in docs/methods/perpetuals.md).
 */
const snapshots: FundingSnapshot[] = rows
  .filter((r) => r.symbol.endsWith("USDT"))
  .map((r) => ({
    venue: "binance",
    base: r.symbol.slice(0, -4),
    venueSymbol: r.symbol,
    fundingRate: Number(r.lastFundingRate),
    fundingIntervalHours: Number(r.interestRate) === 0.00005 ? 4 : 8,
    nextFundingTime: r.nextFundingTime,
    markPrice: Number(r.markPrice),
    indexPrice: Number(r.indexPrice),
    premium: null,
    interestRate: Number(r.interestRate),
    time: r.time,
  }));

/** Binance answers the recorded snapshot; the other scanned venues answer nothing. */
const ctx = {
  now: () => Date.parse("2024-11-27T13:54:15Z"),
  venues: { perps: Object.fromEntries(PERP_VENUES.map((v) => [v, { fundingAll: async () => (v === "binance" ? snapshots : []) }])) },
} as unknown as ToolContext;

const scan = async (threshold?: number) => {
  const input = fundingExtreme.input.parse(threshold === undefined ? {} : { threshold });
  return (await fundingExtreme.handler(input, ctx, {} as CallerInfo)) as { threshold: number; total_markets_scanned: number; extreme_markets: number };
};

describe("/funding-rate/extreme default threshold on the recorded Binance snapshot", () => {
  it("the spec's 0.01 flags 342 of 346 markets; the default 0.05 flags 25 (7%)", async () => {
    expect(snapshots).toHaveLength(346);
    const spec = await scan(0.01);
    expect(spec.total_markets_scanned).toBe(346);
    expect(spec.extreme_markets).toBe(342);
    const byDefault = await scan();
    expect(byDefault.threshold).toBe(DEFAULT_THRESHOLD_PCT);
    expect(DEFAULT_THRESHOLD_PCT).toBe(0.05);
    expect(byDefault.extreme_markets).toBe(25);
    expect(byDefault.extreme_markets / byDefault.total_markets_scanned).toBeLessThan(0.1);
  });
});
