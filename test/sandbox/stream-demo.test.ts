import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { DEMO_STREAM_MINUTE_MS, runStreamDemo, simulatedLiquidations } from "../../src/sandbox/stream-demo.js";
import { venuesWith } from "../../src/venues/index.js";

const micro = (usd: string) => Math.round(Number(usd) * 1e6);

/** The sandbox's live-stream walk-through against the offline stack, with the sandbox's short billed minute. */
describe("sandbox stream demo", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack({ env: { LIVE_STREAM_MINUTE_MS: String(DEMO_STREAM_MINUTE_MS) } });
  });
  afterAll(() => stack?.close());

  it("tops up, signs in with SIWX, receives liquidations and pays minutes x price from credits, nothing on chain", async () => {
    const lines: string[] = [];
    const r = await runStreamDemo({
      baseUrl: stack.url,
      payer: stack.payers[2]!,
      minuteMs: DEMO_STREAM_MINUTE_MS,
      simulated: simulatedLiquidations(stack.sim),
      balanceOf: stack.balanceOf,
      print: (l) => lines.push(l),
    });
    expect(r.status).toBe(200);
    expect(r.sessionToken).toBe(true);
    expect(r.endedBy).toBeUndefined();

    // One debit per billed minute, numbered from 1, each at the registry's price; the ledger agrees.
    expect(r.debits.length).toBeGreaterThanOrEqual(3);
    expect(r.debits.map((d) => d.minute)).toEqual(r.debits.map((_, k) => k + 1));
    expect(r.debits.every((d) => d.topic === "liquidations" && d.price_usd === r.pricePerMinuteUsd)).toBe(true);
    expect(micro(r.spentUsd)).toBe(r.debits.length * micro(r.pricePerMinuteUsd));
    expect(micro(r.before.balance_usd) - micro(r.after.balance_usd)).toBe(micro(r.spentUsd));
    expect(r.debits.at(-1)!.remaining_usd).toBe(r.after.balance_usd);
    // Minutes billed match the time the stream was open (closed half-way through the last one).
    expect(r.debits.length).toBe(Math.round(r.openMs / DEMO_STREAM_MINUTE_MS));
    expect(r.onChainSpentAtomic).toBe(100_000n); // the 0.1 USD top-up only

    // Events: simulated liquidations as /liquidation/recent lists them; the demo waits (up to 15 billed
    // minutes) for a first one, so none means the simulated market had (almost) nothing to liquidate.
    for (const e of r.liquidations) {
      expect(e).toMatchObject({
        id: expect.stringMatching(/^liq_\d+_\d+$/),
        symbol: expect.stringMatching(/USDT$/),
        exchange: expect.stringMatching(new RegExp(`^(${venuesWith("liquidations").join("|").toUpperCase()})$`)),
      });
    }
    // Every one came from the simulator's feeds, and none they published while the stream was open was
    // missed (a second of margin at both ends: sign-in before the subscription, venue push batches).
    const published = simulatedLiquidations(stack.sim);
    const closedAt = r.openedAt + r.openMs;
    expect(r.liquidations.length).toBeLessThanOrEqual(published(r.openedAt - 2000, closedAt));
    expect(r.liquidations.length).toBeGreaterThanOrEqual(published(r.openedAt + 1000, closedAt - 1000));
    if (r.liquidations.length === 0) expect(r.debits).toHaveLength(15);
    const text = lines.join("\n");
    expect(text).toContain(`received ${r.liquidations.length} liquidation`);
    expect(text).toContain(`paid ${r.debits.length} stream-minutes x ${r.pricePerMinuteUsd} USD`);
    expect(text).toContain("credits before");
    expect(stack.service.live.limits.open).toBe(0);
  }, 90_000);
});
