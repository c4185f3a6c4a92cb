import { getWarningsFor402Body } from "@agentcash/discovery";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirementsV1 } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { extractDiscoveryInfo, type DiscoveredHTTPResource, type DiscoveredMCPResource } from "@x402/extensions/bazaar";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PAID_URL_BYTES } from "../../http/header-budget.js";
import { bazaarTags, v1OutputSchema } from "../../src/payments/bazaar.js";
import { runDiscoveryChecks } from "../../src/docs/discovery-check.js";
import { isProbeable } from "../../src/docs/discovery.js";
import { splitExample } from "../../src/registry/json-schema.js";
import { bazaarOutputExample, outputExample } from "../../src/registry/output-example.js";
import { isFree, pathParams, requestPath, type AnyTool } from "../../src/registry/tool.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { header, paymentRequired, signPayment } from "../helpers/pay.js";

type Input = Record<string, string | number | boolean>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const PAID = TOOLS.filter((t) => !isFree(t));
/** A webhook target the alerts' checks before payment accept on the offline stack (loopback allowed, nothing listens). */
const WEBHOOK = "https://127.0.0.1:9/marketgate";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * x402 Bazaar, the well-known documents and the x402scan checks, on the offline stack: every paid route's
 * real 402, the payment a client signs for it, and what a facilitator extracts from that payment.
 */
