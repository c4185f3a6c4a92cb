import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentRequired } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublishedKey } from "../../src/payments/receipts/keys.js";
import { parseSavedAnswer, verifySavedAnswer } from "../../src/payments/receipts/verify.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { json } from "../helpers/json.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { header, paymentRequired, signPayment } from "../helpers/pay.js";
import { savedResponse } from "../helpers/saved-response.js";

const { state, counter, creator } = paidTestTools();

/** `test_counter` costs 0.02 USD, `test_create` 0.03 USD (USDC atomic units). */
const COUNTER_ATOMIC = 20_000n;
const CREATE_ATOMIC = 30_000n;

/**
 * An answer held for a settlement of unknown outcome, an idempotent record and an owed run belong to the
 * request that was paid (method, URL with its query, and input): a retry of another request with the same
 * payment is a 409 that charges nothing and leaves the answer held, and the paid request's answer carries a
 * receipt naming that request. Real HTTP, the official x402 client's signatures, anvil.
 */
describe("held and stored answers are bound to their request", () => {
  let stack: OfflineStack;
  let keys: PublishedKey[];
  /** While true, the facilitator's answer is lost and the transfer waits until the test lands it. */
  let holding = false;
  const held: Array<() => Promise<unknown>> = [];
  const landHeld = () => Promise.all(held.splice(0).map((land) => land()));
  const payer = (i: number) => stack.payers[i]!;

  beforeAll(async () => {
    stack = await startOfflineStack({
      tools: [...TOOLS, counter, creator],
      env: { RATE_LIMIT_PER_MIN: "100000", RECONCILE_WINDOW_MS: "300" },
      wrapFacilitator: (f): FacilitatorClient => ({
        verify: (p, r) => f.verify(p, r),
        getSupported: () => f.getSupported(),
        settle: async (p, r) => {
          if (!holding) return f.settle(p, r);
          held.push(() => f.settle(p, r));
          throw new Error("facilitator settle timed out");
        },
      }),
    });
    keys = ((await json(await fetch(`${stack.url}/.well-known/x402.json`))) as { receipts: { keys: PublishedKey[] } }).receipts.keys;
  });
  afterAll(() => stack?.close());

  /** The first request with `sig` gets a 502: its settlement's outcome is unknown and its answer held. */
  const unknownOutcome = async (send: () => Promise<Response>) => {
    holding = true;
    try {
      const first = await send();
      expect(first.status).toBe(502);
    } finally {
      holding = false;
    }
  };

  /** What a saved paid answer's receipt and content signature name, verified against the published keys. */
  const receiptOf = async (res: Response) => {
    const v = await verifySavedAnswer(parseSavedAnswer(await savedResponse(res)), keys);
    expect(v.ok, JSON.stringify(v.checks)).toBe(true);
    return { resourceUrl: v.receipt?.resourceUrl, request: v.request };
  };

  const expectConflict = async (res: Response, paidUrl: string) => {
    expect(res.status).toBe(409);
    const { error } = (await json(res)) as { error: { code: string; message: string } };
    expect(error.code).toBe("CONFLICT");
    expect(error.message).toContain(`GET ${paidUrl}`);
    expect(error.message).toContain("nothing was charged");
  };

  it("a retry with the same payment on another URL gets a 409 and nothing; the paid URL gets its answer and a receipt naming it", async () => {
    const btc = `${stack.url}/test/counter/btc`;
    const eth = `${stack.url}/test/counter/eth`;
    const sig = header(await signPayment(await paymentRequired(btc), payer(0).privateKey));
    const before = await stack.balanceOf(payer(0).address);
    const runs = state.runs;
    await unknownOutcome(() => fetch(btc, { headers: { "payment-signature": sig } }));

    // Still unconfirmed, then confirmed: another request never gets the held answer, nor reconciles it.
    await expectConflict(await fetch(eth, { headers: { "payment-signature": sig } }), btc);
    await landHeld();
    await expectConflict(await fetch(eth, { headers: { "payment-signature": sig } }), btc);
    expect(await stack.balanceOf(payer(0).address)).toBe(before - COUNTER_ATOMIC);

    const paid = await fetch(btc, { headers: { "payment-signature": sig } });
    expect(paid.status).toBe(200);
    expect(await receiptOf(paid.clone())).toEqual({ resourceUrl: btc, request: { method: "GET", targetUri: btc } });
    expect(await json(paid)).toEqual({ label: "btc", run: runs + 1 });
    expect(state.runs).toBe(runs + 1);
    expect(await stack.balanceOf(payer(0).address)).toBe(before - COUNTER_ATOMIC);
  });

  it("the same input under another URL (an extra query parameter) is another request: 409, and the receipt names the URL that was run", async () => {
    const url = `${stack.url}/test/counter/query`;
    const other = `${url}?utm=1`;
    const sig = header(await signPayment(await paymentRequired(url), payer(1).privateKey));
    const before = await stack.balanceOf(payer(1).address);
    await unknownOutcome(() => fetch(url, { headers: { "payment-signature": sig } }));
    await landHeld();
    await expectConflict(await fetch(other, { headers: { "payment-signature": sig } }), url);
    const paid = await fetch(url, { headers: { "payment-signature": sig } });
    expect(paid.status).toBe(200);
    expect((await receiptOf(paid)).resourceUrl).toBe(url);
    expect(await stack.balanceOf(payer(1).address)).toBe(before - COUNTER_ATOMIC);
  });

  it("with a payment identifier: the held answer and then the stored one go only to the request that was paid", async () => {
    const url = `${stack.url}/test/counter/with-id`;
    const other = `${url}?x=1`;
    const id = generatePaymentId("test_");
    const signWithId = async () => {
      const pr: PaymentRequired = await paymentRequired(url);
      return header(await signPayment({ ...pr, extensions: appendPaymentIdentifierToExtensions(pr.extensions ?? {}, id) }, payer(2).privateKey));
    };
    const sig = await signWithId();
    const before = await stack.balanceOf(payer(2).address);
    const runs = state.runs;
    await unknownOutcome(() => fetch(url, { headers: { "payment-signature": sig } }));
    await landHeld();
    await expectConflict(await fetch(other, { headers: { "payment-signature": sig } }), url);

    const paid = await fetch(url, { headers: { "payment-signature": sig } });
    expect(paid.status).toBe(200);
    expect((await receiptOf(paid.clone())).resourceUrl).toBe(url);
    const body = await json(paid);
    expect(body).toEqual({ label: "with-id", run: runs + 1 });

    // The stored answer of the identifier: a new payment with it on another URL is a 409, on the paid URL a free replay.
    await expectConflict(await fetch(other, { headers: { "payment-signature": await signWithId() } }), url);
    const replay = await fetch(url, { headers: { "payment-signature": await signWithId() } });
    expect(replay.status).toBe(200);
    expect((await receiptOf(replay.clone())).resourceUrl).toBe(url);
    expect(await json(replay)).toEqual(body);
    expect(state.runs).toBe(runs + 1);
    expect(await stack.balanceOf(payer(2).address)).toBe(before - COUNTER_ATOMIC);
  });

  it("an owed upfront run goes only to the request that paid for it: another body is a 409, creates nothing", async () => {
    const url = `${stack.url}/test/things`;
    const post = (name: string, sig: string) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", "payment-signature": sig }, body: JSON.stringify({ name }) });
    const sig = header(
      await signPayment(
        await paymentRequired(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "mine" }) }),
        payer(3).privateKey,
      ),
    );
    const before = await stack.balanceOf(payer(3).address);
    const created = state.created;
    await unknownOutcome(() => post("mine", sig));
    await landHeld();
    // Pending (unknown outcome, now confirmed), then owed after a failed run: another body is refused both times.
    const other = await post("theirs", sig);
    expect(other.status).toBe(409);
    expect(((await json(other)) as { error: { code: string } }).error.code).toBe("CONFLICT");
    state.failCreates = 1;
    expect((await post("mine", sig)).status).toBe(503);
    expect((await post("theirs", sig)).status).toBe(409);
    expect(state.created).toBe(created);
    const done = await post("mine", sig);
    expect(done.status).toBe(200);
    expect(await json(done)).toEqual({ id: created + 1 });
    expect(await stack.balanceOf(payer(3).address)).toBe(before - CREATE_ATOMIC);
  });
});
