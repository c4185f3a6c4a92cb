import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { extractOffersFromPaymentRequired, verifyReceiptSignatureJWS, type JWSSignedOffer, type JWSSignedReceipt } from "@x402/extensions/offer-receipt";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyReceiptMain } from "../../src/cli/verify-receipt.js";
import type { PublishedKey } from "../../src/payments/receipts/keys.js";
import { receiptPayloadOf } from "../../src/payments/receipts/receipt-payload.js";
import { parseSavedAnswer, verifySavedAnswer } from "../../src/payments/receipts/verify.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { json } from "../helpers/json.js";
import { siwxHeader } from "../helpers/siwx.js";
import { firstSseEvent } from "../helpers/sse-event.js";

/** A CLI run's exit code and output. */
async function cli(argv: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await verifyReceiptMain(argv, { stdout: (t) => void (out += t), stderr: (t) => void (out += t), env: {} });
  return { code, out };
}

/**
 * Offers (free, in every 402) and receipts are signed with the same key and the same JWS header: the
 * extension's `verifyReceiptSignatureJWS` accepts either. `marketgate verify-receipt` and the verification
 * behind it accept only what signs a receipt's payload, for a stream minute's receipt as for a paid answer's.
 */
describe("a signed offer is not a receipt", () => {
  let stack: OfflineStack;
  let keys: PublishedKey[];
  let dir: string;
  /** A signed offer from a 402, dressed as a receipt (the same JSON shape: format and JWS). */
  let offerAsReceipt: JWSSignedReceipt;
  /** A paid stream minute's `debit` event data, with its receipt. */
  let debit: { minute: number; receipt: JWSSignedReceipt };
  const file = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };

  beforeAll(async () => {
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000", CREDITS_MIN_TOP_UP_USD: "0.10" } });
    keys = ((await json(await fetch(`${stack.url}/.well-known/x402.json`))) as { receipts: { keys: PublishedKey[] } }).receipts.keys;
    dir = mkdtempSync(join(tmpdir(), "receipt-type-"));

    const unpaid = await fetch(`${stack.url}/api/v1/market/cardano`);
    expect(unpaid.status).toBe(402);
    const offer = extractOffersFromPaymentRequired((await unpaid.json()) as PaymentRequired)[0] as JWSSignedOffer;
    offerAsReceipt = { format: "jws", signature: offer.signature };

    // A stream minute paid from credits (topped up with the official x402 client) and its debit event.
    const payer = stack.payers[4]!;
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))));
    const topUp = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "0.5" }) });
    expect(topUp.status).toBe(200);
    const url = `${stack.url}/stream/liquidations?symbol=BTC`;
    const abort = new AbortController();
    const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer.privateKey, url) }, signal: abort.signal });
    expect(res.status).toBe(200);
    debit = await firstSseEvent<typeof debit>(res, "debit", abort);
  });
  afterAll(() => stack?.close());

  it("the extension's verifier alone accepts the offer: its payload is what tells them apart", async () => {
    const signed = await verifyReceiptSignatureJWS(offerAsReceipt, keys[0]!.jwk);
    expect(signed).toMatchObject({ resourceUrl: `${stack.url}/api/v1/market/cardano`, payTo: stack.operator.address });
    expect(() => receiptPayloadOf(signed)).toThrow(/signed offer .*scheme.*not a receipt/);
    expect(receiptPayloadOf(await verifyReceiptSignatureJWS(debit.receipt, keys[0]!.jwk))).toMatchObject({
      version: 1,
      resourceUrl: `${stack.url}/stream/liquidations?symbol=BTC`,
    });
  });

  it("verify-receipt refuses an offer presented as a stream minute's receipt, and verifies the real one", async () => {
    const real = await cli([file("debit.json", debit)]);
    expect(real.code, real.out).toBe(0);
    expect(real.out).toContain("it signs a receipt, not an offer");
    expect(real.out).toContain(`receipt: payer ${stack.payers[4]!.address.toLowerCase()}`);
    expect(real.out).toContain("\nverified");

    const forged = await cli([file("forged-debit.json", { ...debit, receipt: offerAsReceipt })]);
    expect(forged.code, forged.out).toBe(1);
    expect(forged.out).toMatch(/FAIL receipt_signature: this is a signed offer/);
    expect(forged.out).toContain("NOT verified");
    // The bare offer, with the key given: the same refusal.
    const bare = await cli([file("offer.json", offerAsReceipt), "--key", keys[0]!.jwk.x]);
    expect(bare.code, bare.out).toBe(1);
    expect(bare.out).toMatch(/signed offer/);
  });

  it("the verification names an offer for what it is, and shows no receipt for it", async () => {
    const v = await verifySavedAnswer(parseSavedAnswer(Buffer.from(JSON.stringify(offerAsReceipt))), keys);
    expect(v.ok).toBe(false);
    expect(v.checks).toEqual([expect.objectContaining({ name: "receipt_signature", ok: false, detail: expect.stringMatching(/signed offer/) })]);
    expect(v.receipt).toBeUndefined();
    expect(v.resourceUrl).toBe(`${stack.url}/api/v1/market/cardano`);
    // In place of an MCP result's receipt, the receipt check itself refuses it (not only the content signature).
    const mcp = { content: [{ type: "text", text: "{}" }], _meta: { "marketgate/receipt": { receipt: offerAsReceipt, method: "POST", target_uri: `${stack.url}/mcp` } } };
    const inMcp = await verifySavedAnswer(parseSavedAnswer(Buffer.from(JSON.stringify(mcp))), keys);
    expect(inMcp.checks.find((c) => c.name === "receipt_signature")).toMatchObject({ ok: false, detail: expect.stringMatching(/signed offer/) });
  });
});
