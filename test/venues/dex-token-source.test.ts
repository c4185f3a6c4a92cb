import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { fakeEvmAddress, fakeSolanaAddress } from "../../src/sim/dex-tokens.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { DexTokenSource } from "../../src/venues/dex/token-source.js";
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

  /** A source whose budget is one call per source per `windowMs`. */
  const source = (windowMs: number, maxWaitMs = 10_000) =>
    new DexTokenSource({
      gt: new GeckoTerminalTokenClient(new GeckoTerminalClient(urls.gt, { timeoutMs: 2000 }).http),
      ds: new DexScreenerClient(urls.ds, { timeoutMs: 2000 }),
      gtCallsPerMin: 1,
      dsCallsPerMin: 1,
      budgetWindowMs: windowMs,
      maxWaitMs,
    });

  it("serves paid loads before pre-payment checks, and those before background work, when the budget is short", async () => {
    const src = source(400);
    const done: string[] = [];
    const load = (name: string, chain: "base" | "arbitrum" | "optimism" | "solana", priority: "paid" | "unpaid" | "background") =>
      src.snapshot(chain, chain === "solana" ? fakeSolanaAddress(`prio-${name}`) : fakeEvmAddress(`prio-${name}`), priority).then(() => done.push(name));
    // The first takes the window's only call; the three others wait, queued in the opposite order of their rank.
    const first = load("first", "base", "background");
    await new Promise((r) => setTimeout(r, 60));
    await Promise.all([first, load("background", "arbitrum", "background"), load("unpaid", "optimism", "unpaid"), load("paid", "solana", "paid")]);
    expect(done).toEqual(["first", "paid", "unpaid", "background"]);
    expect(src.calls).toEqual({ geckoterminal: 4, dexscreener: 4 });
  });

  it("answers 503 when a load would wait longer than maxWaitMs for the budget", async () => {
    const src = source(60_000, 300);
    await src.snapshot("base", fakeEvmAddress("wait-1"), "paid");
    await expect(src.snapshot("arbitrum", fakeEvmAddress("wait-2"), "paid")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
  });
});
