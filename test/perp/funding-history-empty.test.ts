/** `/funding-rate/history/:symbol` with no settlement: an empty answer with a null summary, never zeros (issue 25). */
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/core/context.js";
import type { CallerInfo } from "../../src/registry/tool.js";
import { fundingHistory } from "../../tools/perp/funding-history.js";

const ctxWith = (currentIntervalHours: number | null) =>
  ({
    now: () => Date.now(),
    venues: {
      perps: {
        binance: {
          fundingHistory: async () => [],
          funding: async () => {
            if (currentIntervalHours === null) throw new Error("down");
            return { fundingIntervalHours: currentIntervalHours };
          },
        },
      },
    },
  }) as unknown as ToolContext;

describe("funding history without any settlement", () => {
  it("answers count 0, no rows and summary null, with the venue's current interval", async () => {
    const body = await fundingHistory.handler({ symbol: "NEWCOIN", limit: 100, exchange: "binance" }, ctxWith(4), {} as CallerInfo);
    expect(body).toEqual({ symbol: "NEWCOINUSDT", exchange: "binance", funding_interval_hours: 4, count: 0, history: [], truncated: false, next_cursor: null, summary: null });
    expect(fundingHistory.output.safeParse(body).success).toBe(true);
  });

  it("states the interval as null when the venue's current one cannot be read either", async () => {
    const body = (await fundingHistory.handler({ symbol: "NEWCOIN", limit: 100, exchange: "binance" }, ctxWith(null), {} as CallerInfo)) as {
      funding_interval_hours: number | null;
      summary: unknown;
    };
    expect(body.funding_interval_hours).toBeNull();
    expect(body.summary).toBeNull();
  });
});
