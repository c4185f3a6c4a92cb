import { decodePaymentRequiredHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { Mppx as MppxClient, evm as evmClient } from "mppx/client";
import { request, Agent } from "node:http";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { header, paymentRequired, signPayment } from "../helpers/pay.js";
import { siwxHeader } from "../helpers/siwx.js";

const { state, counter } = paidTestTools();

/** Headers a response carries whatever it answers (they differ per request or per transport). */
const PER_RESPONSE = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);
const headerNames = (res: Response) => [...res.headers.keys()].filter((k) => !PER_RESPONSE.has(k)).sort();

/**
 * HEAD of a paid route never charges (finding 7 of issue 20): it is answered as the unpaid GET would be
 * (the 402 with its headers, no body) or, on a cache hit, as the hit (no body). Whatever payment it carries
 * (x402 from the official client, MPP, a SIWX proof, a credits session token) is neither verified nor
 * settled nor debited, stays usable for a later GET, and a HEAD never writes the response cache.
 */
describe("HEAD on paid routes", () => {
  let stack: OfflineStack;
  const payer = (i: number) => stack.payers[i]!;
  const chainBalances = () => Promise.all(stack.payers.map((p) => stack.balanceOf(p.address)));
  const upstreamCalls = () => stack.sim.faults.requestCount("coingecko");
  const creditsOf = async (i: number) =>
    json(await fetch(`${stack.url}/api/v1/credits`, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, `${stack.url}/api/v1/credits`) } }));
  const topUp = async (i: number, amount: string) => {
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));
    const res = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: amount }) });
    expect(res.status).toBe(200);
  };
  const head = (url: string, headers: Record<string, string> = {}) => fetch(url, { method: "HEAD", headers });

  beforeAll(async () => {
    stack = await startOfflineStack({
      tools: [...TOOLS, counter],
      env: {
        RATE_LIMIT_PER_MIN: "100000",
        FREE_RATE_LIMIT_PER_MIN: "100000",
        CREDITS_MIN_TOP_UP_USD: "0.01",
        MPP_SECRET_KEY: "test-only-mpp-secret-key-of-32-bytes!!",
        MPP_REALM: "marketgate.test",
      },
    });
  });
  afterAll(() => stack?.close());

  it("a cold paid route answers HEAD with the unpaid GET's 402 headers and no body", async () => {
    const url = `${stack.url}/api/v1/market/bitcoin/history?days=7`;
    const calls = upstreamCalls();
    // As an MPP client asks (Accept-Payment), so that the 402 carries a WWW-Authenticate challenge too.
    const res = await head(url, { "accept-payment": "evm/charge" });
    expect(res.status).toBe(402);
    expect(await res.text()).toBe("");
    const get = await fetch(url, { headers: { "accept-payment": "evm/charge" } });
    expect(get.status).toBe(402);
    expect(headerNames(res)).toEqual(headerNames(get));
    for (const name of ["payment-required", "www-authenticate", "cache-control", "access-control-expose-headers"]) expect(res.headers.get(name), name).not.toBeNull();
    const [fromHead, fromGet] = [decodePaymentRequiredHeader(res.headers.get("payment-required")!), decodePaymentRequiredHeader(get.headers.get("payment-required")!)];
    expect(fromHead.accepts).toEqual(fromGet.accepts);
    expect(fromHead.resource).toEqual(fromGet.resource);
    expect(fromHead.error).toBe(fromGet.error);
    expect(upstreamCalls()).toBe(calls);
  });

  it("HEAD with a valid x402 PAYMENT-SIGNATURE settles nothing, caches nothing, and the same signature pays a later GET", async () => {
    const url = `${stack.url}/api/v1/market/ripple`;
    const sig = header(await signPayment(await paymentRequired(url), payer(1).privateKey));
    const before = await chainBalances();
    const calls = upstreamCalls();
    const res = await head(url, { "payment-signature": sig });
    expect(res.status).toBe(402);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(await res.text()).toBe("");
    expect(await chainBalances()).toEqual(before);
    expect(upstreamCalls()).toBe(calls);
    // The official client answering the HEAD's 402 by itself: it signs and retries, and is refused again.
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(1).privateKey))));
    expect((await pay(url, { method: "HEAD" })).status).toBe(402);
    expect(await chainBalances()).toEqual(before);
    // Another client is not served an answer a HEAD produced: there is none.
    const other = await fetch(url);
    expect(other.status).toBe(402);
    expect(other.headers.get("x-cache")).toBeNull();
    // The signature was never used: it buys the GET, which is charged once.
    const paid = await fetch(url, { headers: { "payment-signature": sig } });
    expect(paid.status).toBe(200);
    expect(paid.headers.get("x-cache")).toBe("MISS");
    expect((await json(paid)).data.id).toBe("ripple");
    expect(await stack.balanceOf(payer(1).address)).toBe(before[1]! - 5000n);
  });

  it("HEAD after a paid GET is answered from the cache: a hit's headers, no body, no charge", async () => {
    const url = `${stack.url}/api/v1/market/solana`;
    const sig = header(await signPayment(await paymentRequired(url), payer(2).privateKey));
    expect((await fetch(url, { headers: { "payment-signature": sig } })).status).toBe(200);
    const hitByGet = await fetch(url);
    expect(hitByGet.headers.get("x-cache")).toBe("HIT");
    const bytes = (await hitByGet.arrayBuffer()).byteLength;
    const before = await chainBalances();
    const calls = upstreamCalls();
    // Unpaid, and carrying a fresh payment: both answered by the hit, the payment untouched.
    const fresh = header(await signPayment(await paymentRequired(`${stack.url}/api/v1/market/cardano`), payer(2).privateKey));
    for (const headers of [{}, { "payment-signature": fresh }] as Array<Record<string, string>>) {
      const res = await head(url, headers);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-cache")).toBe("HIT");
      expect(res.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(Number(res.headers.get("content-length"))).toBe(bytes);
      expect(res.headers.get("payment-response")).toBeNull();
      expect(await res.text()).toBe("");
    }
    expect(await chainBalances()).toEqual(before);
    expect(upstreamCalls()).toBe(calls);
  });

  it("HEAD with a SIWX proof or a credits session token debits nothing and runs no handler; the proof still pays a later GET", async () => {
    await topUp(3, "0.5");
    const url = `${stack.url}/test/counter/head-siwx`;
    const proof = await siwxHeader(payer(3).privateKey, url);
    const runs = state.runs;
    const res = await head(url, { "SIGN-IN-WITH-X": proof });
    expect(res.status).toBe(402);
    expect(res.headers.get("x-credits-remaining")).toBeNull();
    expect(res.headers.get("x-credits-session")).toBeNull();
    expect(state.runs).toBe(runs);
    expect(await creditsOf(3)).toMatchObject({ balance_usd: "0.5", spent_usd: "0" });

    const paid = await fetch(url, { headers: { "SIGN-IN-WITH-X": proof } });
    expect(paid.status).toBe(200);
    expect(paid.headers.get("x-credits-remaining")).toBe("0.48");
    const session = paid.headers.get("x-credits-session")!;
    expect(session).toBeTruthy();
    expect(state.runs).toBe(runs + 1);

    const bySession = await head(`${stack.url}/test/counter/head-session`, { "X-Credits-Session": session });
    expect(bySession.status).toBe(402);
    expect(state.runs).toBe(runs + 1);
    expect(await creditsOf(3)).toMatchObject({ balance_usd: "0.48", spent_usd: "0.02" });
    // The session token does pay a GET (so the HEAD's 402 was not a refusal of the token).
    expect((await fetch(`${stack.url}/test/counter/head-session`, { headers: { "X-Credits-Session": session } })).status).toBe(200);
    expect(await creditsOf(3)).toMatchObject({ balance_usd: "0.46", spent_usd: "0.04" });
  });

  it("HEAD with an MPP credential settles nothing; the credential pays a later GET", async () => {
    const url = `${stack.url}/api/v1/market/litecoin`;
    const mpp = MppxClient.create({
      polyfill: false,
      methods: [evmClient.charge({ account: privateKeyToAccount(payer(4).privateKey), networks: [8453], currencies: [evmClient.assets.base.USDC], maxAmount: "1" })],
    });
    const authorization = await mpp.createCredential(await fetch(url, { headers: { "accept-payment": "evm/charge" } }));
    const before = await chainBalances();
    const res = await head(url, { authorization });
    expect(res.status).toBe(402);
    expect(res.headers.get("payment-receipt")).toBeNull();
    expect(await chainBalances()).toEqual(before);
    const paid = await fetch(url, { headers: { authorization } });
    expect(paid.status).toBe(200);
    expect(await stack.balanceOf(payer(4).address)).toBe(before[4]! - 5000n);
  });

  it("HEAD of a paid stream with a SIWX proof opens nothing and debits nothing", async () => {
    await topUp(5, "0.5");
    const url = `${stack.url}/stream/liquidations`;
    const res = await head(url, { "SIGN-IN-WITH-X": await siwxHeader(payer(5).privateKey, url) });
    expect(res.status).toBe(402);
    expect(res.headers.get("payment-required")).not.toBeNull();
    expect(res.headers.get("x-credits-session")).toBeNull();
    expect(await creditsOf(5)).toMatchObject({ balance_usd: "0.5", spent_usd: "0" });
  });
});

describe("HEAD on a stream when payments are off", () => {
  let stack: FreeStack;
  beforeAll(async () => {
    stack = await startFreeStack({ FREE_RATE_LIMIT_PER_MIN: "100000" });
  });
  afterAll(() => stack?.close());

  /** `method path` over `agent`: the status and content type once the response has ended. */
  const call = (agent: Agent, method: string, path: string) =>
    new Promise<{ status: number; type: string | undefined }>((resolve, reject) => {
      const req = request(`${stack.url}${path}`, { method, agent }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode!, type: res.headers["content-type"] }));
      });
      req.on("error", reject);
      req.end();
    });

  it("answers the stream's headers and ends the response, so the connection serves the next request", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await call(agent, "HEAD", "/stream/liquidations")).toEqual({ status: 200, type: "text/event-stream; charset=utf-8" });
      // One socket: this request is answered only once the HEAD's response has ended on the server.
      expect(await call(agent, "GET", "/health")).toMatchObject({ status: 200 });
    } finally {
      agent.destroy();
    }
  });
});
