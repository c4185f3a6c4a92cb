import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { json } from "../helpers/json.js";
import { siwxHeader } from "../helpers/siwx.js";
import { until } from "../helpers/wait.js";

/**
 * Free CVD warm-ups against paid use (issue 20, finding 4), on the offline stack (simulator, anvil, real
 * credits): two on-demand slots, three new warm-ups per client per minute, clients told apart by
 * X-Forwarded-For from loopback (TRUST_PROXY=loopback), payments with the official x402 client.
 */
describe("unpaid CVD warm-ups never evict paid streams and are budgeted per client", () => {
  let stack: OfflineStack;
  const from = (ip: string) => ({ "X-Forwarded-For": ip });
  const get = (path: string, ip: string) => fetch(`${stack.url}${path}`, { headers: from(ip) });
  const payWith = (i: number) => wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(stack.payers[i]!.privateKey))));
  const onDemand = () => stack.service.ctx.ingestion!.subscribedBases();

  beforeAll(async () => {
    stack = await startOfflineStack({
      env: {
        RATE_LIMIT_PER_MIN: "100000",
        FREE_RATE_LIMIT_PER_MIN: "100000",
        CREDITS_MIN_TOP_UP_USD: "0.01",
        STREAM_MAX_ON_DEMAND: "2",
        STREAM_WARMUP_SEC: "1",
        STREAM_WARMUPS_PER_MIN: "3",
        TRUST_PROXY: "loopback",
      },
    });
  });
  afterAll(() => stack?.close());

  it("one client's warm-ups beyond its budget are refused (429, free) while another client's still work", async () => {
    for (const symbol of ["OP", "APT", "AVAX"]) expect((await get(`/cvd/${symbol}`, "10.1.0.1")).status, symbol).toBe(202);
    const over = await get("/cvd/SUI", "10.1.0.1");
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(over.headers.get("payment-required")).toBeNull();
    expect((await json(over)).error).toMatchObject({ code: "RATE_LIMITED", message: expect.stringContaining("warm-ups") });
    expect(onDemand()).not.toContain("SUI");
    // A symbol already streamed spends nothing: the same client still reaches it.
    expect([200, 202, 402]).toContain((await get("/cvd/AVAX", "10.1.0.1")).status);
    // Another client has its own budget.
    expect((await get("/cvd/SUI", "10.1.0.2")).status).toBe(202);
    expect(onDemand()).toContain("SUI");
  });

  it("a symbol paid for survives a flood of warm-ups from other clients; when every slot is paid for, warm-ups get 503 with Retry-After, not charged", async () => {
    // A paying caller warms WIF up (free 202), then buys its CVD with x402.
    expect((await get("/cvd/WIF", "127.0.0.1")).status).toBe(202);
    const pay = payWith(1);
    const paid = await until("WIF ready and paid", async () => {
      const res = await pay(`${stack.url}/cvd/WIF`);
      return res.status === 200 ? res : undefined;
    });
    expect((await json(paid)).symbol).toBe("WIF");

    // A flood of first requests for other symbols, each from its own client: they take the other slot in
    // turn (a warm-up may evict a warm-up), never WIF's.
    const flood = ["TIA", "SEI", "TON", "DOT", "UNI", "NEAR"];
    for (const [k, symbol] of flood.entries()) {
      expect((await get(`/cvd/${symbol}`, `10.2.0.${k + 1}`)).status, symbol).toBe(202);
      expect(onDemand()).toContain("WIF");
    }

    // A second caller pays per minute for a CVD stream of INJ (the other slot): its first debited minute
    // counts as paid use too.
    const payer = stack.payers[2]!;
    const topUp = await payWith(2)(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "1" }) });
    expect(topUp.status).toBe(200);
    const streamUrl = `${stack.url}/stream/cvd/INJ`;
    const stream = await fetch(streamUrl, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer.privateKey, streamUrl) } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = "";
    while (!text.includes("event: debit")) text += Buffer.from((await reader.read()).value ?? []).toString();
    expect(onDemand()).toEqual(expect.arrayContaining(["WIF", "INJ"]));

    // Both slots are paid for: a warm-up of a new symbol is refused, free, and evicts nothing.
    const before = await stack.balanceOf(stack.payers[3]!.address);
    for (const [k, symbol] of ["LTC", "ATOM", "ADA"].entries()) {
      const res = await payWith(3)(`${stack.url}/cvd/${symbol}`, { headers: from(`10.3.0.${k + 1}`) });
      expect(res.status, symbol).toBe(503);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(60);
      expect(res.headers.get("payment-required")).toBeNull();
      expect((await json(res)).error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", details: { reason: "on_demand_streams_in_paid_use", max_on_demand: 2 } });
    }
    expect(await stack.balanceOf(stack.payers[3]!.address)).toBe(before);
    expect(onDemand()).toEqual(expect.arrayContaining(["WIF", "INJ"]));
    expect(onDemand()).not.toContain("LTC");

    // The paying callers still get data, not a warm-up.
    const again = await pay(`${stack.url}/cvd/WIF?period=4h`);
    expect(again.status).toBe(200);
    expect((await json(again)).symbol).toBe("WIF");
    expect(stack.service.live.limits.open).toBe(1);
    await reader.cancel();
  });
});
