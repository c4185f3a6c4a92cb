import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolContext } from "../../src/core/context.js";
import { Metrics } from "../../src/core/metrics.js";
import { MemoryResponseCache } from "../../src/core/response-cache.js";
import { ToolRunner } from "../../src/core/runner.js";
import { AppError } from "../../src/errors.js";
import { defineTool, type AnyTool, type CallerInfo } from "../../src/registry/tool.js";

/** A GET tool whose handler counts its runs (`runs`) and answers `answer(run, caller)`. */
function countingTool(over: Partial<AnyTool> = {}, answer: (run: number, caller: CallerInfo) => Promise<unknown> = async (run) => ({ run })): AnyTool & { runs: number } {
  const tool: AnyTool & { runs: number } = {
    ...defineTool({
      name: "counting",
      title: "Counting",
      method: "GET",
      path: "/counting/:symbol",
      priceUsd: "0.01",
      cacheTtlSec: 30,
      summary: "counts its runs",
      description: "counts its runs",
      tags: ["test"],
      example: { symbol: "BTC" },
      input: z.object({ symbol: z.string() }),
      output: z.unknown(),
      handler: (_input, _ctx, caller) => answer(++tool.runs, caller),
    }),
    ...over,
    runs: 0,
  };
  return tool;
}

const runner = () => new ToolRunner({} as ToolContext, new Metrics(), new MemoryResponseCache(100));
const BTC = { symbol: "BTC" };
const wallet = (w: string): CallerInfo => ({ wallet: w, credentials: {} });

describe("ToolRunner.execute: one handler run per read", () => {
  it("shares one run between concurrent identical reads", async () => {
    const r = runner();
    const tool = countingTool();
    const answers = await Promise.all(Array.from({ length: 50 }, () => r.execute(tool, BTC)));
    expect(tool.runs).toBe(1);
    expect(new Set(answers).size).toBe(1);
  });

  it("gives a read that missed the cache before the answer was committed the same answer, without running again", async () => {
    // A paid request commits only once settled: identical requests that looked the cache up meanwhile
    // reach execute after the first run has ended.
    const r = runner();
    const tool = countingTool();
    const first = await r.execute(tool, BTC);
    expect(await r.lookup(tool, BTC)).toBeUndefined();
    expect(await r.execute(tool, BTC)).toBe(first);
    await r.commit(tool, BTC, first);
    expect(await r.execute(tool, BTC)).toBe(first);
    expect(tool.runs).toBe(1);
    // Another input is another read.
    await r.execute(tool, { symbol: "ETH" });
    expect(tool.runs).toBe(2);
  });

  it("keeps an answer no longer than the tool's TTL", async () => {
    const r = runner();
    const tool = countingTool({ cacheTtlSec: 1 });
    await r.execute(tool, BTC);
    await new Promise((done) => setTimeout(done, 1100));
    expect(await r.execute(tool, BTC)).toEqual({ run: 2 });
  });

  it("keeps no failure: the next read runs again", async () => {
    const r = runner();
    const tool = countingTool({}, async (run) => {
      if (run === 1) throw new AppError("UPSTREAM_UNAVAILABLE", "venue down");
      return { run };
    });
    await expect(r.execute(tool, BTC)).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    expect(await r.execute(tool, BTC)).toEqual({ run: 2 });
  });

  it("keeps no answer of a tool with TTL 0 (a status): only concurrent reads share", async () => {
    const r = runner();
    const tool = countingTool({ cacheTtlSec: 0 });
    await Promise.all([r.execute(tool, BTC), r.execute(tool, BTC)]);
    await r.execute(tool, BTC);
    expect(tool.runs).toBe(2);
  });

  it("never shares the answer of a tool acting for a signed-in wallet, even between concurrent reads", async () => {
    const r = runner();
    const tool = countingTool({ auth: "siwx", cacheTtlSec: 0 }, async (_run, caller) => ({ wallet: caller.wallet }));
    const [a, b] = await Promise.all([r.execute(tool, BTC, wallet("0xaa")), r.execute(tool, BTC, wallet("0xbb"))]);
    expect([a, b]).toEqual([{ wallet: "0xaa" }, { wallet: "0xbb" }]);
  });
});
