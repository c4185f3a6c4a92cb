import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import type { KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientMain } from "../../src/cli/client.js";
import { devKeyFromLabel } from "../../src/payments/local-chain/solana/keys.js";
import { SOLANA_USDC_MINT } from "../../src/payments/local-chain/solana/index.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { json } from "../helpers/json.js";
import { connectInMemory } from "../helpers/mcp.js";
import { header, paymentRequired } from "../helpers/pay.js";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const textOf = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text);

describe("x402 on Solana, settled on the local Solana VM", () => {
  let stack: OfflineStack;
  const sol = () => stack.solana!;
  /** The official @x402/svm client for `signer`, reading the mint and blockhash from the local RPC. */
  const svmClient = (signer: KeyPairSigner) => new x402Client().register(SOLANA, new ExactSvmScheme(signer, { rpcUrl: sol().rpc.url }));
  const upstreamCalls = () => stack.sim.faults.requestCount("coingecko");

  beforeAll(async () => {
    stack = await startOfflineStack({ solana: true, env: { RATE_LIMIT_PER_MIN: "10000" } });
  });
  afterAll(() => stack?.close());

  it("lists two accepts: Base exact first, then Solana exact (USDC mint, PAY_TO_SOLANA, the facilitator's fee payer)", async () => {
    const pr = await paymentRequired(`${stack.url}/api/v1/prices?symbols=btc`);
    expect(pr.accepts).toHaveLength(2);
    expect(pr.accepts[0]).toMatchObject({ scheme: "exact", network: "eip155:8453", payTo: stack.operator.address, amount: "5000" });
    expect(pr.accepts[1]).toMatchObject({
      scheme: "exact",
      network: SOLANA,
      asset: SOLANA_USDC_MINT,
      payTo: sol().payTo.address,
      amount: "5000",
      extra: { feePayer: sol().feePayer.address },
    });
    // The v1 view in the body names it as v1 clients do.
    const body = await json(await fetch(`${stack.url}/api/v1/prices?symbols=btc`));
    expect(body.accepts.map((a: { network: string }) => a.network)).toEqual(["base", "solana"]);
  });

  it("the official @x402/fetch client with the @x402/svm scheme pays an HTTP endpoint; balances move by exactly the price", async () => {
    const payer = sol().payers[0]!;
    const before = [await sol().balanceOf(payer.address), await sol().balanceOf(sol().payTo.address)];
    const pay = wrapFetchWithPayment(fetch, svmClient(payer.signer));
    const res = await pay(`${stack.url}/api/v1/market/bitcoin/history?days=30`);
    expect(res.status).toBe(200);
    const receipt = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(receipt).toMatchObject({ success: true, network: SOLANA, payer: payer.address });
    expect(receipt.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect((await json(res)).data).toMatchObject({ id: "bitcoin", days: 30 });
    expect(await sol().balanceOf(payer.address)).toBe(before[0]! - 10_000n);
    expect(await sol().balanceOf(sol().payTo.address)).toBe(before[1]! + 10_000n);
  });

  it("refuses a replayed Solana payment (claimed once in the ledger) without calling the venue or charging again", async () => {
    const payer = sol().payers[1]!;
    const url = `${stack.url}/api/v1/market/ethereum`;
    const pr = await paymentRequired(url);
    const payment = await svmClient(payer.signer).createPaymentPayload(pr);
    const first = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(payment) } });
    expect(first.status).toBe(200);
    const afterFirst = await sol().balanceOf(payer.address);
    const calls = upstreamCalls();
    // Same signed transaction, another request (a cache miss): refused before the facilitator or the venue.
    const replay = await fetch(`${stack.url}/api/v1/market/solana`, { headers: { "PAYMENT-SIGNATURE": header(payment) } });
    expect(replay.status).toBe(402);
    expect((await json(replay)).error).toBe("duplicate_settlement");
    expect(upstreamCalls()).toBe(calls);
    expect(await sol().balanceOf(payer.address)).toBe(afterFirst);
  });

  it("refuses a transfer of the wrong amount (signed for less than the price)", async () => {
    const payer = sol().payers[2]!;
    const url = `${stack.url}/api/v1/market/cardano`;
    const pr = await paymentRequired(url);
    const solReq = pr.accepts.find((a) => a.network === SOLANA)!;
    const underpaid = await svmClient(payer.signer).createPaymentPayload({ ...pr, accepts: [{ ...solReq, amount: "1" }] });
    const before = await sol().balanceOf(payer.address);
    const res = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header({ ...underpaid, accepted: solReq }) } });
    expect(res.status).toBe(402);
    expect((await json(res)).error).toBe("invalid_exact_svm_payload_amount_mismatch");
    expect(await sol().balanceOf(payer.address)).toBe(before);
  });

  it("refuses a buyer without USDC (the facilitator's simulation fails), charging nothing", async () => {
    const broke = await devKeyFromLabel("unfunded test buyer");
    const url = `${stack.url}/api/v1/market/dogecoin`;
    const pr = await paymentRequired(url);
    const payment = await svmClient(broke.signer).createPaymentPayload(pr);
    const res = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(payment) } });
    expect(res.status).toBe(402);
    expect((await json(res)).error).toMatch(/simulation_failed/);
    expect(await sol().balanceOf(broke.address)).toBe(0n);
  });

  it("refuses a payload that is not a signed Solana transfer before anything reads it", async () => {
    const url = `${stack.url}/api/v1/market/bitcoin`;
    const pr = await paymentRequired(url);
    const solReq = pr.accepts.find((a) => a.network === SOLANA)!;
    const res = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header({ x402Version: 2, accepted: solReq, payload: { transaction: "AAAA" } }) } });
    expect(res.status).toBe(402);
    expect((await json(res)).error).toMatch(/^invalid_payload: payload\.transaction: /);
  });

  it("a payment identifier makes a Solana-paid retry idempotent: a new payment with the same id gets the stored answer, charged once", async () => {
    const payer = sol().payers[4]!;
    const url = `${stack.url}/api/v1/market/tron`;
    const withId = (p: PaymentPayload): PaymentPayload => ({
      ...p,
      extensions: appendPaymentIdentifierToExtensions({ [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) }, "pay_solana_retry_0001"),
    });
    const pr = await paymentRequired(url);
    const before = await sol().balanceOf(payer.address);
    const first = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(withId(await svmClient(payer.signer).createPaymentPayload(pr))) } });
    expect(first.status).toBe(200);
    const body = await json(first);
    // A lost answer: the client signs a new transaction and retries with the same identifier.
    const retry = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(withId(await svmClient(payer.signer).createPaymentPayload(pr))) } });
    expect(retry.status).toBe(200);
    expect(await json(retry)).toEqual(body);
    expect(await sol().balanceOf(payer.address)).toBe(before - 5000n);
    const other = await fetch(`${stack.url}/api/v1/market/cardano`, { headers: { "PAYMENT-SIGNATURE": header(withId(await svmClient(payer.signer).createPaymentPayload(pr))) } });
    expect(other.status).toBe(409);
    expect(await sol().balanceOf(payer.address)).toBe(before - 5000n);
  });

  it("marketgate call --network solana pays from SOLANA_PRIVATE_KEY over SOLANA_RPC_URL", async () => {
    const payer = sol().payers[6]!;
    const before = await sol().balanceOf(payer.address);
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      stdout: (t: string) => void out.push(t),
      stderr: (t: string) => void err.push(t),
      env: { MARKETGATE_URL: stack.url, SOLANA_PRIVATE_KEY: payer.secretKey, SOLANA_RPC_URL: sol().rpc.url },
    };
    expect(await clientMain("call", ["/api/v1/market/avalanche-2", "--network", "solana"], io)).toBe(0);
    expect(JSON.parse(out.join(""))).toMatchObject({ data: { id: "avalanche-2" } });
    expect(err.join("")).toMatch(new RegExp(`cost: 0\\.005 USDC \\(x402 on ${SOLANA}, tx [1-9A-HJ-NP-Za-km-z]{64,88}\\)`));
    expect(await sol().balanceOf(payer.address)).toBe(before - 5000n);
  });

  it("an MCP tool is paid from Solana with the official client; the same payment is refused on a second call", async () => {
    const client = await connectInMemory(stack.service.mcp);
    try {
      const payer = sol().payers[3]!;
      const unpaid = (await client.callTool({ name: "cex_market", arguments: { id: "litecoin" } })) as CallToolResult;
      expect(unpaid.isError).toBe(true);
      const required = textOf(unpaid) as PaymentRequired;
      expect(required.accepts.map((a) => a.network)).toEqual(["eip155:8453", SOLANA]);
      const before = await sol().balanceOf(payer.address);
      const payment = await svmClient(payer.signer).createPaymentPayload(required);
      const paid = (await client.callTool({ name: "cex_market", arguments: { id: "litecoin" }, _meta: { "x402/payment": payment } })) as CallToolResult;
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ data: { id: "litecoin" } });
      expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true, network: SOLANA, payer: payer.address });
      expect(await sol().balanceOf(payer.address)).toBe(before - 5000n);
      const replay = (await client.callTool({ name: "cex_market", arguments: { id: "dogecoin" }, _meta: { "x402/payment": payment } })) as CallToolResult;
      expect(replay.isError).toBe(true);
      expect(textOf(replay).error).toBe("duplicate_settlement");
      expect(await sol().balanceOf(payer.address)).toBe(before - 5000n);
    } finally {
      await client.close();
    }
  });
});

