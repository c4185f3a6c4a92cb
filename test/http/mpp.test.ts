import { Challenge, Receipt } from "mppx";
import { Mppx as MppxClient, evm as evmClient } from "mppx/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { json } from "../helpers/json.js";
import { header, paymentRequired, signPayment } from "../helpers/pay.js";

describe("MPP beside x402", () => {
  let stack: OfflineStack;
  const client = (i: number) =>
    MppxClient.create({
      polyfill: false,
      methods: [evmClient.charge({ account: privateKeyToAccount(stack.payers[i]!.privateKey), networks: [8453], currencies: [evmClient.assets.base.USDC], maxAmount: "1" })],
    });

  beforeAll(async () => {
    stack = await startOfflineStack({ env: { MPP_SECRET_KEY: "test-only-mpp-secret-key-of-32-bytes!!", MPP_REALM: "marketgate.test" } });
  });
  afterAll(() => stack?.close());

  /** An unpaid request as an MPP client sends it: `Accept-Payment` names the methods it can pay with (mppx's default). */
  const unpaid = (url: string, acceptPayment = "evm/charge") => fetch(url, { headers: { "accept-payment": acceptPayment } });

  it("offers each client the one challenge it ranks first, beside x402; none to a client that does not speak MPP", async () => {
    const url = `${stack.url}/api/v1/market/bitcoin/history?days=7`;
    const methods = async (headers: Record<string, string>) => {
      const res = await fetch(url, { headers });
      expect(res.status).toBe(402);
      expect(res.headers.get("payment-required")).not.toBeNull();
      return res.headers.has("www-authenticate") ? Challenge.fromResponseList(res).map((c) => c.method) : [];
    };
    // x402 clients send no Accept-Payment: the 402 stays small enough for a stock reverse proxy.
    expect(await methods({})).toEqual([]);
    expect(await methods({ "accept-payment": "evm/charge, tempo/charge" })).toEqual(["evm"]);
    expect(await methods({ "accept-payment": "evm/charge;q=0.5, tempo/charge" })).toEqual(["tempo"]);
    expect(await methods({ "accept-payment": "tempo/*" })).toEqual(["tempo"]);
    expect(await methods({ "accept-payment": "*/*, evm/charge;q=0" })).toEqual(["tempo"]);
    // Nothing of ours named, or unreadable: ignored (the draft allows it), our first method.
    expect(await methods({ "accept-payment": "stripe/charge" })).toEqual(["evm"]);
    expect(await methods({ "accept-payment": "not a header;;" })).toEqual(["evm"]);
    // A failed credential gets a fresh challenge.
    expect(await methods({ authorization: "Payment bm90LWEtY3JlZGVudGlhbA" })).toEqual(["evm"]);
    const all = Challenge.fromResponseList(await unpaid(url, "evm/charge, tempo/charge;q=0.9"));
    expect(all.map((c) => c.method)).toEqual(["evm"]);
    const challenges = [...all, ...Challenge.fromResponseList(await unpaid(url, "tempo/charge"))];
    const evm = challenges.find((c) => c.method === "evm")!;
    expect(evm).toMatchObject({ realm: "marketgate.test", intent: "charge" });
    expect(evm.request).toMatchObject({ amount: "10000", currency: stack.usdcAddress, recipient: stack.operator.address, methodDetails: { chainId: 8453 } });
    const tempo = challenges.find((c) => c.method === "tempo")!;
    expect(tempo.request).toMatchObject({
      amount: "10000",
      currency: "0x20C000000000000000000000b9537d11c60E8b50",
      recipient: stack.operator.address,
      methodDetails: { chainId: 4217 },
    });
  });

  it("settles an MPP evm credential through our facilitator: exact charge, receipt, no replay", async () => {
    const url = `${stack.url}/api/v1/market/litecoin`;
    const payer = stack.payers[6]!;
    const before = await stack.balanceOf(payer.address);
    const authorization = await client(6).createCredential(await unpaid(url));
    expect(authorization).toMatch(/^Payment /);
    const res = await fetch(url, { headers: { authorization } });
    expect(res.status).toBe(200);
    expect((await json(res)).data.id).toBe("litecoin");
    const receipt = Receipt.deserialize(res.headers.get("payment-receipt")!);
    expect(receipt).toMatchObject({ method: "evm", status: "success" });
    expect(receipt.reference).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await stack.balanceOf(payer.address)).toBe(before - 5000n);

    // Same tool (so the challenge scope matches), another input: the authorization's nonce is spent.
    const replay = await fetch(`${stack.url}/api/v1/market/matic-network`, { headers: { authorization } });
    expect(replay.status).toBe(402);
    expect(await stack.balanceOf(payer.address)).toBe(before - 5000n);
  });

  it("is paid by the mppx client's own fetch, which sends Accept-Payment itself", async () => {
    const payer = stack.payers[5]!;
    const before = await stack.balanceOf(payer.address);
    const res = await client(5).fetch(`${stack.url}/api/v1/market/polkadot`);
    expect(res.status).toBe(200);
    expect(Receipt.deserialize(res.headers.get("payment-receipt")!)).toMatchObject({ method: "evm", status: "success" });
    expect(await stack.balanceOf(payer.address)).toBe(before - 5000n);
  });

  it("refuses a credential issued for a cheaper tool", async () => {
    const cheap = await client(7).createCredential(await unpaid(`${stack.url}/api/v1/prices?symbols=ltc`));
    const res = await fetch(`${stack.url}/api/v1/market/ethereum/history?days=1`, { headers: { authorization: cheap } });
    expect(res.status).toBe(402);
    expect((await json(res)).error).toMatch(/MPP credential refused/);
  });

  it("answers 400 to a request carrying both an MPP credential and an x402 payment", async () => {
    const url = `${stack.url}/api/v1/market/cosmos`;
    const authorization = await client(8).createCredential(await unpaid(url));
    const x402 = header(await signPayment(await paymentRequired(url), stack.payers[8]!.privateKey));
    const res = await fetch(url, { headers: { authorization, "payment-signature": x402 } });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ error: { code: "BAD_REQUEST" } });
  });
});
