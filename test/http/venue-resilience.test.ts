import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";

type Missing = Array<{ exchange: string; reason: string }>;
/** The missing venues of an answer other than those that do not list the symbol. */
const failedOnly = (missing: Missing) => missing.filter((m) => m.reason !== "not_listed");
/** Venues that answered or do not list the symbol: with every venue up, all of them. */
const accountedFor = (body: { exchanges: Record<string, unknown>; missing_exchanges: Missing }) =>
  [...Object.keys(body.exchanges), ...body.missing_exchanges.filter((m) => m.reason === "not_listed").map((m) => m.exchange)].sort();
import { header, paymentRequired, signPayment } from "../helpers/pay.js";

/** Loads every perp venue's instrument list (the quote endpoint runs the check before payment), so later requests only read data. */
async function warmInstruments(baseUrl: string): Promise<void> {
  expect((await fetch(`${baseUrl}/api/v1/quote?path=/futures/funding-compare/SOL`)).status).toBe(200);
}

/** `{ venue -> circuit }` from `/api/v1/status`. */
async function circuits(s: FreeStack): Promise<Record<string, string>> {
  const { body } = await s.get("/api/v1/status");
  return Object.fromEntries((body.venues as Array<{ venue: string; circuit: string }>).map((v) => [v.venue, v.circuit]));
}

describe("a hanging venue cannot stall a request", () => {
  let s: FreeStack;
  beforeAll(async () => {
    // Per-attempt timeout left at its default (8 s): without a deadline this request would take 3 x 8 s.
    s = await startFreeStack({ REQUEST_DEADLINE_MS: "1500" });
    await warmInstruments(s.url);
  });
  afterAll(() => s?.close());

  it("answers within the request deadline, naming the venue that did not answer", async () => {
    s.sim.faults.inject("okx", { kind: "timeout", delayMs: Infinity }, Infinity);
    const t0 = Date.now();
    const { status, body } = await s.get("/futures/funding-compare/ETH");
    const ms = Date.now() - t0;
    expect(status).toBe(200);
    expect(ms).toBeLessThan(1500 + 1000);
    expect(accountedFor(body)).toEqual(PERP_VENUES.filter((v) => v !== "okx").sort());
    expect(failedOnly(body.missing_exchanges)).toEqual([{ exchange: "okx", reason: "UPSTREAM_TIMEOUT: okx did not answer within the request deadline" }]);
  });
});

