import { randomBytes } from "node:crypto";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import { wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { Mppx as MppxClient, evm as evmClient } from "mppx/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADER_BLOCK_BUDGET, MAX_PAID_URL_BYTES } from "../../http/header-budget.js";
import type { AnyTool } from "../../src/registry/tool.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { headerValues, recordingFetch, type HeaderBlock } from "../helpers/header-blocks.js";
import { alertsToExtend, exampleCall, PAID_TOOLS, UNCACHED_TOOLS, type RouteCall } from "../helpers/paid-routes.js";

/*
 * Every response header block of every paid REST route must fit nginx's default `proxy_buffer_size` (one 4 KB
 * page): a larger one is answered 502 by a stock reverse proxy ("upstream sent too big header"), after the payment
 * settled when it is a paid answer's. Measured with everything on that adds headers: Base and Solana offered, MPP
 * (negotiated, as by default, and offered on every 402), credits, signed receipts and content signatures. For each
 * route: the 402 of a plain client, of an MPP client (`Accept-Payment`), of a failed MPP credential and of a refused
 * x402 payment (a forged signature); the paid 200 of x402 on Base (v2 and v1 clients), x402 on Solana, MPP (mppx) and credits (SIWX).
 * The same at the longest paid URL the service accepts (MAX_PAID_URL_BYTES); one byte more is refused before payment.
 */

/** nginx's default `proxy_buffer_size` on x86-64 Linux (one memory page): a header block must be smaller. */
const NGINX_DEFAULT_PROXY_BUFFER = 4096;
const BASE = "eip155:8453";
const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const TOP_UP = "credits_top_up";

/** The largest block of each kind, by route. */
type Sizes = Record<string, Record<string, number>>;

/** The official x402 client paying on Base (no spend cap: a credits top-up is 5 USD). */
const baseClient = (privateKey: `0x${string}`) => new x402Client().register(BASE, new ExactEvmScheme(privateKeyToAccount(privateKey))).setSpendControls(false);

/** The official x402 client as a v1 client signs from a v1 402 body: the `X-PAYMENT` value. */
async function signV1(body: unknown, privateKey: `0x${string}`): Promise<string> {
  const client = new x402Client().registerV1("base", new ExactEvmSchemeV1(privateKeyToAccount(privateKey))).setSpendControls(false);
  return Buffer.from(JSON.stringify(await client.createPaymentPayload(body as PaymentRequired))).toString("base64");
}

/** `call` with `extra` request headers. */
const withHeaders = (call: RouteCall, extra: Record<string, string>): RequestInit => ({ ...call.init, headers: { ...(call.init.headers as Record<string, string>), ...extra } });

function note(sizes: Sizes, route: string, kind: string, blocks: readonly HeaderBlock[]): void {
  expect(blocks.length, `${route} ${kind}: nothing recorded`).toBeGreaterThan(0);
  const row = (sizes[route] ??= {});
  row[kind] = Math.max(row[kind] ?? 0, ...blocks.map((b) => b.bytes));
}

/** Every recorded block under the buffer; prints the largest of each kind (and its route) for the record. */
function assertUnderBuffer(sizes: Sizes, title: string): void {
  const largest: Record<string, string> = {};
  for (const [route, kinds] of Object.entries(sizes)) {
    for (const [kind, bytes] of Object.entries(kinds)) {
      if (bytes > Number(largest[kind]?.split(" ")[0] ?? 0)) largest[kind] = `${bytes} (${route})`;
      expect(bytes, `${route} ${kind}: ${bytes} bytes`).toBeLessThan(NGINX_DEFAULT_PROXY_BUFFER);
    }
  }
  console.info(`${title}, largest header block per kind: ${JSON.stringify(largest, null, 1)}`);
}

/** Runs `fn` with a recording fetch and returns the header blocks it received. */
async function recorded(fn: (f: typeof fetch) => Promise<unknown>): Promise<HeaderBlock[]> {
  const log: HeaderBlock[] = [];
  await fn(recordingFetch(log));
  return log;
}

/** The 402s of one call: plain, an MPP client's (`Accept-Payment`), after a failed MPP credential. */
async function measure402s(sizes: Sizes, route: string, call: RouteCall): Promise<void> {
  for (const [kind, extra] of [
    ["402 plain", {}],
    ["402 Accept-Payment", { "accept-payment": "evm/charge, tempo/charge" }],
    ["402 MPP credential", { authorization: "Payment bm90LWEtY3JlZGVudGlhbA" }],
  ] as const) {
    const blocks = await recorded((f) => f(call.url, withHeaders(call, extra)));
    expect(blocks[0]!.status, `${route} ${kind}`).toBe(402);
    expect(headerValues(blocks[0]!.block, "PAYMENT-REQUIRED"), route).toHaveLength(1);
    note(sizes, route, kind, blocks);
  }
}

/** A `PAYMENT-SIGNATURE` value whose authorization no longer matches its signature (another nonce): refused at verification. */
function tampered(paymentSignature: string): string {
  const p = JSON.parse(Buffer.from(paymentSignature, "base64").toString()) as { payload: { authorization: { nonce: string } } };
  p.payload.authorization.nonce = `0x${randomBytes(32).toString("hex")}`;
  return Buffer.from(JSON.stringify(p)).toString("base64");
}

/** Pays one call with x402: on Base (then sends that payment tampered: its 402), as a v1 client, on Solana. */
async function measureX402(sizes: Sizes, stack: OfflineStack, route: string, call: RouteCall): Promise<void> {
  const base = await recorded((f) => wrapFetchWithPayment(f, baseClient(stack.payers[2]!.privateKey))(call.url, call.init));
  expect(base.at(-1)!.status, `${route} Base`).toBe(200);
  expect(headerValues(base.at(-1)!.block, "PAYMENT-RESPONSE"), route).toHaveLength(1);
  note(sizes, route, "200 x402 Base", base.slice(-1));
  const refused = await recorded((f) => f(call.url, withHeaders(call, { "payment-signature": tampered(base.at(-1)!.requestHeaders["payment-signature"]!) })));
  expect(refused[0]!.status, `${route} refused`).toBe(402);
  note(sizes, route, "402 refused x402", refused);

  const v1 = await recorded(async (f) => {
    const unpaid = await f(call.url, call.init);
    return f(call.url, withHeaders(call, { "x-payment": await signV1(await unpaid.json(), stack.payers[3]!.privateKey) }));
  });
  expect(v1.at(-1)!.status, `${route} v1`).toBe(200);
  expect(headerValues(v1.at(-1)!.block, "X-PAYMENT-RESPONSE"), route).toHaveLength(1);
  note(sizes, route, "200 x402 v1", v1.slice(-1));

  const sol = stack.solana!;
  const solana = await recorded((f) =>
    wrapFetchWithPayment(f, new x402Client().register(SOLANA, new ExactSvmScheme(sol.payers[1]!.signer, { rpcUrl: sol.rpc.url })).setSpendControls(false))(call.url, call.init),
  );
  expect(solana.at(-1)!.status, `${route} Solana`).toBe(200);
  expect(decodePaymentRequiredHeader(headerValues(solana[0]!.block, "PAYMENT-REQUIRED")[0]!).accepts.map((a) => a.network)).toEqual([BASE, SOLANA]);
  note(sizes, route, "200 x402 Solana", solana.slice(-1));
}

/** Pays one call with the mppx client, then (unless it is the top-up) with credits (the payer topped up before). */
async function measureMppAndCredits(sizes: Sizes, stack: OfflineStack, route: string, call: RouteCall): Promise<void> {
  const account = privateKeyToAccount(stack.payers[4]!.privateKey);
  const methods = [evmClient.charge({ account, networks: [8453], currencies: [evmClient.assets.base.USDC], maxAmount: "10" })];
  const mpp = await recorded((f) => MppxClient.create({ polyfill: false, fetch: f, methods }).fetch(call.url, call.init));
  expect(mpp.at(-1)!.status, `${route} MPP`).toBe(200);
  note(sizes, route, "402 mppx", mpp.slice(0, 1));
  note(sizes, route, "200 MPP", mpp.slice(-1));
  if (route === TOP_UP) return; // credits are topped up with a payment, not with credits
  const credits = await recorded((f) => wrapFetchWithSIWx(f, account)(call.url, call.init));
  expect(credits.at(-1)!.status, `${route} credits`).toBe(200);
  note(sizes, route, "200 credits", credits.slice(-1));
}

describe("every paid route's header blocks fit nginx's default 4 KB proxy buffer (Base, Solana, MPP, credits, receipts on)", { timeout: 600_000 }, () => {
  let stack: OfflineStack;
  let ids: Record<string, string>;
  const sizes: Sizes = {};

  beforeAll(async () => {
    // No response cache: each payment below is charged and answered with its receipt (a cache hit is free).
    stack = await startOfflineStack({ solana: true, tools: UNCACHED_TOOLS, env: { RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true" } });
    ids = await alertsToExtend(wrapFetchWithPayment(fetch, baseClient(stack.payers[1]!.privateKey)), stack.url);
    // Credits for the credits kind (MPP's payer, payer 4).
    const topUp = await wrapFetchWithPayment(fetch, baseClient(stack.payers[4]!.privateKey))(`${stack.url}/api/v1/credits`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ amount_usd: "20" }),
    });
    expect(topUp.status).toBe(200);
  }, 120_000);
  afterAll(() => stack?.close());

  const call = (tool: AnyTool): RouteCall => exampleCall(stack.url, tool, ids);

  it("402s: plain, with Accept-Payment, after a failed MPP credential; the Bazaar declaration in the header or, without room, in the body", async () => {
    const moved: string[] = [];
    for (const tool of PAID_TOOLS) {
      const c = call(tool);
      await measure402s(sizes, tool.name, c);
      const res = await fetch(c.url, c.init);
      const inHeader = decodePaymentRequiredHeader(res.headers.get("payment-required")!).extensions?.bazaar;
      const inBody = ((await res.json()) as { extensions?: { bazaar?: unknown } }).extensions?.bazaar;
      expect(inHeader ?? inBody, tool.name).toBeDefined();
      if (!inHeader) moved.push(tool.name);
    }
    console.info(`plain 402s with the Bazaar declaration in the body (no room in the header with Base and Solana): ${moved.join(", ") || "none"}`);
  });

  it("paid 200s and their 402s: x402 on Base (v2, then the same payment refused), x402 v1, x402 on Solana", async () => {
    for (const tool of PAID_TOOLS) await measureX402(sizes, stack, tool.name, call(tool));
  });

  it("paid 200s and their 402s: MPP (the mppx client) and credits (SIWX)", async () => {
    for (const tool of PAID_TOOLS) await measureMppAndCredits(sizes, stack, tool.name, call(tool));
    assertUnderBuffer(sizes, "every paid route");
  });

  it(`at the longest paid URL (${MAX_PAID_URL_BYTES} bytes) every kind still fits; one byte more is a 414 before payment`, async () => {
    const tool = PAID_TOOLS.find((t) => t.name === "dex_tokens")!;
    const example = call(tool);
    const padded = (bytes: number): RouteCall => ({ url: `${example.url}&pad=${"x".repeat(bytes - example.url.length - 5)}`, init: example.init });
    const longest = padded(MAX_PAID_URL_BYTES);
    expect(Buffer.byteLength(longest.url)).toBe(MAX_PAID_URL_BYTES);
    const atBound: Sizes = {};
    await measure402s(atBound, "dex_tokens (longest URL)", longest);
    await measureX402(atBound, stack, "dex_tokens (longest URL)", longest);
    await measureMppAndCredits(atBound, stack, "dex_tokens (longest URL)", longest);
    assertUnderBuffer(atBound, `at ${MAX_PAID_URL_BYTES} bytes of URL`);

    const payer = stack.payers[5]!;
    const before = await stack.balanceOf(payer.address);
    const over = padded(MAX_PAID_URL_BYTES + 1);
    const refused = await wrapFetchWithPayment(fetch, baseClient(payer.privateKey))(over.url, over.init).catch((err: unknown) => err);
    // The 414 is no 402: the client has nothing to pay.
    expect(refused instanceof Response ? refused.status : String(refused)).toBe(414);
    expect(await stack.balanceOf(payer.address)).toBe(before);
  });
});

describe("with MPP challenges on every 402 (MPP_CHALLENGES=always), every 402 fits 4 KB and MPP clients still pay", { timeout: 300_000 }, () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack({ solana: true, env: { RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true", MPP_CHALLENGES: "always" } });
  }, 120_000);
  afterAll(() => stack?.close());

  it("plain, with Accept-Payment, after a failed credential; the challenges left out are in the body", async () => {
    const sizes: Sizes = {};
    const ids = await alertsToExtend(wrapFetchWithPayment(fetch, baseClient(stack.payers[1]!.privateKey)), stack.url);
    for (const tool of PAID_TOOLS) {
      const c = exampleCall(stack.url, tool, ids);
      await measure402s(sizes, tool.name, c);
      const res = await fetch(c.url, withHeaders(c, { "accept-payment": "evm/charge, tempo/charge" }));
      const shown = res.headers.get("www-authenticate") ? res.headers.get("www-authenticate")!.match(/Payment id=/g)!.length : 0;
      const body = (await res.json()) as { mpp?: { challenges: string[] } };
      // Both methods are offered: those without room in the header are in the body.
      expect(shown + (body.mpp?.challenges.length ?? 0), tool.name).toBe(2);
      expect(shown, tool.name).toBeGreaterThanOrEqual(1);
    }
    assertUnderBuffer(sizes, "MPP_CHALLENGES=always");
  });
});

it("the budget the service fits headers into is nginx's default buffer", () => {
  expect(HEADER_BLOCK_BUDGET).toBe(NGINX_DEFAULT_PROXY_BUFFER);
});
