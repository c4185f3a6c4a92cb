import { x402Client } from "@x402/core/client";
import { extractReceiptFromResponse, verifyReceiptSignatureJWS, type JWSSignedReceipt } from "@x402/extensions/offer-receipt";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublishedKey } from "../../src/payments/receipts/keys.js";
import { parseSavedAnswer, verifySavedAnswer } from "../../src/payments/receipts/verify.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { savedResponse } from "../helpers/saved-response.js";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

describe("signed receipts on Solana-paid answers (local Solana VM)", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack({ solana: true, env: { RATE_LIMIT_PER_MIN: "10000" } });
  });
  afterAll(() => stack?.close());

  it("a Solana-paid answer carries a receipt naming the Solana payer, network and transaction, and a content signature", async () => {
    const sol = stack.solana!;
    const payer = sol.payers[1]!;
    const pay = wrapFetchWithPayment(fetch, new x402Client().register(SOLANA, new ExactSvmScheme(payer.signer, { rpcUrl: sol.rpc.url })));
    const url = `${stack.url}/api/v1/market/bitcoin`;
    const res = await pay(url);
    expect(res.status).toBe(200);
    const settle = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(settle.network).toBe(SOLANA);
    const keys = ((await (await fetch(`${stack.url}/.well-known/x402.json`)).json()) as { receipts: { keys: PublishedKey[] } }).receipts.keys;
    const receipt = extractReceiptFromResponse(res.clone()) as JWSSignedReceipt;
    expect(await verifyReceiptSignatureJWS(receipt, keys[0]!.jwk)).toMatchObject({ network: SOLANA, payer: payer.address, resourceUrl: url, transaction: settle.transaction });
    expect((await verifySavedAnswer(parseSavedAnswer(await savedResponse(res)), keys)).ok).toBe(true);
  });
});
