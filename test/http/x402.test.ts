import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { FacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { header, paymentRequired, signPayment, signV1 } from "../helpers/pay.js";
import { json } from "../helpers/json.js";

const ATTACKER = "0x000000000000000000000000000000000000dEaD";

describe("x402 over HTTP, paid on the local chain", () => {
  let stack: OfflineStack;
  let failSettle = false;
  const upstreamCalls = () => stack.sim.faults.requestCount("coingecko");
  const payer = () => stack.payers[0]!;

  beforeAll(async () => {
    stack = await startOfflineStack({
      env: { RATE_LIMIT_PER_MIN: "10000" },
      wrapFacilitator: (f): FacilitatorClient => ({
        verify: (p, r) => f.verify(p, r),
        getSupported: () => f.getSupported(),
        settle: (p, r) => (failSettle ? Promise.resolve({ success: false, errorReason: "injected_settle_failure", transaction: "", network: r.network }) : f.settle(p, r)),
      }),
    });
  });
  afterAll(() => stack?.close());
  beforeEach(() => {
    failSettle = false;
    stack.sim.faults.clear();
  });

  it("answers 402 with v2 requirements in PAYMENT-REQUIRED, and the v1 view in the body only", async () => {
    const res = await fetch(`${stack.url}/api/v1/prices?symbols=btc,eth`);
    expect(res.status).toBe(402);
    const pr = (await paymentRequired(`${stack.url}/api/v1/prices?symbols=btc,eth`)).accepts[0]!;
    expect(pr).toMatchObject({ scheme: "exact", network: "eip155:8453", amount: "5000", asset: stack.usdcAddress, payTo: stack.operator.address });
    // No copy of the v1 view in an X-PAYMENT response header (no x402 transport defines one; the header block
    // must fit a reverse proxy's buffer: test/http/header-block-size.test.ts).
    expect(res.headers.get("x-payment")).toBeNull();
    const body = await json(res);
    // The body is the v1 view plus how to pay from prepaid credits instead, and each requirement's real outputSchema.
    const { credits, ...v1Body } = body;
    expect(v1Body).toMatchObject({ x402Version: 1, error: "Payment required" });
    expect(body.accepts[0].outputSchema.output).toMatchObject({ type: "object" });
    expect(credits.top_up).toMatchObject({ method: "POST", path: "/api/v1/credits" });
    expect(body.accepts[0]).toMatchObject({ network: "base", maxAmountRequired: "5000", payTo: stack.operator.address, resource: `${stack.url}/api/v1/prices?symbols=btc,eth` });
    // Every header readable by a browser page (no answer allows credentials, so the wildcard holds).
    expect(res.headers.get("access-control-expose-headers")).toBe("*");
  });

  it("the official @x402/fetch client pays and balances move by exactly the price", async () => {
    const before = [await stack.balanceOf(payer().address), await stack.balanceOf(stack.operator.address)];
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer().privateKey))));
    const res = await pay(`${stack.url}/api/v1/market/bitcoin/history?days=30`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-cache")).toBe("MISS");
    const receipt = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(receipt).toMatchObject({ success: true, network: "eip155:8453", payer: payer().address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // One settlement header, the one a v2 client reads (the signed receipt inside it travels once).
    expect(res.headers.get("x-payment-response")).toBeNull();
    const body = await json(res);
    expect(body.data).toMatchObject({ id: "bitcoin", days: 30 });
    expect(body.data.prices.length).toBeGreaterThan(700);
    expect(await stack.balanceOf(payer().address)).toBe(before[0]! - 10_000n);
    expect(await stack.balanceOf(stack.operator.address)).toBe(before[1]! + 10_000n);
  });

  it("serves an identical request inside the TTL free, without a 402, marked X-Cache: HIT", async () => {
    const url = `${stack.url}/api/v1/market/solana`;
    const sig = header(await signPayment(await paymentRequired(url), payer().privateKey));
    expect((await fetch(url, { headers: { "payment-signature": sig } })).status).toBe(200);
    const balance = await stack.balanceOf(payer().address);
    const calls = upstreamCalls();
    const hit = await fetch(url);
    expect(hit.status).toBe(200);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    expect(hit.headers.get("payment-response")).toBeNull();
    expect((await json(hit)).data.id).toBe("solana");
    expect(upstreamCalls()).toBe(calls);
    expect(await stack.balanceOf(payer().address)).toBe(balance);
  });

  describe("rejects bad payments without running the handler or moving funds", () => {
    const cases: Array<[string, RegExp, (url: string) => Promise<string>]> = [
      [
        "a replayed authorization",
        /simulation_failed|nonce/,
        async () => {
          const first = `${stack.url}/api/v1/market/cardano`;
          const sig = header(await signPayment(await paymentRequired(first), payer().privateKey));
          expect((await fetch(first, { headers: { "payment-signature": sig } })).status).toBe(200);
          return sig;
        },
      ],
      [
        "an underpayment (signed for less, declaring the full price)",
        /value_mismatch/,
        async (url) => header(await signPayment(await paymentRequired(url), payer().privateKey, { signFor: (r) => ({ ...r, amount: "1000" }) })),
      ],
      [
        "an underpayment (declared and signed for less)",
        /No matching/,
        async (url) =>
          header(await signPayment(await paymentRequired(url), payer().privateKey, { signFor: (r) => ({ ...r, amount: "1000" }), declare: (r) => ({ ...r, amount: "1000" }) })),
      ],
      [
        "a payment to the wrong payTo",
        /recipient_mismatch/,
        async (url) => header(await signPayment(await paymentRequired(url), payer().privateKey, { signFor: (r) => ({ ...r, payTo: ATTACKER }) })),
      ],
      [
        "a payment on the wrong network",
        /No matching/,
        async (url) =>
          header(
            await signPayment(await paymentRequired(url), payer().privateKey, {
              signFor: (r) => ({ ...r, network: "eip155:84532" }),
              declare: (r) => ({ ...r, network: "eip155:84532" }),
            }),
          ),
      ],
      [
        "an expired authorization",
        /valid_before/,
        async (url) => header(await signPayment(await paymentRequired(url), payer().privateKey, { signFor: (r) => ({ ...r, maxTimeoutSeconds: 2 }) })),
      ],
      [
        "a forged signature",
        /signature/,
        async (url) => {
          const p = await signPayment(await paymentRequired(url), payer().privateKey);
          const sig = String(p.payload.signature);
          return header({ ...p, payload: { ...p.payload, signature: `${sig.slice(0, 10)}${sig[10] === "a" ? "b" : "a"}${sig.slice(11)}` } });
        },
      ],
      [
        "a signature by another key for the payer's authorization",
        /signature/,
        async (url) => {
          const mine = await signPayment(await paymentRequired(url), payer().privateKey);
          const theirs = await signPayment(await paymentRequired(url), stack.payers[1]!.privateKey);
          return header({ ...mine, payload: { ...mine.payload, signature: theirs.payload.signature } });
        },
      ],
    ];
    it.each(cases)("%s", async (_name, reason, makeSig) => {
      const url = `${stack.url}/api/v1/market/polkadot`;
      const sig = await makeSig(url);
      const balances = [await stack.balanceOf(payer().address), await stack.balanceOf(stack.payers[1]!.address)];
      const calls = upstreamCalls();
      const res = await fetch(url, { headers: { "payment-signature": sig } });
      expect(res.status).toBe(402);
      const body = await json(res);
      expect(body.error).toMatch(reason);
      expect(body.data).toBeUndefined();
      expect(upstreamCalls()).toBe(calls);
      expect([await stack.balanceOf(payer().address), await stack.balanceOf(stack.payers[1]!.address)]).toEqual(balances);
    });
  });

  it("does not charge when the handler fails (venue down)", async () => {
    stack.sim.faults.inject("coingecko", { kind: "server_error", status: 503 }, Infinity);
    const url = `${stack.url}/api/v1/market/chainlink`;
    const sig = header(await signPayment(await paymentRequired(url), payer().privateKey));
    const balance = await stack.balanceOf(payer().address);
    const res = await fetch(url, { headers: { "payment-signature": sig } });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).not.toBeNull();
    expect(await json(res)).toMatchObject({ error: { code: "UPSTREAM_UNAVAILABLE" } });
    expect(await stack.balanceOf(payer().address)).toBe(balance);
    stack.sim.faults.clear();
    // the authorization was never used, so the same payment still buys the answer
    const retry = await fetch(url, { headers: { "payment-signature": sig } });
    expect(retry.status).toBe(200);
    expect(await stack.balanceOf(payer().address)).toBe(balance - 5000n);
  });

  it("never releases data, nor caches it, when settlement fails", async () => {
    failSettle = true;
    const url = `${stack.url}/api/v1/market/uniswap`;
    const sig = header(await signPayment(await paymentRequired(url), payer().privateKey));
    const res = await fetch(url, { headers: { "payment-signature": sig } });
    expect(res.status).toBe(402);
    const text = await res.text();
    expect(text).not.toContain('uniswap","symbol');
    expect(JSON.parse(text).data).toBeUndefined();
    failSettle = false;
    const after = await fetch(url);
    expect(after.status).toBe(402);
    expect(after.headers.get("x-cache")).toBeNull();
  });

  it("accepts a v1 client's X-PAYMENT and X-PAYMENT-PROOF", async () => {
    for (const [name, id] of [
      ["x-payment", "optimism"],
      ["x-payment-proof", "arbitrum"],
    ] as const) {
      const url = `${stack.url}/api/v1/market/${id}`;
      const unpaid = await fetch(url);
      const proof = await signV1(await json(unpaid), payer().privateKey);
      const balance = await stack.balanceOf(payer().address);
      const res = await fetch(url, { headers: { [name]: proof } });
      expect(res.status).toBe(200);
      expect((await json(res)).data.id).toBe(id);
      expect(decodePaymentResponseHeader(res.headers.get("x-payment-response")!).success).toBe(true);
      expect(res.headers.get("payment-response")).toBeNull();
      expect(await stack.balanceOf(payer().address)).toBe(balance - 5000n);
    }
  });

  it("counts settled payments and revenue in /metrics", async () => {
    const m = await json(await fetch(`${stack.url}/metrics?format=json`));
    const settled = m.find((x: { name: string }) => x.name === "marketgate_payments_settled_total");
    const revenue = m.find((x: { name: string }) => x.name === "marketgate_revenue_usdc_total");
    expect(settled.values.some((v: { labels: { tool: string }; value: number }) => v.labels.tool === "cex_market_history" && v.value >= 1)).toBe(true);
    expect(revenue.values.find((v: { labels: { tool: string } }) => v.labels.tool === "cex_market_history").value).toBeCloseTo(0.01, 6);
  });
});