describe("per-venue circuit breaker on the service", () => {
  let s: FreeStack;
  beforeAll(async () => {
    s = await startFreeStack({ CIRCUIT_FAILURES: "2", CIRCUIT_HALF_OPEN_MS: "1000" });
    await warmInstruments(s.url);
  });
  afterAll(() => s?.close());

  it("opens after repeated failures, skips the venue without calling it, shows it in status and metrics, and closes after a probe", async () => {
    expect((await circuits(s)).okx).toBe("closed");
    s.sim.faults.inject("okx", { kind: "server_error", status: 503 }, Infinity);
    // Distinct symbols: each request misses the response cache and calls okx once more.
    for (const sym of ["ETH", "XRP", "LTC"]) {
      if ((await circuits(s)).okx === "open") break;
      const { status, body } = await s.get(`/futures/open-interest/${sym}`);
      expect(status).toBe(200);
      expect(failedOnly(body.missing_exchanges)).toEqual([{ exchange: "okx", reason: "UPSTREAM_UNAVAILABLE: okx answered HTTP 503" }]);
    }
    expect(await circuits(s)).toMatchObject({ okx: "open", binance: "closed", bybit: "closed", hyperliquid: "closed" });

    s.sim.faults.resetCounts("okx");
    const skipped = await s.get("/futures/open-interest/DOGE");
    expect(skipped.status).toBe(200);
    expect(failedOnly(skipped.body.missing_exchanges)).toEqual([{ exchange: "okx", reason: expect.stringMatching(/^UPSTREAM_UNAVAILABLE: okx circuit open/) }]);
    expect(s.sim.faults.requestCount("okx")).toBe(0);

    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('marketgate_circuit_state{venue="okx"} 2');
    expect(metrics).toContain('marketgate_circuit_state{venue="binance"} 0');
    const labelled = [...metrics.matchAll(/^marketgate_circuit_state\{venue="([^"]+)"\}/gm)].map((m) => m[1]).sort();
    expect(labelled).toEqual(["coingecko", ...PERP_VENUES, "dexscreener", "geckoterminal"].sort());

    s.sim.faults.clear();
    await new Promise((r) => setTimeout(r, 1100));
    const probed = await s.get("/futures/open-interest/AVAX");
    expect(probed.status).toBe(200);
    expect(probed.body.exchanges.okx).toBeDefined();
    expect(probed.body.missing_exchanges).toEqual([]);
    expect(s.sim.faults.requestCount("okx")).toBeGreaterThan(0);
    expect((await circuits(s)).okx).toBe("closed");
    expect(await (await fetch(`${s.url}/metrics`)).text()).toContain('marketgate_circuit_state{venue="okx"} 0');
  });
});

// Open interest is read per request on every venue (funding comes from short-lived all-market snapshots).
describe("what a partial answer costs (paid on the local chain)", () => {
  let stack: OfflineStack;
  const payer = () => stack.payers[0]!;
  /** Pays for `url` once and returns the response and how much the payer's balance moved. */
  const payFor = async (url: string, sig?: string) => {
    const signature = sig ?? header(await signPayment(await paymentRequired(url), payer().privateKey));
    const before = await stack.balanceOf(payer().address);
    const res = await fetch(url, { headers: { "payment-signature": signature } });
    return { res, body: await json(res), charged: before - (await stack.balanceOf(payer().address)), signature };
  };

  beforeAll(async () => {
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "10000" } });
    await warmInstruments(stack.url);
  });
  afterAll(() => stack?.close());
  beforeEach(() => stack.sim.faults.clear());

  it("more than half of the venues failing: 503 naming them, and the payer is not charged", async () => {
    // More than half of the venues, all of which list ETH. Not Hyperliquid: its open interest comes with the instrument
    // list the warm-up above cached, so a fault injected now does not reach its answer.
    const down: string[] = PERP_VENUES.filter((v) => v !== "hyperliquid").slice(0, Math.floor(PERP_VENUES.length / 2) + 1);
    for (const v of down) stack.sim.faults.inject(v, { kind: "server_error", status: 500 }, Infinity);
    const { res, body, charged } = await payFor(`${stack.url}/futures/open-interest/ETH`);
    expect(res.status).toBe(503);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(body.error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining(`${down.length} of ${PERP_VENUES.length} venues failed`) });
    const failed = failedOnly(body.error.details as Missing).map((d) => d.exchange);
    expect(failed.sort()).toEqual([...down].sort());
    expect(charged).toBe(0n);
  });

  it("one venue failing of eight is answered, and charged, with the venue named", async () => {
    stack.sim.faults.inject("bybit", { kind: "server_error", status: 500 }, Infinity);
    const { res, body, charged } = await payFor(`${stack.url}/futures/open-interest/XRP`);
    expect(res.status).toBe(200);
    expect(failedOnly(body.missing_exchanges).map((m) => m.exchange)).toEqual(["bybit"]);
    expect(charged).toBe(30_000n);
  });

  it("require=all: one venue down is a 503 without charge; the same payment buys the full answer once it is back", async () => {
    stack.sim.faults.inject("okx", { kind: "server_error", status: 500 }, Infinity);
    const url = `${stack.url}/futures/open-interest/LTC?require=all`;
    const down = await payFor(url);
    expect(down.res.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining("require=all") });
    expect(failedOnly(down.body.error.details)).toEqual([{ exchange: "okx", reason: expect.stringContaining("UPSTREAM_UNAVAILABLE") }]);
    expect(down.charged).toBe(0n);

    stack.sim.faults.clear();
    const up = await payFor(url, down.signature);
    expect(up.res.status).toBe(200);
    expect(accountedFor(up.body)).toEqual([...PERP_VENUES].sort());
    expect(failedOnly(up.body.missing_exchanges)).toEqual([]);
    expect(up.charged).toBe(30_000n);
  });
});