describe("discovery on the offline stack", () => {
  let stack: OfflineStack;
  let client: x402Client;
  /** Per paid tool, an input whose request answers 402 (the example, or real state for the alert tools). */
  const inputs = new Map<string, Input>();

  const send = (tool: AnyTool, input: Input, headers: Record<string, string> = {}) =>
    fetch(`${stack.url}${requestPath(tool, input)}`, {
      method: tool.method,
      headers: { ...headers, ...(tool.method === "POST" ? { "content-type": "application/json" } : {}) },
      ...(tool.method === "POST" ? { body: JSON.stringify(Object.fromEntries(Object.entries(input).filter(([k]) => !pathParams(tool).includes(k)))) } : {}),
    });

  /** The unpaid answer, past a free warm-up answer (CVD: 202 while the stream starts). */
  async function unpaid(tool: AnyTool, input: Input): Promise<Response> {
    for (let i = 0; ; i++) {
      const res = await send(tool, input);
      if (res.status !== 202 || i >= 40) return res;
      await res.arrayBuffer();
      await sleep(500);
    }
  }

  /** An alert created (and paid) for the extend tools: their example id refers to an alert that does not exist. */
  async function createdAlert(create: AnyTool): Promise<string> {
    const input = { ...create.example, webhook_url: WEBHOOK };
    const pr = await paymentRequired(`${stack.url}${requestPath(create, input)}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input) });
    const res = await send(create, input, { "payment-signature": header(await signPayment(pr, stack.payers[5]!.privateKey)) });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { alert_id: string }).alert_id;
  }

  beforeAll(async () => {
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true" } });
    client = new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(stack.payers[4]!.privateKey))).setSpendControls(false);
    for (const t of PAID) {
      if (isProbeable(t)) inputs.set(t.name, { ...t.example });
      else if (t.name.endsWith("_create")) inputs.set(t.name, { ...t.example, webhook_url: WEBHOOK });
      else inputs.set(t.name, { ...t.example, id: await createdAlert(TOOLS.find((c) => c.name === t.name.replace(/_extend$/, "_create"))!) });
    }
  }, 120_000);
  afterAll(() => stack?.close());

  it("every paid route's 402 declares bazaar, and extractDiscoveryInfo returns the route from the payment signed for it", async () => {
    for (const t of PAID) {
      const input = inputs.get(t.name)!;
      const res = await unpaid(t, input);
      expect(res.status, t.name).toBe(402);
      const pr = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
      const url = new URL(`${stack.url}${requestPath(t, input)}`);
      expect(pr.resource).toMatchObject({ url: url.href, serviceName: "marketgate", tags: bazaarTags(t), iconUrl: `${stack.url}/favicon.svg` });

      // What a facilitator sees: the official client copies the 402's extensions into the payment.
      const payload = await client.createPaymentPayload(pr);
      expect(payload.extensions?.bazaar).toEqual(pr.extensions?.bazaar);
      const found = extractDiscoveryInfo(payload, payload.accepted) as DiscoveredHTTPResource | null;
      expect(found, t.name).not.toBeNull();
      expect(found!.method).toBe(t.method);
      expect(found!.resourceUrl).toBe(`${stack.url}${pathParams(t).length ? t.path : url.pathname}`);
      expect(found!.serviceName).toBe("marketgate");
      const { rest } = splitExample(t);
      expect(found!.discoveryInfo.input).toMatchObject(
        t.method === "POST" ? { type: "http", method: "POST", bodyType: "json", body: rest } : { type: "http", method: t.method, queryParams: rest },
      );
      if (pathParams(t).length)
        expect((found!.discoveryInfo.input as { pathParams?: unknown }).pathParams).toEqual(Object.fromEntries(pathParams(t).map((p) => [p, String(input[p])])));
      expect(found!.discoveryInfo.output?.example).toEqual(bazaarOutputExample(t));

      // The v1 body carries the real outputSchema, which v1 discovery reads too.
      const body = (await res.json()) as Json;
      const v1 = body.accepts[0] as PaymentRequirementsV1;
      expect(v1.outputSchema).toEqual(v1OutputSchema(t));
      expect((v1.outputSchema as Json).output).toEqual(v1OutputSchema(t).output);
      expect(extractDiscoveryInfo({ x402Version: 1 } as PaymentPayload, v1)).toMatchObject({ method: t.method, resourceUrl: `${url.origin}${url.pathname}` });

      // x402scan's validation of the body and the header: no errors.
      for (const b of [body, pr])
        expect(
          getWarningsFor402Body(b).filter((w) => w.severity === "error"),
          t.name,
        ).toEqual([]);
      // Headers stay well inside the 16 KB HTTP clients read, and so does the payment the client sends back.
      let size = 0;
      res.headers.forEach((v, k) => (size += k.length + v.length + 4));
      expect(size, t.name).toBeLessThan(12_000);
      expect(encodePaymentSignatureHeader(payload).length, t.name).toBeLessThan(10_000);
    }
  }, 120_000);

  it("every paid MCP tool's payment request declares bazaar with input.type mcp, extracted by tool name", async () => {
    for (const t of PAID) {
      let r: CallToolResult;
      for (let i = 0; ; i++) {
        r = await stack.service.mcp.call(t.name, inputs.get(t.name)!, {});
        if (!r._meta?.["marketgate/interim"] || i >= 40) break;
        await sleep(500);
      }
      expect(r.isError, t.name).toBe(true);
      const pr = JSON.parse((r.content[0] as { text: string }).text) as PaymentRequired;
      expect(pr.extensions?.bazaar, t.name).toMatchObject({
        info: { input: { type: "mcp", toolName: t.name, transport: "streamable-http" }, output: { example: bazaarOutputExample(t) } },
      });
      const found = extractDiscoveryInfo(await client.createPaymentPayload(pr), pr.accepts[0]!) as DiscoveredMCPResource | null;
      expect(found?.toolName, t.name).toBe(t.name);
      expect(found?.serviceName).toBe("marketgate");
    }
  }, 60_000);

  it("/.well-known/x402 lists absolute example URLs that answer 402 as listed", async () => {
    const doc = (await (await fetch(`${stack.url}/.well-known/x402`)).json()) as { version: number; resources: string[] };
    expect(doc.resources).toEqual(PAID.filter(isProbeable).map((t) => `${stack.url}${requestPath(t)}`));
    for (const url of doc.resources) {
      const res = await fetch(url);
      expect(res.status, url).toBe(402);
      await res.arrayBuffer();
    }
  });

  it("/.well-known/x402.json lists every paid resource with x402Version, lastUpdated, the MPP offer and a URL that answers 402 as listed", async () => {
    const doc = (await (await fetch(`${stack.url}/.well-known/x402.json`)).json()) as Json;
    expect(doc.items.map((i: Json) => i.name)).toEqual(PAID.map((t) => t.name));
    expect(doc.service).toMatchObject({ openapi: `${stack.url}/openapi.json`, mcp: `${stack.url}/mcp`, protocols: ["x402", "mpp"], credits: { auth: "siwx" } });
    for (const item of doc.items) {
      expect(item).toMatchObject({
        type: "http",
        x402Version: 2,
        lastUpdated: doc.lastUpdated,
        serviceName: "marketgate",
        accepts: [{ network: "eip155:8453", payTo: stack.operator.address }],
      });
      expect(new Date(item.lastUpdated).toISOString()).toBe(item.lastUpdated);
      expect(item.resource.startsWith(`${stack.url}/`)).toBe(true);
      expect(item.resource).not.toMatch(/[{}]|\/:/);
      expect(item.mpp.map((o: Json) => `${o.method} ${o.intent} ${o.network}`)).toEqual(["evm charge eip155:8453", "tempo charge tempo:4217"]);
      expect(item.output.example).toEqual(outputExample(TOOLS.find((t) => t.name === item.name)!));
      if (item.probe === false) continue;
      const res = await fetch(item.resource, { method: item.method, ...(item.body ? { headers: { "content-type": "application/json" }, body: JSON.stringify(item.body) } : {}) });
      expect(res.status, item.resource).toBe(402);
      await res.arrayBuffer();
    }
    // Only the alert tools whose example needs state are not offered for probing.
    expect(doc.items.filter((i: Json) => i.probe === false).map((i: Json) => i.name)).toEqual(PAID.filter((t) => !isProbeable(t)).map((t) => t.name));
    expect(PAID.filter((t) => !isProbeable(t)).every((t) => t.tags.includes("alerts"))).toBe(true);
  });

  it("passes the checks x402scan runs (@agentcash/discovery) with 0 errors, every listed resource probed at 402", async () => {
    const report = await runDiscoveryChecks(stack.url);
    expect(report.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(report.errors).toBe(0);
    expect(report.routes).toBeGreaterThan(PAID.length);
    expect(report.probes.map((p) => p.status)).toEqual(PAID.filter(isProbeable).map(() => 402));
    // The service icon the 402s name is served.
    const icon = await fetch(`${stack.url}/favicon.svg`);
    expect(icon.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect(await icon.text()).toContain("<svg");
  }, 60_000);

  it("keeps every 402 under a stock proxy's 4 KB: at the longest paid URL the declaration moves to the body; a longer URL is refused before payment", async () => {
    const padded = (t: AnyTool, bytes: number) => {
      const path = requestPath(t);
      const head = `${stack.url}${path}${path.includes("?") ? "&" : "?"}pad=`;
      return `${head}${"x".repeat(bytes - head.length)}`;
    };
    const headerBytes = (res: Response) => {
      let size = 0;
      res.headers.forEach((v, k) => (size += k.length + v.length + 4));
      return size;
    };
    for (const t of PAID.filter(isProbeable)) {
      const longest = padded(t, MAX_PAID_URL_BYTES);
      expect(Buffer.byteLength(longest)).toBe(MAX_PAID_URL_BYTES);
      const res = await fetch(longest, t.method === "POST" ? { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(splitExample(t).rest) } : {});
      expect(res.status, t.name).toBe(402);
      const pr = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
      expect(pr.resource.url).toBe(longest);
      // Never lost: in PAYMENT-REQUIRED while it has room, else under the body's `extensions` (http/fit-402.ts).
      const body = (await res.json()) as Json;
      expect(pr.extensions?.bazaar ?? body.extensions?.bazaar, t.name).toBeDefined();
      expect(headerBytes(res), t.name).toBeLessThan(4096);
    }
    const prices = TOOLS.find((t) => t.name === "cex_prices")!;
    const res = await fetch(padded(prices, MAX_PAID_URL_BYTES + 1));
    expect(res.status).toBe(414);
    expect(res.headers.get("payment-required")).toBeNull();
    await res.arrayBuffer();
  });
});
