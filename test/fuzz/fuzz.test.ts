import { describe, expect, it } from "vitest";
import { fuzzBothStacks } from "./stacks.js";
import { problems } from "./verdict.js";

describe("fuzz: hostile requests over every registry route, MCP and unrouted paths", () => {
  it("answers 2,500 seeded hostile requests without a 5xx, a crash or unbounded /metrics", async () => {
    const { paid, free } = await fuzzBothStacks(20261123, 1500, 1000);
    const detail = [...paid.failures, ...free.failures].slice(0, 5).map((f) => `${f.status} ${f.request.method} ${f.request.path.slice(0, 120)} ${f.body.slice(0, 160)}`);
    expect([...problems(paid), ...problems(free)], detail.join("\n")).toEqual([]);
    // The run must reach the interesting layers, not stop at one error class.
    expect(Object.keys(paid.statuses)).toEqual(expect.arrayContaining(["400", "402", "404"]));
    expect(free.statuses["200"]).toBeGreaterThan(0);
  }, 600_000);
});
