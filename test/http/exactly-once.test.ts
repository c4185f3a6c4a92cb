import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { json } from "../helpers/json.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { header, paymentRequired, signPayment } from "../helpers/pay.js";

const { state, counter, creator } = paidTestTools();

type SettleMode = "normal" | "fail" | "lose-answer" | "late" | "hold";

describe("exactly-once payments", () => {
  let stack: OfflineStack;
  let mode: SettleMode = "normal";
  const late: Array<Promise<unknown>> = [];
  /** Transfers held back in `hold` mode: the test lands them when it chooses. */
  const held: Array<() => Promise<unknown>> = [];
  const landHeld = () => Promise.all(held.splice(0).map((land) => land()));
  const payer = (i = 0) => stack.payers[i]!;

  beforeAll(async () => {
    stack = await startOfflineStack({
      tools: [...TOOLS, counter, creator],
      env: { RATE_LIMIT_PER_MIN: "100000", RECONCILE_WINDOW_MS: "1500" },
      wrapFacilitator: (f): FacilitatorClient => ({
        verify: (p, r) => f.verify(p, r),
        getSupported: () => f.getSupported(),
        settle: async (p, r) => {
          if (mode === "fail") return { success: false, errorReason: "injected_settle_failure", transaction: "", network: r.network };
          if (mode === "lose-answer") {
            await f.settle(p, r); // the transfer happens, but the answer is lost
            throw new Error("facilitator settle timed out");
          }
          if (mode === "hold") {
            // the answer is lost and the transfer lands when the test says so
            held.push(() => f.settle(p, r));
            throw new Error("facilitator settle timed out");
          }
          if (mode === "late") {
            // the transfer lands after the service gave up waiting
            late.push(new Promise((done) => setTimeout(() => void f.settle(p, r).then(done, done), 2500)));
            throw new Error("facilitator settle timed out");
          }
          return f.settle(p, r);
        },
      }),
    });
  });
  afterAll(async () => {
    await Promise.all(late);
    await stack?.close();
  });
  beforeEach(() => {
    mode = "normal";
  });

  it("runs the handler once and transfers once for 20 concurrent requests with one authorization", async () => {
    const url = `${stack.url}/test/counter/burst`;
    const sig = header(await signPayment(await paymentRequired(url), payer(0).privateKey));
    const before = await stack.balanceOf(payer(0).address);
    const runsBefore = state.runs;
    const responses = await Promise.all(Array.from({ length: 20 }, () => fetch(url, { headers: { "payment-signature": sig } })));
    // One runs; the others are refused while it is in use, or, once it is settled, get its kept answer again.
    expect(responses.every((r) => r.status === 200 || r.status === 402)).toBe(true);
    const answers = await Promise.all(responses.filter((r) => r.status === 200).map((r) => json(r)));
    expect(answers.length).toBeGreaterThanOrEqual(1);
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(state.runs - runsBefore).toBe(1);
    expect(await stack.balanceOf(payer(0).address)).toBe(before - 20_000n);
  });

  it("reconciles a settlement whose answer was lost: one charge, data released once", async () => {
    mode = "lose-answer";
    const url = `${stack.url}/test/counter/lost`;
    const sig = header(await signPayment(await paymentRequired(url), payer(1).privateKey));
    const before = await stack.balanceOf(payer(1).address);
    const res = await fetch(url, { headers: { "payment-signature": sig } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ label: "lost" });
    const receipt = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(receipt).toMatchObject({ success: true, payer: payer(1).address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await stack.balanceOf(payer(1).address)).toBe(before - 20_000n);
    mode = "normal";
    // The same payment again (its answer lost on the way): the same answer, no new charge.
    const again = await fetch(url, { headers: { "payment-signature": sig } });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ label: "lost" });
    expect(await stack.balanceOf(payer(1).address)).toBe(before - 20_000n);
  });

  it("withholds the data while a settlement is unconfirmed, then releases it once to the retry", async () => {
    mode = "late";
    const url = `${stack.url}/test/counter/late`;
    const sig = header(await signPayment(await paymentRequired(url), payer(2).privateKey));
    const before = await stack.balanceOf(payer(2).address);
    const runsBefore = state.runs;
    const first = await fetch(url, { headers: { "payment-signature": sig } });
    expect(first.status).toBe(502);
    expect(first.headers.get("retry-after")).not.toBeNull();
    expect((await json(first)).label).toBeUndefined();
    await Promise.all(late);
    mode = "normal";
    const retry = await fetch(url, { headers: { "payment-signature": sig } });
    expect(retry.status).toBe(200);
    expect(await json(retry)).toEqual({ label: "late", run: runsBefore + 1 });
    expect(state.runs).toBe(runsBefore + 1);
    expect(await stack.balanceOf(payer(2).address)).toBe(before - 20_000n);
    // Released again to the same payment for the same request (kept), never run again.
    const again = await fetch(url, { headers: { "payment-signature": sig } });
    expect(await json(again)).toEqual({ label: "late", run: runsBefore + 1 });
    expect(state.runs).toBe(runsBefore + 1);
  });

  it("releases an answer held for an unconfirmed settlement to exactly one of many concurrent retries", async () => {
    const url = `${stack.url}/test/counter/held`;
    const sig = header(await signPayment(await paymentRequired(url), payer(7).privateKey));
    const before = await stack.balanceOf(payer(7).address);
    const runsBefore = state.runs;
    mode = "hold";
    expect((await fetch(url, { headers: { "payment-signature": sig } })).status).toBe(502);
    mode = "normal";
    await landHeld();
    const retries = await Promise.all(Array.from({ length: 6 }, () => fetch(url, { headers: { "payment-signature": sig } })));
    // One reconciles and takes the held answer; the others are refused while it does, or get the same answer kept.
    expect(retries.every((r) => r.status === 200 || r.status === 402)).toBe(true);
    for (const ok of retries.filter((r) => r.status === 200)) expect(await json(ok)).toEqual({ label: "held", run: runsBefore + 1 });
    expect(state.runs).toBe(runsBefore + 1);
    expect(await stack.balanceOf(payer(7).address)).toBe(before - 20_000n);
  });

  it("resumes a settlement left unknown for a request with a payment identifier: answered once, then replayed", async () => {
    const url = `${stack.url}/test/counter/held-id`;
    const id = generatePaymentId("test_");
    const signWithId = async () => {
      const pr = await paymentRequired(url);
      return header(await signPayment({ ...pr, extensions: appendPaymentIdentifierToExtensions(pr.extensions ?? {}, id) }, payer(8).privateKey));
    };
    const sig = await signWithId();
    const before = await stack.balanceOf(payer(8).address);
    const runsBefore = state.runs;
    mode = "hold";
    expect((await fetch(url, { headers: { "payment-signature": sig } })).status).toBe(502);
    mode = "normal";
    // Still unconfirmed: the identifier's request is in progress, not lost.
    expect((await fetch(url, { headers: { "payment-signature": sig } })).status).toBe(502);
    await landHeld();
    const retry = await fetch(url, { headers: { "payment-signature": sig } });
    expect(retry.status).toBe(200);
    const body = await json(retry);
    expect(body).toEqual({ label: "held-id", run: runsBefore + 1 });
    // The identifier now holds the answer: a new payment with it is answered from the ledger, not charged.
    const replay = await fetch(url, { headers: { "payment-signature": await signWithId() } });
    expect(replay.status).toBe(200);
    expect(await json(replay)).toEqual(body);
    expect(state.runs).toBe(runsBefore + 1);
    expect(await stack.balanceOf(payer(8).address)).toBe(before - 20_000n);
  });

  it("answers a retry with the same payment identifier and request from the ledger, charging once", async () => {
    const url = `${stack.url}/test/counter/idem`;
    const id = generatePaymentId("test_");
    const signWithId = async () => {
      const pr = await paymentRequired(url);
      const p: PaymentPayload = await signPayment({ ...pr, extensions: appendPaymentIdentifierToExtensions(pr.extensions ?? {}, id) }, payer(3).privateKey);
      return header(p);
    };
    const before = await stack.balanceOf(payer(3).address);
    const first = await fetch(url, { headers: { "payment-signature": await signWithId() } });
    expect(first.status).toBe(200);
    const body = await json(first);
    const retry = await fetch(url, { headers: { "payment-signature": await signWithId() } });
    expect(retry.status).toBe(200);
    expect(await json(retry)).toEqual(body);
    expect(await stack.balanceOf(payer(3).address)).toBe(before - 20_000n);

    const pr = await paymentRequired(`${stack.url}/test/counter/other`);
    const other = header(await signPayment({ ...pr, extensions: appendPaymentIdentifierToExtensions(pr.extensions ?? {}, id) }, payer(3).privateKey));
    const conflict = await fetch(`${stack.url}/test/counter/other`, { headers: { "payment-signature": other } });
    expect(conflict.status).toBe(409);
    expect(await json(conflict)).toMatchObject({ error: { code: "CONFLICT" } });
  });

  it("settles state-creating tools before the handler: a failed settlement creates nothing", async () => {
    const url = `${stack.url}/test/things`;
    const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "a" }) };
    const pr = await paymentRequired(url, init);
    mode = "fail";
    const refused = await fetch(url, { ...init, headers: { ...init.headers, "payment-signature": header(await signPayment(pr, payer(4).privateKey)) } });
    expect(refused.status).toBe(402);
    expect(state.created).toBe(0);
    mode = "normal";
    const before = await stack.balanceOf(payer(4).address);
    const ok = await fetch(url, { ...init, headers: { ...init.headers, "payment-signature": header(await signPayment(pr, payer(4).privateKey)) } });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({ id: 1 });
    expect(await stack.balanceOf(payer(4).address)).toBe(before - 30_000n);
  });

  it("owes a state-creating request whose handler failed after the upfront charge: the same payment completes it once", async () => {
    const url = `${stack.url}/test/things`;
    const post = (name: string, sig: string) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", "payment-signature": sig }, body: JSON.stringify({ name }) });
    const pr = await paymentRequired(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "owed" }) });
    const sig = header(await signPayment(pr, payer(5).privateKey));
    const before = await stack.balanceOf(payer(5).address);
    state.failCreates = 2;
    const failed = await post("owed", sig);
    expect(failed.status).toBe(503);
    expect((await json(failed)).error.message).toContain("send the same request with the same payment again");
    expect(await stack.balanceOf(payer(5).address)).toBe(before - 30_000n);
    // Failing again keeps the run owed; another request cannot use it (409, nothing charged).
    expect((await post("owed", sig)).status).toBe(503);
    expect((await post("other", sig)).status).toBe(409);
    const createdBefore = state.created;
    const done = await post("owed", sig);
    expect(done.status).toBe(200);
    expect(await json(done)).toEqual({ id: createdBefore + 1 });
    expect(decodePaymentResponseHeader(done.headers.get("payment-response")!).success).toBe(true);
    // Paid once, run once: the same payment gets the same answer again, and creates nothing more.
    const again = await post("owed", sig);
    expect(await json(again)).toEqual({ id: createdBefore + 1 });
    expect(state.created).toBe(createdBefore + 1);
    expect(await stack.balanceOf(payer(5).address)).toBe(before - 30_000n);
  });

  it("reconciles a state-creating request whose upfront settlement landed after the service gave up: the same payment runs it once after confirmation", async () => {
    const url = `${stack.url}/test/things`;
    const post = (name: string, sig: string) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", "payment-signature": sig }, body: JSON.stringify({ name }) });
    const pr = await paymentRequired(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "lost" }) });
    const sig = header(await signPayment(pr, payer(6).privateKey));
    const before = await stack.balanceOf(payer(6).address);
    const createdBefore = state.created;
    // The transfer lands 2.5 s later, after the 1.5 s reconciliation window: the outcome is unknown.
    mode = "late";
    const lost = await post("lost", sig);
    mode = "normal";
    expect(lost.status).toBe(502);
    expect(state.created).toBe(createdBefore);
    await Promise.all(late);
    expect(await stack.balanceOf(payer(6).address)).toBe(before - 30_000n);
    // The retry with the same payment finds the transfer confirmed and runs the request, once.
    const done = await post("lost", sig);
    expect(done.status).toBe(200);
    expect(state.created).toBe(createdBefore + 1);
    expect(await json(await post("lost", sig))).toEqual(await json(done));
    expect(state.created).toBe(createdBefore + 1);
    expect(await stack.balanceOf(payer(6).address)).toBe(before - 30_000n);
  });

  it("quotes the exact requirements a request would get, without running it", async () => {
    const path = "/api/v1/market/aptos/history?days=14";
    const runsBefore = stack.sim.faults.requestCount("coingecko");
    const quote = await json(await fetch(`${stack.url}/api/v1/quote?path=${encodeURIComponent(path)}`));
    expect(quote).toMatchObject({ tool: "cex_market_history", price_usd: "0.01", charged: true, cache_ttl_sec: 300 });
    const live = await paymentRequired(`${stack.url}${path}`);
    expect(quote.x402.payment_required.accepts).toEqual(live.accepts);
    expect(quote.mpp.challenges.length).toBeGreaterThan(0);
    expect(stack.sim.faults.requestCount("coingecko")).toBe(runsBefore);
    expect(quote).not.toHaveProperty("interim_possible");
    const cvdQuote = await json(await fetch(`${stack.url}/api/v1/quote?path=/cvd/BTC`));
    expect(cvdQuote).toMatchObject({ tool: "cvd", charged: true, interim_possible: expect.stringContaining("202") });
    expect((await fetch(`${stack.url}/api/v1/quote?path=${encodeURIComponent("/api/v1/market/aptos/history?days=5")}`)).status).toBe(400);
    expect((await fetch(`${stack.url}/api/v1/quote?path=${encodeURIComponent("/api/v1/market/nope")}`)).status).toBe(404);
    expect((await fetch(`${stack.url}/api/v1/quote?path=/nowhere`)).status).toBe(404);
    expect(await json(await fetch(`${stack.url}/api/v1/quote?path=/api/v1/status`))).toMatchObject({ charged: false, reason: "free_tool" });
    // POST: quoted without the body (the price does not depend on it), or validated with it.
    const alertQuote = (body?: unknown) =>
      fetch(
        `${stack.url}/api/v1/quote?path=/liquidation/alert&method=POST${body === undefined ? "" : `&body=${encodeURIComponent(typeof body === "string" ? body : JSON.stringify(body))}`}`,
      );
    expect(await json(await alertQuote())).toMatchObject({ tool: "liquidation_alert_create", price_usd: "0.06", charged: true, input_checked: false });
    expect(await json(await alertQuote({ symbol: "BTC", webhook_url: "https://93.184.215.14/hook" }))).toMatchObject({ input_checked: true, charged: true });
    expect((await alertQuote({ symbol: "BTC", webhook_url: "http://93.184.215.14/hook" })).status).toBe(400);
    expect((await alertQuote({ symbol: "BTC", webhook_url: "https://10.0.0.1/hook" })).status).toBe(400);
    expect((await alertQuote("not json")).status).toBe(400);
  });
});

describe("facilitator failover", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    // The first facilitator refuses connections (a port just freed); the in-process one answers.
    const probe = createServer().listen(0, "127.0.0.1");
    await new Promise((r) => probe.once("listening", r));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    stack = await startOfflineStack({ env: { FACILITATOR: `http://127.0.0.1:${closedPort},self` } });
  });
  afterAll(() => stack?.close());

  it("uses the second facilitator when the first is down", async () => {
    const before = await stack.balanceOf(stack.payers[5]!.address);
    const good = `${stack.url}/api/v1/market/the-open-network`;
    const paid = await fetch(good, { headers: { "payment-signature": header(await signPayment(await paymentRequired(good), stack.payers[5]!.privateKey)) } });
    expect(paid.status).toBe(200);
    expect(await stack.balanceOf(stack.payers[5]!.address)).toBe(before - 5000n);
  });
});
