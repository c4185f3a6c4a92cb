import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { fakeEvmAddress, fakeSolanaAddress } from "../../src/sim/dex-tokens.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { AppError } from "../../src/errors.js";
import { ClientRateLimiter } from "../../src/lib/rate-limit.js";
import { DexTokenSource, NEGATIVE_TTL_MS, type DexTokenSourceOptions } from "../../src/venues/dex/token-source.js";
import { DexScreenerClient } from "../../src/venues/dexscreener/client.js";
import { GeckoTerminalClient } from "../../src/venues/geckoterminal/client.js";
import { GeckoTerminalTokenClient } from "../../src/venues/geckoterminal/token-client.js";

describe("token source pacing (real clients against the simulator)", () => {
  let sim: RunningSimulator;
  let urls: { gt: string; ds: string };
  beforeAll(async () => {
    sim = await startSimulator({ seed: 5 });
    const v = loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim) }).venues;
    urls = { gt: v.geckoterminal, ds: v.dexscreener };
  });
  afterAll(() => sim?.close());

  /** A source whose budget is `perWindow` calls per source per `windowMs` (default 1). */
  const source = (windowMs: number, maxWaitMs = 10_000, extra: Partial<DexTokenSourceOptions> = {}, perWindow = 1) =>
    new DexTokenSource({
      gt: new GeckoTerminalTokenClient(new GeckoTerminalClient(urls.gt, { timeoutMs: 2000 }).http),
      ds: new DexScreenerClient(urls.ds, { timeoutMs: 2000 }),
      gtCallsPerMin: (perWindow * 60_000) / windowMs,
      dsCallsPerMin: (perWindow * 60_000) / windowMs,
      budgetWindowMs: windowMs,
      maxWaitMs,
      ...extra,
    });

  it("serves paid loads before background work; a check before payment never waits in that queue", async () => {
    // One call per window: no share is left for checks before payment (20% of 1 rounds down to 0).
    const src = source(1000);
    expect(src.budgets.geckoterminal).toMatchObject({ paid: 1, unpaid: 0 });
    const done: string[] = [];
    const load = (name: string, chain: "base" | "arbitrum" | "optimism" | "solana", priority: "paid" | "background") =>
      src.snapshot(chain, chain === "solana" ? fakeSolanaAddress(`prio-${name}`) : fakeEvmAddress(`prio-${name}`), priority).then(() => done.push(name));
    // The first takes the window's only call; the two others wait, queued in the opposite order of their rank.
    const first = load("first", "base", "background");
    await new Promise((r) => setTimeout(r, 60));
    const queued = Promise.all([first, load("background", "arbitrum", "background"), load("paid", "solana", "paid")]);
    // Meanwhile a check before payment is told at once (well before the next window) that it could not ask.
    const check = await src.existence("optimism", [fakeEvmAddress("prio-unpaid")]);
    expect(check.existence).toEqual(["unchecked"]);
    expect(check.retryAfterSec).toBeGreaterThan(0);
    expect(done).not.toContain("paid");
    await queued;
    expect(done).toEqual(["first", "paid", "background"]);
    expect(src.calls).toEqual({ geckoterminal: 3, dexscreener: 3 });
    expect(src.unpaidCalls).toEqual({ geckoterminal: 0, dexscreener: 0 });
  });

  it("checks before payment spend only their share of the budget: a flood of them leaves every paid call its budget", async () => {
    // 10 calls per source per (long) window: 2 for checks before payment, 8 kept for paid loads.
    const src = source(60_000, 300, {}, 10);
    expect(src.budgets).toEqual({ geckoterminal: { paid: 8, unpaid: 2, windowMs: 60_000 }, dexscreener: { paid: 8, unpaid: 2, windowMs: 60_000 } });
    const answers: string[] = [];
    for (let i = 0; i < 40; i++) answers.push(...(await src.existence("base", [fakeEvmAddress(`flood-${i}`)])).existence);
    expect(answers.slice(0, 2)).toEqual(["unknown", "unknown"]);
    expect(new Set(answers.slice(2))).toEqual(new Set(["unchecked"]));
    expect(src.unpaidCalls).toEqual({ geckoterminal: 2, dexscreener: 2 });
    // Every paid call of the window is still there, without waiting (maxWaitMs is 300 ms).
    for (let i = 0; i < 8; i++) await src.snapshot("arbitrum", fakeEvmAddress(`paid-${i}`), "paid");
    expect(src.calls).toEqual({ geckoterminal: 10, dexscreener: 10 });
    // Then the budget is really spent.
    await expect(src.snapshot("arbitrum", fakeEvmAddress("paid-9"), "paid")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
  });

  it("remembers unknown tokens per network and address, for NEGATIVE_TTL_MS of the injected clock, at most maxUnknown", async () => {
    let now = Date.now();
    const src = source(60_000, 2000, { now: () => now, maxUnknown: 3 }, 1000);
    const count = () => src.calls.geckoterminal + src.calls.dexscreener;
    const a = fakeEvmAddress("negative-a");
    expect((await src.existence("base", [a])).existence).toEqual(["unknown"]);
    expect(count()).toBe(2);
    // Again, in either spelling, and from a paid load: no call.
    expect((await src.existence("base", [a.toUpperCase().replace("0X", "0x")])).existence).toEqual(["unknown"]);
    expect((await src.snapshot("base", a, "paid")).dsPools).toEqual([]);
    expect(count()).toBe(2);
    // Another network is another token.
    expect((await src.existence("arbitrum", [a])).existence).toEqual(["unknown"]);
    expect(count()).toBe(4);
    // Past the TTL it is asked again.
    now += NEGATIVE_TTL_MS + 1;
    expect((await src.existence("base", [a])).existence).toEqual(["unknown"]);
    expect(count()).toBe(6);
    // Bounded: three more unknown tokens push the oldest out; a known token's metadata stays (kept apart).
    const weth = "0x4200000000000000000000000000000000000006";
    expect((await src.existence("base", [weth])).existence).toEqual(["known"]);
    for (const l of ["b", "c", "d"]) await src.existence("base", [fakeEvmAddress(`negative-${l}`)]);
    const before = count();
    expect((await src.existence("base", [weth])).existence).toEqual(["known"]);
    expect((await src.existence("base", [fakeEvmAddress("negative-d")])).existence).toEqual(["unknown"]);
    expect(count()).toBe(before);
    expect((await src.existence("base", [a])).existence).toEqual(["unknown"]);
    expect(count()).toBe(before + 2);
  });

  it("budgets the checks that need a call per client: 429 with Retry-After beyond it; cached answers and other clients unaffected", async () => {
    const checkBudget = new ClientRateLimiter({ perMin: 2, keyName: "t", what: "token existence checks", policy: "t" });
    const src = source(60_000, 2000, { checkBudget }, 1000);
    const client = "10.20.0.1";
    const a = fakeEvmAddress("client-a");
    expect((await src.existence("base", [a], { client })).existence).toEqual(["unknown"]);
    expect((await src.existence("base", [fakeEvmAddress("client-b")], { client })).existence).toEqual(["unknown"]);
    const over = await src.existence("base", [fakeEvmAddress("client-c")], { client }).catch((e: unknown) => e);
    expect(over).toMatchObject({ code: "RATE_LIMITED", retryAfterSec: expect.any(Number) });
    expect((over as AppError).retryAfterSec).toBeGreaterThan(0);
    // A cached answer costs no point; another client has its own.
    expect((await src.existence("base", [a], { client })).existence).toEqual(["unknown"]);
    expect((await src.existence("base", [fakeEvmAddress("client-c")], { client: "10.20.0.2" })).existence).toEqual(["unknown"]);
    // A caller that pays anyway asks nothing and spends no point: what the caches lack is left to the paid run.
    const calls = { ...src.calls };
    expect((await src.existence("base", [fakeEvmAddress("client-d"), a], { client, cachedOnly: true })).existence).toEqual(["unchecked", "unknown"]);
    expect(src.calls).toEqual(calls);
  });

  it("answers 503 when a load would wait longer than maxWaitMs for the budget", async () => {
    const src = source(60_000, 300);
    await src.snapshot("base", fakeEvmAddress("wait-1"), "paid");
    await expect(src.snapshot("arbitrum", fakeEvmAddress("wait-2"), "paid")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
  });
});
