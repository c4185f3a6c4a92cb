import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { parseSIWxHeader, wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { json } from "../helpers/json.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { siwxHeader } from "../helpers/siwx.js";

const { state, counter, creator } = paidTestTools();

describe("prepaid credits: one x402 top-up, then SIWX-signed calls debited without a chain transaction", () => {
  let stack: OfflineStack;
  const payer = (i: number) => stack.payers[i]!;
  const topUp = async (i: number, amount: string) => {
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));
    const res = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: amount }) });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
    return json(res);
  };
  const withCredits = (i: number, url: string, over = {}) => siwxHeader(payer(i).privateKey, url, over).then((h) => fetch(url, { headers: { "SIGN-IN-WITH-X": h } }));

  beforeAll(async () => {
    stack = await startOfflineStack({ tools: [...TOOLS, counter, creator], env: { RATE_LIMIT_PER_MIN: "100000", CREDITS_MIN_TOP_UP_USD: "0.10", CREDITS_REFUND: "on" } });
  });
  afterAll(() => stack?.close());

  it("tops up with the official x402 client (the chain moves once), then 20 calls with wrapFetchWithSIWx move nothing on chain", async () => {
    const i = 1;
    const before = await stack.balanceOf(payer(i).address);
    const account = await topUp(i, "1");
    expect(account).toMatchObject({ wallet: payer(i).address.toLowerCase(), credited_now_usd: "1", balance_usd: "1", custodial: true });
    expect(await stack.balanceOf(payer(i).address)).toBe(before - 1_000_000n);

    const siwxFetch = wrapFetchWithSIWx(fetch, privateKeyToAccount(payer(i).privateKey));
    const onChain = await stack.balanceOf(payer(i).address);
    let spent = 0;
    for (let k = 0; k < 20; k++) {
      const res = await siwxFetch(`${stack.url}/test/counter/official-${k}`);
      expect(res.status).toBe(200);
      expect((await json(res)).label).toBe(`official-${k}`);
      spent += 20_000;
      expect(res.headers.get("x-credits-remaining")).toBe(String((1_000_000 - spent) / 1e6));
    }
    expect(await stack.balanceOf(payer(i).address)).toBe(onChain);
    const me = await siwxFetch(`${stack.url}/api/v1/credits`);
    expect(me.status).toBe(200);
    expect(await json(me)).toMatchObject({ balance_usd: "0.6", spent_usd: "0.4", credited_usd: "1" });
  });

  it("every paid 402 declares the SIWX challenge and how to top up; GET /api/v1/credits without a proof is a 402 the client answers", async () => {
    const res = await fetch(`${stack.url}/test/counter/x`);
    expect(res.status).toBe(402);
    const pr = JSON.parse(Buffer.from(res.headers.get("payment-required")!, "base64").toString());
    expect(pr.extensions["sign-in-with-x"].supportedChains).toEqual([{ chainId: "eip155:8453", type: "eip191" }]);
    expect(pr.extensions["sign-in-with-x"].info.domain).toBe(new URL(stack.url).host);
    expect((await json(res)).credits.top_up).toMatchObject({ method: "POST", path: "/api/v1/credits" });
    const bare = await fetch(`${stack.url}/api/v1/credits`);
    expect(bare.status).toBe(402);
  });

  it("20 concurrent calls against a balance that covers 10 are served 10 times", async () => {
    const i = 2;
    await topUp(i, "0.2");
    const runsBefore = state.runs;
    const results = await Promise.all(Array.from({ length: 20 }, (_, k) => withCredits(i, `${stack.url}/test/counter/race-${k}`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = results.filter((r) => r.status === 402);
    expect(refused).toHaveLength(10);
    expect((await json(refused[0]!)).error).toMatch(/credits_insufficient_balance/);
    expect(state.runs - runsBefore).toBe(10);
    expect(await json(await withCredits(i, `${stack.url}/api/v1/credits`))).toMatchObject({ balance_usd: "0", spent_usd: "0.2" });
  });

  it("refuses a replayed nonce, an expired proof, another origin and a wrong signer, and debits nothing", async () => {
    const i = 3;
    await topUp(i, "0.5");
    const url = `${stack.url}/test/counter/proofs`;
    const h = await siwxHeader(payer(i).privateKey, url);
    expect((await fetch(url, { headers: { "SIGN-IN-WITH-X": h } })).status).toBe(200);
    const replay = await fetch(url, { headers: { "SIGN-IN-WITH-X": h } });
    expect(replay.status).toBe(402);
    expect((await json(replay)).error).toMatch(/invalid_siwx_nonce/);
    const old = await withCredits(i, url, { issuedAt: new Date(Date.now() - 600_000).toISOString() });
    expect((await json(old)).error).toMatch(/invalid_siwx_expired/);
    const other = await withCredits(i, url, { domain: "evil.example", uri: "https://evil.example/test/counter/proofs" });
    expect((await json(other)).error).toMatch(/invalid_siwx_domain/);
    // Signed by payer 4 but claiming payer 3's address.
    const forged = parseSIWxHeader(await siwxHeader(payer(4).privateKey, url));
    const lie = Buffer.from(JSON.stringify({ ...forged, address: payer(i).address })).toString("base64");
    const wrong = await fetch(url, { headers: { "SIGN-IN-WITH-X": lie } });
    expect((await json(wrong)).error).toMatch(/invalid_siwx_signature/);
    expect(await json(await withCredits(i, `${stack.url}/api/v1/credits`))).toMatchObject({ spent_usd: "0.02" });
  });

  it("a handler error debits nothing; a wallet's own per-call cap refuses dearer calls", async () => {
    const i = 4;
    await topUp(i, "0.5");
    state.failCreates = 1;
    const url = `${stack.url}/test/things`;
    const h = await siwxHeader(payer(i).privateKey, url);
    const failed = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "SIGN-IN-WITH-X": h }, body: JSON.stringify({ name: "x" }) });
    expect(failed.status).toBe(503);
    expect(await json(await withCredits(i, `${stack.url}/api/v1/credits`))).toMatchObject({ balance_usd: "0.5", spent_usd: "0" });

    const capsUrl = `${stack.url}/api/v1/credits/caps`;
    const set = await fetch(capsUrl, {
      method: "POST",
      headers: { "content-type": "application/json", "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, capsUrl) },
      body: JSON.stringify({ per_call_max_usd: "0.01" }),
    });
    expect(set.status).toBe(200);
    expect((await json(set)).caps.per_call_max_usd).toBe("0.01");
    const capped = await withCredits(i, `${stack.url}/test/counter/capped`);
    expect(capped.status).toBe(402);
    expect((await json(capped)).error).toMatch(/credits_cap_per_call/);
  });

  it("the same credits over MCP: credits_get and a paid tool with _meta['x402/sign-in-with-x']", async () => {
    const i = 5;
    await topUp(i, "0.3");
    const client = new Client({ name: "t", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
    try {
      const proof = () => siwxHeader(payer(i).privateKey, `${stack.url}/mcp`);
      const paid = await client.callTool({ name: "test_counter", arguments: { label: "mcp-credits" }, _meta: { "x402/sign-in-with-x": await proof() } });
      expect(paid.isError).toBeFalsy();
      expect(paid._meta?.["marketgate/credits"]).toMatchObject({ remaining_usd: "0.28" });
      const me = await client.callTool({ name: "credits_get", arguments: {}, _meta: { "x402/sign-in-with-x": await proof() } });
      expect(me.structuredContent).toMatchObject({ balance_usd: "0.28", spent_usd: "0.02" });
      const anon = await client.callTool({ name: "credits_get", arguments: {} });
      expect(anon.isError).toBe(true);
      expect(JSON.parse((anon.content as Array<{ text: string }>)[0]!.text).extensions["sign-in-with-x"]).toBeDefined();
    } finally {
      await client.close();
    }
  });

  it("CREDITS_REFUND=on: a signed refund pays the unspent balance back in USDC and empties it", async () => {
    const i = 6;
    await topUp(i, "0.4");
    expect((await withCredits(i, `${stack.url}/test/counter/before-refund`)).status).toBe(200);
    const before = await stack.balanceOf(payer(i).address);
    const url = `${stack.url}/api/v1/credits/refund`;
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, url) }, body: "{}" });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ status: "confirmed", amount_usd: "0.38" });
    expect(body.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await stack.balanceOf(payer(i).address)).toBe(before + 380_000n);
    expect(await json(await withCredits(i, `${stack.url}/api/v1/credits`))).toMatchObject({
      balance_usd: "0",
      held_usd: "0",
      refund_pending_usd: "0",
      spent_usd: "0.02",
      refund: { status: "confirmed", amount_usd: "0.38", tx_hash: body.tx_hash },
    });
  });

  it("a verified proof mints a session token that pays later calls without a signature, on this origin only, until it expires", async () => {
    const i = 7;
    await topUp(i, "0.2");
    const first = await withCredits(i, `${stack.url}/test/counter/session-0`);
    const token = first.headers.get("x-credits-session")!;
    expect(token).toMatch(/^v1\.0x[0-9a-f]{40}\.\d+\./);
    for (let k = 1; k <= 3; k++) {
      const res = await fetch(`${stack.url}/test/counter/session-${k}`, { headers: { "X-Credits-Session": token } });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-credits-remaining")).toBe(String((200_000 - 20_000 * (k + 1)) / 1e6));
    }
    const tampered = token.replace(/\.(\d+)\./, (_m, exp: string) => `.${Number(exp) + 3600}.`);
    expect((await json(await fetch(`${stack.url}/test/counter/session-x`, { headers: { "X-Credits-Session": tampered } }))).error).toMatch(/invalid_credits_session/);
    const other = await fetch(`${stack.url.replace("127.0.0.1", "localhost")}/test/counter/session-y`, { headers: { "X-Credits-Session": token } });
    expect(other.status).toBe(402);
  });
});
