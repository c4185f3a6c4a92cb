import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { PaymentPayload } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { json } from "../helpers/json.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { header, paymentRequired, signPayment } from "../helpers/pay.js";

const { state, counter, creator } = paidTestTools();

/** The same authorization with a junk signature: what an attacker who knows the payer's address can send. */
function forge(p: PaymentPayload): PaymentPayload {
  return { ...p, payload: { ...p.payload, signature: `0x${"11".repeat(65)}` } };
}

const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64");

describe("hardening: payments, body parsing, URL length, metrics, MCP arguments", () => {
  let stack: OfflineStack;
  const payer = (i: number) => stack.payers[i]!;
  const counterUrl = (label: string) => `${stack.url}/test/counter/${label}`;

  beforeAll(async () => {
    stack = await startOfflineStack({
      tools: [...TOOLS, counter, creator],
      env: { RATE_LIMIT_PER_MIN: "100000", MPP_SECRET_KEY: "test-only-mpp-secret-key-of-32-bytes!!" },
    });
  });
  afterAll(() => stack?.close());

  describe("finding 1: a stored answer goes only to the payer", () => {
    it("refuses a forged signature on a known payment identifier, serves the payer's own retries free", async () => {
      const url = counterUrl("idem");
      const paid = await signPayment(await paymentRequired(url), payer(1).privateKey);
      const id = generatePaymentId();
      const withId = { ...paid, extensions: appendPaymentIdentifierToExtensions({ ...paid.extensions }, id) } as PaymentPayload;
      const first = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(withId) } });
      expect(first.status).toBe(200);
      const answer = await json(first);
      const balance = await stack.balanceOf(payer(1).address);

      // The attacker knows the payer's address and the id, but not the key.
      const forged = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(forge(withId)) } });
      expect(forged.status).toBe(402);
      expect((await json(forged)).error).toMatch(/invalid_payload/);
      // A fresh nonce with a junk signature and the same id is refused too.
      const other = await signPayment(await paymentRequired(url), payer(1).privateKey);
      const forgedFresh = forge({ ...other, extensions: withId.extensions } as PaymentPayload);
      expect((await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(forgedFresh) } })).status).toBe(402);

      // The payer's retry with the same payload, and with a new payload it signed, get the stored answer.
      const retry = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(withId) } });
      expect(retry.status).toBe(200);
      expect(await json(retry)).toEqual(answer);
      const resigned = { ...other, extensions: withId.extensions } as PaymentPayload;
      const retry2 = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header(resigned) } });
      expect(retry2.status).toBe(200);
      expect(await json(retry2)).toEqual(answer);
      expect(await stack.balanceOf(payer(1).address)).toBe(balance);
    });

    it("the same over MCP", async () => {
      const client = new Client({ name: "t", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
      try {
        const first = await client.callTool({ name: "test_counter", arguments: { label: "mcp-idem" } });
        const pr = JSON.parse((first.content as Array<{ text: string }>)[0]!.text);
        const paid = await signPayment(pr, payer(2).privateKey);
        const withId = { ...paid, extensions: appendPaymentIdentifierToExtensions({ ...paid.extensions }, generatePaymentId()) } as PaymentPayload;
        const ok = await client.callTool({ name: "test_counter", arguments: { label: "mcp-idem" }, _meta: { "x402/payment": withId } });
        expect(ok.isError).toBeFalsy();
        const forged = await client.callTool({ name: "test_counter", arguments: { label: "mcp-idem" }, _meta: { "x402/payment": forge(withId) } });
        expect(forged.isError).toBe(true);
        expect(JSON.parse((forged.content as Array<{ text: string }>)[0]!.text).error).toMatch(/invalid_payload/);
      } finally {
        await client.close();
      }
    });

    it("an owed run of an upfront tool goes only to the same signed payload", async () => {
      const url = `${stack.url}/test/things`;
      const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "owed" }) };
      const paid = await signPayment(await paymentRequired(url, init), payer(3).privateKey);
      state.failCreates = 1;
      const failed = await fetch(url, { ...init, headers: { ...init.headers, "PAYMENT-SIGNATURE": header(paid) } });
      expect(failed.status).toBe(503);
      const forged = await fetch(url, { ...init, headers: { ...init.headers, "PAYMENT-SIGNATURE": header(forge(paid)) } });
      expect(forged.status).toBe(402);
      const owed = await fetch(url, { ...init, headers: { ...init.headers, "PAYMENT-SIGNATURE": header(paid) } });
      expect(owed.status).toBe(200);
    });
  });

  describe("finding 3: a malformed payment is a 402, never a 503", () => {
    const cases: Array<[string, (pr: PaymentPayload) => Record<string, string>]> = [
      ["empty object", () => ({ "PAYMENT-SIGNATURE": "e30=" })],
      ["not base64", () => ({ "PAYMENT-SIGNATURE": "%%%not-base64%%%" })],
      ["base64 of text", () => ({ "PAYMENT-SIGNATURE": b64("hello") })],
      ["null inner payload", (p) => ({ "PAYMENT-SIGNATURE": b64({ ...p, payload: null }) })],
      ["string accepted", (p) => ({ "PAYMENT-SIGNATURE": b64({ ...p, accepted: "exact" }) })],
      [
        "validBefore NaN",
        (p) => ({ "PAYMENT-SIGNATURE": b64({ ...p, payload: { ...p.payload, authorization: { ...(p.payload.authorization as object), validBefore: "NaN" } } }) }),
      ],
      [
        "bad checksum address",
        (p) => ({
          "PAYMENT-SIGNATURE": b64({
            ...p,
            payload: { ...p.payload, authorization: { ...(p.payload.authorization as object), from: "0xAbCdEf0000000000000000000000000000000001" } },
          }),
        }),
      ],
      ["unknown x402Version", (p) => ({ "PAYMENT-SIGNATURE": b64({ ...p, x402Version: 7 }) })],
      ["array", () => ({ "PAYMENT-SIGNATURE": b64([1, 2]) })],
      ["X-PAYMENT garbage", () => ({ "X-PAYMENT": "e30=" })],
      ["X-PAYMENT v1 without payload", () => ({ "X-PAYMENT": b64({ x402Version: 1, scheme: "exact", network: "base" }) })],
      ["X-PAYMENT-PROOF v2 junk", () => ({ "X-PAYMENT-PROOF": b64({ x402Version: 2, payload: 5 }) })],
      ["MPP garbage", () => ({ Authorization: "Payment abc" })],
      ["MPP empty", () => ({ Authorization: "Payment " })],
    ];
    it.each(cases)("%s", async (_name, make) => {
      const url = counterUrl("malformed");
      const good = await signPayment(await paymentRequired(url), payer(4).privateKey);
      const res = await fetch(url, { headers: make(good) });
      expect(res.status).toBe(402);
      expect(res.headers.get("retry-after")).toBeNull();
    });

    it("over MCP a malformed _meta payment is a PaymentRequired result", async () => {
      const client = new Client({ name: "t", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
      try {
        for (const bad of [{}, "x", 5, { x402Version: 2, accepted: "x", payload: null }, { x402Version: 9 }]) {
          const r = await client.callTool({ name: "test_counter", arguments: { label: "m" }, _meta: { "x402/payment": bad } });
          expect(r.isError).toBe(true);
          const body = JSON.parse((r.content as Array<{ text: string }>)[0]!.text);
          expect(body.accepts?.length, JSON.stringify(body)).toBeGreaterThan(0);
        }
      } finally {
        await client.close();
      }
    });
  });

  describe("finding 4: body-parser errors are 4xx JSON", () => {
    const post = (headers: Record<string, string>, body: string | Buffer) => fetch(`${stack.url}/test/things`, { method: "POST", headers, body });
    it.each([
      ["unsupported charset", { "content-type": "application/json; charset=latin1" }, "{}", 415],
      ["unsupported encoding", { "content-type": "application/json", "content-encoding": "compress" }, "{}", 415],
      ["malformed JSON", { "content-type": "application/json" }, "{nope", 400],
      ["too large", { "content-type": "application/json" }, JSON.stringify({ name: "x".repeat(70_000) }), 413],
    ] as const)("%s", async (_name, headers, body, status) => {
      const res = await post({ ...headers }, body);
      expect(res.status).toBe(status);
      expect((await json(res)).error.code).toMatch(/^[A-Z_]+$/);
    });
  });

  it("finding 10: a URL longer than the limit answers 414 before payment", async () => {
    const res = await fetch(`${stack.url}/test/counter/${"a".repeat(5000)}`);
    expect(res.status).toBe(414);
    expect(res.headers.get("payment-required")).toBeNull();
    expect((await json(res)).error.code).toBe("URI_TOO_LONG");
  });

  it("finding 2: requests no route matches share one metrics label", async () => {
    const size = async () => (await (await fetch(`${stack.url}/metrics`)).text()).length;
    const before = await size();
    for (let i = 0; i < 300; i++) {
      await fetch(`${stack.url}/random-${i}-${Math.random()}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{bad" });
    }
    const after = await size();
    expect(after - before).toBeLessThan(4_000);
    expect(await (await fetch(`${stack.url}/metrics`)).text()).not.toContain("random-1-");
  });

  it("finding 11: MCP arguments of the wrong type are -32602 or an isError result, never -32603", async () => {
    const call = (params: unknown) =>
      fetch(`${stack.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }),
      }).then(json);
    for (const params of [{ name: "test_counter", arguments: "x" }, { name: 5 }, { name: "test_counter", arguments: [1] }]) {
      const r = await call(params);
      expect(r.error?.code, JSON.stringify(r)).toBe(-32602);
    }
    // Not even a JSON-RPC request (params null): the SDK v2's invalid request, still not an internal error.
    expect((await call(null)).error?.code).toBe(-32600);
    const r = await call({ name: "test_counter", arguments: { label: 5 } });
    expect(r.result?.isError).toBe(true);
    expect(JSON.parse(r.result.content[0].text).error.code).toBe("BAD_REQUEST");
  });

  it("finding 11: a tempo-style external credential runs the handler once however often it is sent", async () => {
    const processor = stack.service.payments!;
    const r = {
      tool: counter,
      resource: { url: "http://x/test", description: "t", mimeType: "application/json" },
      fingerprint: "f",
      target: "GET http://x/test",
      priceUsd: counter.priceUsd,
    };
    const key = `tempo:${"ab".repeat(32)}`;
    const checks = await Promise.all(Array.from({ length: 10 }, () => processor.checkExternal(r, key, async () => ({ success: true, transaction: "0x1", network: "tempo:4217" }))));
    const verified = checks.filter((c) => c.kind === "verified");
    expect(verified).toHaveLength(1);
    const settled = await (verified[0] as Extract<(typeof checks)[number], { kind: "verified" }>).payment.settle({});
    expect(settled.kind).toBe("settled");
    const again = await processor.checkExternal(r, key, async () => ({ success: true, transaction: "0x1", network: "tempo:4217" }));
    expect(again.kind).toBe("payment_required");
  });
});