describe("a Solana settlement whose confirmation was lost", () => {
  let stack: OfflineStack;
  let loseConfirmations = 0;
  beforeAll(async () => {
    stack = await startOfflineStack({
      solana: true,
      // The transaction lands on the VM, but the facilitator does not hear it confirmed (an RPC timeout).
      wrapSolanaSigner: (s) => ({
        ...s,
        confirmTransaction: async (signature, network) => {
          if (loseConfirmations > 0) {
            loseConfirmations--;
            throw new Error("confirmation timed out");
          }
          return s.confirmTransaction(signature, network);
        },
      }),
    });
  });
  afterAll(() => stack?.close());

  it("answers 502 without the data, then the retry with the same payment gets it once, charged once", async () => {
    const sol = stack.solana!;
    const payer = sol.payers[7]!;
    const url = `${stack.url}/api/v1/market/bitcoin`;
    const pr = await paymentRequired(url);
    const payment = await new x402Client().register(SOLANA, new ExactSvmScheme(payer.signer, { rpcUrl: sol.rpc.url })).createPaymentPayload(pr);
    const before = await sol.balanceOf(payer.address);
    // Lost twice: the official resource server's one immediate retry of a `settlement_pending` is lost too.
    loseConfirmations = 2;
    const lost = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(payment) } });
    expect(lost.status).toBe(502);
    expect(lost.headers.get("retry-after")).not.toBeNull();
    expect(await sol.balanceOf(payer.address)).toBe(before - 5000n);
    // The official facilitator kept the sent signature (settlement_pending): asked again, it confirms it.
    const retry = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(payment) } });
    expect(retry.status).toBe(200);
    expect(decodePaymentResponseHeader(retry.headers.get("payment-response")!)).toMatchObject({ success: true, network: SOLANA });
    expect((await json(retry)).data).toMatchObject({ id: "bitcoin" });
    const again = await fetch(`${stack.url}/api/v1/market/ethereum`, { headers: { "PAYMENT-SIGNATURE": header(payment) } });
    expect(again.status).toBe(402);
    expect(await sol.balanceOf(payer.address)).toBe(before - 5000n);
  });

  it("a confirmation lost once is recovered in the same request (the official resource server asks once more), charged once", async () => {
    const sol = stack.solana!;
    const payer = sol.payers[8]!;
    const pay = wrapFetchWithPayment(fetch, new x402Client().register(SOLANA, new ExactSvmScheme(payer.signer, { rpcUrl: sol.rpc.url })));
    const before = await sol.balanceOf(payer.address);
    loseConfirmations = 1;
    const res = await pay(`${stack.url}/api/v1/market/cardano`);
    expect(res.status).toBe(200);
    expect(loseConfirmations).toBe(0);
    expect(await sol.balanceOf(payer.address)).toBe(before - 5000n);
  });
});

