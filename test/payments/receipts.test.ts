import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import {
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  verifyOfferSignatureJWS,
  verifyReceiptSignatureJWS,
  type JWSSignedOffer,
  type JWSSignedReceipt,
} from "@x402/extensions/offer-receipt";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyReceiptMain } from "../../src/cli/verify-receipt.js";
import type { PublishedKey } from "../../src/payments/receipts/keys.js";
import { parseSavedAnswer, verifySavedAnswer } from "../../src/payments/receipts/verify.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { savedResponse as saved } from "../helpers/saved-response.js";
import { siwxHeader } from "../helpers/siwx.js";
import { firstSseEvent } from "../helpers/sse-event.js";

/** `buf` with the byte at `at` changed. */
function flipped(buf: Buffer, at: number): Buffer {
  const b = Buffer.from(buf);
  b[at] = b[at]! ^ 0x01;
  return b;
}

/** A CLI run's exit code and output. */
async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await verifyReceiptMain(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: {} });
  return { code, out, err };
}

describe("signed receipts and content signatures on paid answers", () => {
  let stack: OfflineStack;
  let keys: PublishedKey[];
  let dir: string;
  const payer = (i: number) => stack.payers[i]!;
  const pay = (i: number) => wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));

  beforeAll(async () => {
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000", CREDITS_MIN_TOP_UP_USD: "0.10" } });
    const doc = (await (await fetch(`${stack.url}/.well-known/x402.json`)).json()) as { receipts: { keys: PublishedKey[]; extension: string } };
    keys = doc.receipts.keys;
    dir = mkdtempSync(join(tmpdir(), "receipts-"));
  });
  afterAll(() => stack?.close());

  it("publishes the signing key in /.well-known/x402.json", () => {
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ status: "current", jwk: { kty: "OKP", crv: "Ed25519" } });
    expect(keys[0]!.kid).toMatch(/^did:key:z6Mk/);
  });

  it("a 402 carries, in its body, a signed offer per accepts entry that the extension's verifier accepts", async () => {
    const url = `${stack.url}/api/v1/market/cardano`;
    const res = await fetch(url);
    expect(res.status).toBe(402);
    const required: PaymentRequired = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
    // In the body, not PAYMENT-REQUIRED (the header block must fit a proxy's 4 KB buffer).
    expect(required.extensions?.["offer-receipt"]).toBeUndefined();
    const offers = extractOffersFromPaymentRequired((await res.json()) as PaymentRequired);
    expect(offers).toHaveLength(required.accepts.length);
    const payload = await verifyOfferSignatureJWS(offers[0] as JWSSignedOffer, keys[0]!.jwk);
    expect(payload).toMatchObject({ resourceUrl: url, network: required.accepts[0]!.network, amount: required.accepts[0]!.amount, payTo: stack.operator.address });
  });

  it("an x402-paid answer (official client on anvil) carries a receipt the extension verifies, and a content signature; one changed byte fails", async () => {
    const url = `${stack.url}/api/v1/market/bitcoin/history?days=30`;
    const res = await pay(0)(url);
    expect(res.status).toBe(200);
    // The extension's own reader (PAYMENT-RESPONSE) and verifier, with the published key.
    const receipt = extractReceiptFromResponse(res) as JWSSignedReceipt;
    expect(receipt.format).toBe("jws");
    const payload = await verifyReceiptSignatureJWS(receipt, keys[0]!.jwk);
    expect(payload).toMatchObject({ version: 1, network: "eip155:8453", resourceUrl: url, payer: payer(0).address });
    expect(payload.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Math.abs(payload.issuedAt - Date.now() / 1000)).toBeLessThan(60);
    expect(res.headers.get("content-digest")).toMatch(/^sha-256=:[A-Za-z0-9+/]+=*:$/);
    // The receipt travels once, in PAYMENT-RESPONSE, which the content signature covers.
    expect(res.headers.get("signature-input")).toContain('receipt=("@method";req "@target-uri";req "content-digest" "payment-response")');
    expect(res.headers.get("x402-receipt")).toBeNull();
    expect(res.headers.get("x-payment-response")).toBeNull();

    const raw = await saved(res);
    const ok = await verifySavedAnswer(parseSavedAnswer(raw), keys);
    expect(ok.checks, JSON.stringify(ok.checks)).toEqual([
      expect.objectContaining({ name: "receipt_signature", ok: true }),
      expect.objectContaining({ name: "content_digest_and_signature", ok: true }),
    ]);
    expect(ok.request).toEqual({ method: "GET", targetUri: url });
    // One changed byte of the body: the digest no longer matches.
    const body = await verifySavedAnswer(parseSavedAnswer(flipped(raw, raw.length - 10)), keys);
    expect(body.ok).toBe(false);
    expect(body.checks.find((c) => c.name === "content_digest_and_signature")!.detail).toMatch(/Content-Digest does not match/);
    // One changed byte of the signature: it no longer verifies.
    const sigAt = raw.indexOf("signature: receipt=:") + "signature: receipt=:".length + 5;
    expect((await verifySavedAnswer(parseSavedAnswer(flipped(raw, sigAt)), keys)).ok).toBe(false);
    // Another key does not verify it.
    const other = { jwk: { kty: "OKP" as const, crv: "Ed25519" as const, x: Buffer.alloc(32, 7).toString("base64url") } };
    expect((await verifySavedAnswer(parseSavedAnswer(raw), [other])).ok).toBe(false);

    // The CLI: accepts with the keys fetched from the service, refuses one changed byte.
    const file = join(dir, "x402.http");
    writeFileSync(file, raw);
    const good = await cli([file]);
    expect(good.code, good.out + good.err).toBe(0);
    expect(good.out).toContain("verified");
    expect(good.out).toContain(`keys: ${stack.url}/.well-known/x402.json`);
    const bad = join(dir, "x402-changed.http");
    writeFileSync(bad, flipped(raw, raw.length - 3));
    const refused = await cli([bad, "--key", keys[0]!.jwk.x]);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("NOT verified");
    expect((await cli([join(dir, "missing.http")])).code).toBe(2);
  });

  it("a cache hit is free and carries no receipt", async () => {
    const url = `${stack.url}/api/v1/market/solana`;
    expect((await pay(1)(url)).status).toBe(200);
    const hit = await fetch(url);
    expect(hit.status).toBe(200);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    for (const h of ["x402-receipt", "content-digest", "signature", "signature-input", "payment-response"]) expect(hit.headers.get(h), h).toBeNull();
  });

  it("a credits-paid answer carries a receipt for the wallet and a content signature", async () => {
    const top = await pay(2)(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "0.5" }) });
    expect(top.status).toBe(200);
    const url = `${stack.url}/api/v1/market/ethereum`;
    const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(2).privateKey, url) } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-credits-remaining")).not.toBeNull();
    expect(res.headers.get("payment-response")).toBeNull();
    const receipt = JSON.parse(Buffer.from(res.headers.get("x402-receipt")!, "base64").toString()) as JWSSignedReceipt;
    expect(await verifyReceiptSignatureJWS(receipt, keys[0]!.jwk)).toMatchObject({ payer: payer(2).address.toLowerCase(), resourceUrl: url, network: "eip155:8453" });
    expect((await verifySavedAnswer(parseSavedAnswer(await saved(res)), keys)).ok).toBe(true);
  });

  it("each paid stream minute's debit event carries a signed receipt for the wallet", async () => {
    // Payer 2 topped up in the credits test above.
    const url = `${stack.url}/stream/liquidations?symbol=ETH`;
    // Its sign-in 402 offers the top-up, signed.
    const unpaid = await fetch(url);
    expect(unpaid.status).toBe(402);
    const body = (await unpaid.json()) as PaymentRequired;
    expect(extractOffersFromPaymentRequired(body)).toHaveLength(body.accepts.length);
    const abort = new AbortController();
    const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(2).privateKey, url) }, signal: abort.signal });
    expect(res.status).toBe(200);
    const data = await firstSseEvent<{ minute: number; receipt: JWSSignedReceipt }>(res, "debit", abort);
    expect(data.minute).toBe(1);
    expect(await verifyReceiptSignatureJWS(data.receipt, keys[0]!.jwk)).toMatchObject({ payer: payer(2).address.toLowerCase(), resourceUrl: url });
  });

  it("an MCP paid result has the receipt in _meta and a digest over its content", async () => {
    const client = new Client({ name: "test", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
    try {
      const unpaid = (await client.callTool({ name: "cex_market", arguments: { id: "dogecoin" } })) as CallToolResult;
      expect(unpaid.isError).toBe(true);
      const required = JSON.parse((unpaid.content[0] as { text: string }).text) as PaymentRequired;
      expect(extractOffersFromPaymentRequired(required)).toHaveLength(required.accepts.length);
      const payment = await new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(3).privateKey))).createPaymentPayload(required);
      const paid = (await client.callTool({ name: "cex_market", arguments: { id: "dogecoin" }, _meta: { "x402/payment": payment } })) as CallToolResult;
      expect(paid.isError).toBeFalsy();
      const settle = paid._meta?.["x402/payment-response"] as { extensions: Record<string, { info: { receipt: JWSSignedReceipt } }> };
      const receipt = settle.extensions["offer-receipt"]!.info.receipt;
      expect(await verifyReceiptSignatureJWS(receipt, keys[0]!.jwk)).toMatchObject({ payer: payer(3).address, resourceUrl: `${stack.url}/mcp` });
      expect((paid._meta?.["marketgate/receipt"] as { receipt: unknown }).receipt).toEqual(receipt);
      const v = await verifySavedAnswer(parseSavedAnswer(Buffer.from(JSON.stringify(paid))), keys);
      expect(v.ok, JSON.stringify(v.checks)).toBe(true);
      // One changed character of the content fails.
      const text = (paid.content[0] as { text: string }).text;
      const changed = { ...paid, content: [{ type: "text", text: text.replace(/.$/, text.endsWith("}") ? "]" : "}") }] };
      expect((await verifySavedAnswer(parseSavedAnswer(Buffer.from(JSON.stringify(changed))), keys)).ok).toBe(false);
    } finally {
      await client.close();
    }
  });
});
