import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { SIGN_IN_WITH_X } from "@x402/extensions/sign-in-with-x";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solanaSiwxHeader } from "../../src/payments/credits/client.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { json } from "../helpers/json.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { header, paymentRequired } from "../helpers/pay.js";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const { counter } = paidTestTools();

describe("prepaid credits topped up from Solana, spent with a Sign-In-With-Solana proof", () => {
  let stack: OfflineStack;
  const payer = () => stack.solana!.payers[4]!;
  const withCredits = (url: string, init: RequestInit = {}) =>
    solanaSiwxHeader(payer().signer, url).then((h) => fetch(url, { ...init, headers: { ...init.headers, "SIGN-IN-WITH-X": h } }));

  beforeAll(async () => {
    stack = await startOfflineStack({ solana: true, tools: [...TOOLS, counter], env: { RATE_LIMIT_PER_MIN: "100000", CREDITS_REFUND: "on" } });
  });
  afterAll(() => stack?.close());

  it("the 402's SIWX challenge offers both chains (EIP-191 on Base, Ed25519 on Solana)", async () => {
    const res = await fetch(`${stack.url}/test/counter/x`);
    const pr = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
    expect((pr.extensions?.[SIGN_IN_WITH_X] as { supportedChains: unknown }).supportedChains).toEqual([
      { chainId: "eip155:8453", type: "eip191" },
      { chainId: SOLANA, type: "ed25519" },
    ]);
  });

  it("a Solana top-up is credited once to the Solana wallet (a replay of its payment credits nothing), then SIWS-signed calls are debited", async () => {
    const url = `${stack.url}/api/v1/credits`;
    const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "1" }) };
    const pr = await paymentRequired(url, init);
    const payment = await new x402Client().register(SOLANA, new ExactSvmScheme(payer().signer, { rpcUrl: stack.solana!.rpc.url })).createPaymentPayload(pr);
    expect(payment.accepted.network).toBe(SOLANA);
    const before = await stack.solana!.balanceOf(payer().address);
    const first = await fetch(url, { ...init, headers: { ...init.headers, "PAYMENT-SIGNATURE": header(payment) } });
    expect(first.status).toBe(200);
    // A Solana address is case-sensitive: the wallet is the payer's base58 address as it is.
    const firstBody = await json(first);
    expect(firstBody).toMatchObject({ wallet: payer().address, credited_now_usd: "1", balance_usd: "1" });
    expect(await stack.solana!.balanceOf(payer().address)).toBe(before - 1_000_000n);

    // The same payment again (an answer lost after settlement): the kept answer of the top-up, credited nothing more.
    const replay = await fetch(url, { ...init, headers: { ...init.headers, "PAYMENT-SIGNATURE": header(payment) } });
    expect(replay.status).toBe(200);
    expect(await json(replay)).toEqual(firstBody);
    expect(await stack.solana!.balanceOf(payer().address)).toBe(before - 1_000_000n);

    const call = await withCredits(`${stack.url}/test/counter/sol-1`);
    expect(call.status).toBe(200);
    expect(call.headers.get("x-credits-remaining")).toBe("0.98");
    const me = await withCredits(url);
    expect(me.status).toBe(200);
    expect(await json(me)).toMatchObject({ wallet: payer().address, balance_usd: "0.98", spent_usd: "0.02", credited_usd: "1" });
  });

  it("refuses a refund to a Solana wallet (refunds are sent on Base), leaving the balance", async () => {
    const res = await withCredits(`${stack.url}/api/v1/credits/refund`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(403);
    expect((await json(res)).error.message).toMatch(/Base only/);
  });
});