describe("documents list the second network", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack({ solana: true });
  });
  afterAll(() => stack?.close());
  const networks = (list: Array<{ network: string }>) => list.map((a) => a.network);

  it("quote, /.well-known/x402.json, OpenAPI x-payment-info, MCP tools/list and llms.txt name Base and Solana", async () => {
    const quote = await json(await fetch(`${stack.url}/api/v1/quote?path=${encodeURIComponent("/api/v1/market/bitcoin")}`));
    expect(networks(quote.x402.payment_required.accepts)).toEqual(["eip155:8453", SOLANA]);
    const wellKnown = await json(await fetch(`${stack.url}/.well-known/x402.json`));
    const item = wellKnown.items.find((i: { name: string }) => i.name === "cex_market");
    expect(item.accepts[1]).toMatchObject({ network: SOLANA, asset: SOLANA_USDC_MINT, payTo: stack.solana!.payTo.address, amount: "5000" });
    expect(item.accepts[0]).not.toHaveProperty("also");
    const openapi = await json(await fetch(`${stack.url}/openapi.json`));
    const protocols = openapi.paths["/api/v1/market/{id}"].get["x-payment-info"].protocols as Array<{ x402?: { network: string } }>;
    expect(protocols.flatMap((p) => (p.x402 ? [p.x402.network] : []))).toEqual(["eip155:8453", SOLANA]);
    const client = await connectInMemory(stack.service.mcp);
    try {
      const { tools } = await client.listTools();
      expect(networks(tools.find((t) => t.name === "cex_market")!._meta!["x402/accepts"] as Array<{ network: string }>)).toEqual(["eip155:8453", SOLANA]);
    } finally {
      await client.close();
    }
    expect(await (await fetch(`${stack.url}/llms.txt`)).text()).toContain(`or on Solana (${SOLANA})`);
  });
});

describe("without PAY_TO_SOLANA", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack();
  });
  afterAll(() => stack?.close());

  it("offers Base only (one accepts entry)", async () => {
    const pr = await paymentRequired(`${stack.url}/api/v1/prices?symbols=btc`);
    expect(pr.accepts.map((a) => a.network)).toEqual(["eip155:8453"]);
  });
});
