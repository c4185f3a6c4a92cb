import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { RETRY_AFTER_META } from "../../mcp/catalog.js";
import { AppError, ERROR_STATUS, type ErrorCode } from "../../src/errors.js";
import type { AuthorizationState, PaymentLedger } from "../../src/payments/ledger.js";
import { defineTool, requestPath, type AnyTool } from "../../src/registry/tool.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { json } from "../helpers/json.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { header, signPayment } from "../helpers/pay.js";
import { siwxHeader } from "../helpers/siwx.js";

/*
 * The same calls over HTTP (fetch, the official x402 clients) and MCP (the SDK client over Streamable HTTP,
 * payments in `_meta`) reach the same outcome, status class, metrics and ledger effect: both transports run
 * one call pipeline (src/core/call-pipeline.ts). Each scenario runs once per transport on one offline stack
 * (simulator, anvil, in-process facilitator) and compares what each observed.
 */

const { state, counter, creator } = paidTestTools();
const extra = { quoteRuns: 0, flakyFails: 0, flakyRuns: 0 };
/** A paid read with a cache: the second identical call is a free hit. */
const quote = defineTool({
  name: "test_quote",
  title: "Quote",
  method: "GET",
  path: "/test/quote/:label",
  priceUsd: "0.01",
  cacheTtlSec: 300,
  tags: ["test"],
  summary: "a cached paid read",
  description: "test tool",
  example: { label: "a" },
  input: z.object({ label: z.string() }),
  output: z.object({ label: z.string(), run: z.number() }),
  handler: async ({ label }) => ({ label, run: ++extra.quoteRuns }),
});
/** A paid read (verify, run, settle) whose handler fails its next `extra.flakyFails` runs with a 503. */
const flaky = defineTool({
  name: "test_flaky",
  title: "Flaky",
  method: "GET",
  path: "/test/flaky/:label",
  priceUsd: "0.01",
  cacheTtlSec: 0,
  tags: ["test"],
  summary: "fails on demand",
  description: "test tool",
  example: { label: "a" },
  input: z.object({ label: z.string() }),
  output: z.object({ label: z.string(), run: z.number() }),
  handler: async ({ label }) => {
    if (extra.flakyFails > 0) {
      extra.flakyFails--;
      throw new AppError("UPSTREAM_UNAVAILABLE", "venue unreachable", { retryAfterSec: 1 });
    }
    return { label, run: ++extra.flakyRuns };
  },
});

type Transport = "http" | "mcp";

/** What a caller sees of one answer, in terms both transports share. */
interface Seen {
  kind: "answer" | "hit" | "payment_required" | "error";
  class: "2xx" | "4xx" | "5xx";
  code?: string;
  /** The code of the 402's `error` (its reason up to the first colon; the rest may name the transport's fields). */
  reason?: string;
  /** The 402 offers credits (a SIWX challenge). */
  siwx?: boolean;
  /** How the answer was paid, by its receipt. */
  paid?: "x402" | "credits";
  /** Credits left, as the answer states them. */
  remainingUsd?: string;
  value?: unknown;
  /** The wait an error asks for: HTTP's `Retry-After`, MCP's `retry_after_sec` (text and `_meta`). */
  retryAfterSec?: number;
}

const classOf = (status: number): Seen["class"] => (status < 300 ? "2xx" : status < 500 ? "4xx" : "5xx");

/** Decoded 402 facts shared by both transports. */
function required(pr: PaymentRequired): Pick<Seen, "reason" | "siwx"> {
  return { reason: pr.error?.split(":")[0], siwx: pr.extensions?.["sign-in-with-x"] !== undefined };
}

async function seenHttp(res: Response): Promise<Seen> {
  const body = (await json(res)) as Record<string, unknown> & { error?: { code?: string } };
  if (res.status === 402) return { kind: "payment_required", class: "4xx", ...required(decodePaymentRequiredHeader(res.headers.get("payment-required")!)) };
  if (res.status >= 400) {
    const retryAfter = res.headers.get("retry-after");
    return { kind: "error", class: classOf(res.status), code: body.error?.code, ...(retryAfter === null ? {} : { retryAfterSec: Number(retryAfter) }) };
  }
  const remaining = res.headers.get("x-credits-remaining") ?? undefined;
  return {
    kind: res.headers.get("x-cache") === "HIT" ? "hit" : "answer",
    class: classOf(res.status),
    paid: res.headers.get("payment-response") ? "x402" : remaining ? "credits" : undefined,
    remainingUsd: remaining,
    value: body,
  };
}

function seenMcp(r: CallToolResult): Seen {
  if (r.isError) {
    const body = JSON.parse((r.content as Array<{ text: string }>)[0]!.text) as PaymentRequired & { error?: { code: ErrorCode }; retry_after_sec?: number };
    if (Array.isArray(body.accepts)) return { kind: "payment_required", class: "4xx", ...required(body) };
    const code = (body.error as { code: ErrorCode }).code;
    expect(r._meta?.[RETRY_AFTER_META], "_meta and text state the same wait").toBe(body.retry_after_sec);
    return { kind: "error", class: classOf(ERROR_STATUS[code]), code, ...(body.retry_after_sec === undefined ? {} : { retryAfterSec: body.retry_after_sec }) };
  }
  const meta = r._meta ?? {};
  const credits = meta["marketgate/credits"] as { remaining_usd?: string } | undefined;
  return {
    kind: meta["marketgate/cache"] === "HIT" ? "hit" : "answer",
    class: "2xx",
    paid: meta["x402/payment-response"] ? "x402" : credits ? "credits" : undefined,
    remainingUsd: credits?.remaining_usd,
    value: r.structuredContent,
  };
}

/** Counters whose deltas a call leaves, keyed by name and labels. */
const COUNTERS = [
  "marketgate_payments_settled_total",
  "marketgate_payments_failed_total",
  "marketgate_revenue_usdc_total",
  "marketgate_tool_cache_total",
  "marketgate_credits_spent_usd_total",
];

type Series = Map<string, { name: string; labels: Record<string, string>; value: number }>;

describe("one call pipeline: the same calls over HTTP and MCP reach the same outcome, metrics and ledger effect", () => {
  let stack: OfflineStack;
  let client: Client;
  /** Payer #1 pays with x402, payer #2 from credits. */
  const x402Payer = () => stack.payers[1]!;
  const creditsPayer = () => stack.payers[2]!;

  const counters = async (): Promise<Series> => {
    const all = (await json(await fetch(`${stack.url}/metrics?format=json`))) as Array<{ name: string; values: Array<{ labels: Record<string, string>; value: number }> }>;
    const out: Series = new Map();
    for (const m of all.filter((x) => COUNTERS.includes(x.name))) {
      for (const v of m.values) out.set(`${m.name}${JSON.stringify(Object.entries(v.labels).sort())}`, { name: m.name, labels: v.labels, value: v.value });
    }
    return out;
  };
  /** The series that changed between two snapshots, with `transport` checked and dropped (it must be `t`). */
  const deltas = (before: Series, after: Series, t: Transport): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [key, s] of after) {
      const d = Math.round((s.value - (before.get(key)?.value ?? 0)) * 1e6) / 1e6;
      if (d === 0) continue;
      const { transport, ...labels } = s.labels;
      if (transport !== undefined) expect(transport, `${s.name} transport label`).toBe(t);
      out[`${s.name}${JSON.stringify(Object.entries(labels).sort())}`] = d;
    }
    return out;
  };
  const creditsOf = async (wallet: string) => (await stack.service.ctx.credits!.ledger.account(wallet.toLowerCase())).balanceMicro;
  const ledger = (): PaymentLedger => stack.service.payments!.ledger;

  /** What one scenario did on one transport: the last answer, the counters' deltas, and the payers' balance changes. */
  interface Effect {
    seen: Seen;
    metrics: Record<string, number>;
    chainAtomic: bigint;
    creditsMicro: number;
  }

  /** Runs `call` for transport `t` and records its effect. */
  const observe = async (t: Transport, call: (t: Transport) => Promise<Seen>): Promise<Effect> => {
    const [m0, c0, k0] = await Promise.all([counters(), stack.balanceOf(x402Payer().address), creditsOf(creditsPayer().address)]);
    const seen = await call(t);
    const [m1, c1, k1] = await Promise.all([counters(), stack.balanceOf(x402Payer().address), creditsOf(creditsPayer().address)]);
    return { seen, metrics: deltas(m0, m1, t), chainAtomic: c1 - c0, creditsMicro: k1 - k0 };
  };

  /** Runs `call` over both transports; their effects must be equal but for the answers' values and balances left. */
  const parity = async (call: (t: Transport) => Promise<Seen>): Promise<Effect> => {
    const http = await observe("http", call);
    const mcp = await observe("mcp", call);
    const strip = (e: Effect) => ({ ...e, seen: { ...e.seen, value: undefined, remainingUsd: e.seen.remainingUsd === undefined ? undefined : "stated" } });
    expect(strip(mcp)).toEqual(strip(http));
    return http;
  };

  /** HTTP: a request to `tool` with `raw` input and `headers`. */
  const httpCall = (tool: AnyTool, raw: Record<string, string | number | boolean>, headers: Record<string, string> = {}) =>
    fetch(`${stack.url}${requestPath(tool, raw)}`, {
      method: tool.method,
      headers: { ...headers, ...(tool.method === "POST" ? { "content-type": "application/json" } : {}) },
      ...(tool.method === "POST" ? { body: JSON.stringify(raw) } : {}),
    });
  const mcpCall = async (tool: AnyTool, raw: Record<string, unknown>, meta?: Record<string, unknown>) =>
    (await client.callTool({ name: tool.name, arguments: raw, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
  /** The PaymentRequired of an unpaid call over `t`. */
  const paymentRequiredOf = async (t: Transport, tool: AnyTool, raw: Record<string, string>): Promise<PaymentRequired> => {
    if (t === "http") return decodePaymentRequiredHeader((await httpCall(tool, raw)).headers.get("payment-required")!);
    return JSON.parse(((await mcpCall(tool, raw)).content as Array<{ text: string }>)[0]!.text) as PaymentRequired;
  };
  /** Sends `payload` as the x402 payment of a call over `t`. */
  const paidCall = async (t: Transport, tool: AnyTool, raw: Record<string, string>, payload: PaymentPayload): Promise<Seen> =>
    t === "http" ? seenHttp(await httpCall(tool, raw, { "PAYMENT-SIGNATURE": header(payload) })) : seenMcp(await mcpCall(tool, raw, { "x402/payment": payload }));
  /** Signs the call's own 402 with the official x402 client. */
  const signFor = async (t: Transport, tool: AnyTool, raw: Record<string, string>, opts: Parameters<typeof signPayment>[2] = {}) =>
    signPayment(await paymentRequiredOf(t, tool, raw), x402Payer().privateKey, opts);
  /** A ledger method slowed down by `ms` where `when` holds, restored by the returned function. */
  const slowLedger = <K extends "release" | "set">(method: K, ms: number, when: (args: unknown[]) => boolean) => {
    const l = ledger();
    const original = (l[method] as (...a: unknown[]) => Promise<unknown>).bind(l);
    const spy = vi.spyOn(l, method).mockImplementation((async (...args: unknown[]) => {
      if (when(args)) await new Promise((r) => setTimeout(r, ms));
      return original(...args);
    }) as never);
    return () => spy.mockRestore();
  };

  beforeAll(async () => {
    stack = await startOfflineStack({
      tools: [...TOOLS, counter, creator, quote, flaky],
      env: { RATE_LIMIT_PER_MIN: "100000", FREE_RATE_LIMIT_PER_MIN: "100000", CREDITS_MIN_TOP_UP_USD: "0.10" },
    });
    client = new Client({ name: "parity", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
    // Credits for payer #2, topped up with the official x402 client.
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(creditsPayer().privateKey))));
    const res = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "1" }) });
    expect(res.status).toBe(200);
  });
  afterAll(async () => {
    await client?.close();
    await stack?.close();
  });

  it("x402-paid: 2xx with the receipt, the price moved on chain once, one settlement and its revenue", async () => {
    const raw = { label: "x402" };
    const e = await parity(async (t) => {
      if (t === "mcp") return paidCall(t, counter, raw, await signFor(t, counter, raw));
      // HTTP: the official @x402/fetch client answers the 402 by itself.
      const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(x402Payer().privateKey))));
      return seenHttp(await pay(`${stack.url}${requestPath(counter, raw)}`));
    });
    expect(e.seen).toMatchObject({ kind: "answer", class: "2xx", paid: "x402" });
    expect(e.chainAtomic).toBe(-20_000n);
    expect(e.metrics).toEqual({
      'marketgate_payments_settled_total[["method","x402"],["tool","test_counter"]]': 1,
      'marketgate_revenue_usdc_total[["tool","test_counter"]]': 0.02,
    });
  });

  it("credit-paid (SIWX proof): 2xx with the balance the debit left, nothing on chain, no extra ledger read", async () => {
    const raw = { label: "credits" };
    const e = await parity(async (t) => {
      const url = t === "http" ? `${stack.url}${requestPath(counter, raw)}` : `${stack.url}/mcp`;
      const proof = await siwxHeader(creditsPayer().privateKey, url);
      const reads = vi.spyOn(stack.service.ctx.credits!.ledger, "account");
      try {
        const seen =
          t === "http" ? await seenHttp(await httpCall(counter, raw, { "SIGN-IN-WITH-X": proof })) : seenMcp(await mcpCall(counter, raw, { "x402/sign-in-with-x": proof }));
        // The balance left is the one the reservation returned: no account read per call.
        expect(reads, t).not.toHaveBeenCalled();
        return seen;
      } finally {
        reads.mockRestore();
      }
    });
    expect(e.seen).toMatchObject({ kind: "answer", class: "2xx", paid: "credits", remainingUsd: expect.any(String) });
    expect(e.chainAtomic).toBe(0n);
    expect(e.creditsMicro).toBe(-20_000);
    expect(e.metrics).toEqual({
      'marketgate_payments_settled_total[["method","credits"],["tool","test_counter"]]': 1,
      'marketgate_credits_spent_usd_total[["tool","test_counter"]]': 0.02,
    });
  });

  it("credit-paid: the balance each transport states is the ledger's after the call", async () => {
    for (const t of ["http", "mcp"] as const) {
      const raw = { label: `remaining-${t}` };
      const url = t === "http" ? `${stack.url}${requestPath(counter, raw)}` : `${stack.url}/mcp`;
      const proof = await siwxHeader(creditsPayer().privateKey, url);
      const seen =
        t === "http" ? await seenHttp(await httpCall(counter, raw, { "SIGN-IN-WITH-X": proof })) : seenMcp(await mcpCall(counter, raw, { "x402/sign-in-with-x": proof }));
      expect(Number(seen.remainingUsd) * 1e6, t).toBe(await creditsOf(creditsPayer().address));
    }
  });

  it("free: 2xx, nothing charged, nothing counted", async () => {
    const free = TOOLS.find((t) => t.name === "stream_subscribe")!;
    const e = await parity(async (t) => (t === "http" ? seenHttp(await httpCall(free, free.example)) : seenMcp(await mcpCall(free, free.example))));
    expect(e.seen).toMatchObject({ kind: "answer", class: "2xx", paid: undefined });
    expect(e).toMatchObject({ chainAtomic: 0n, creditsMicro: 0, metrics: {} });
  });

  it("sign-in tool: a 402 with the SIWX challenge without a proof, the wallet's answer with one", async () => {
    const tool = TOOLS.find((t) => t.name === "credits_get")!;
    const anon = await parity(async (t) => (t === "http" ? seenHttp(await httpCall(tool, {})) : seenMcp(await mcpCall(tool, {}))));
    expect(anon.seen).toMatchObject({ kind: "payment_required", class: "4xx", siwx: true, reason: "sign_in_required" });
    expect(anon.metrics).toEqual({});
    const signed = await parity(async (t) => {
      const proof = await siwxHeader(creditsPayer().privateKey, t === "http" ? `${stack.url}${requestPath(tool, {})}` : `${stack.url}/mcp`);
      return t === "http" ? seenHttp(await httpCall(tool, {}, { "SIGN-IN-WITH-X": proof })) : seenMcp(await mcpCall(tool, {}, { "x402/sign-in-with-x": proof }));
    });
    expect(signed.seen).toMatchObject({ kind: "answer", class: "2xx", value: { wallet: creditsPayer().address.toLowerCase() } });
    expect(signed).toMatchObject({ chainAtomic: 0n, creditsMicro: 0, metrics: {} });
  });

  it("cached: a paid miss, then the same call is a free hit", async () => {
    const miss = await parity(async (t) => {
      const raw = { label: `cached-${t}` };
      return paidCall(t, quote, raw, await signFor(t, quote, raw));
    });
    expect(miss.seen).toMatchObject({ kind: "answer", class: "2xx", paid: "x402" });
    expect(miss.chainAtomic).toBe(-10_000n);
    expect(miss.metrics).toEqual({
      'marketgate_payments_settled_total[["method","x402"],["tool","test_quote"]]': 1,
      'marketgate_revenue_usdc_total[["tool","test_quote"]]': 0.01,
      'marketgate_tool_cache_total[["result","miss"],["tool","test_quote"]]': 2,
    });
    const hit = await parity(async (t) => {
      const raw = { label: `cached-${t}` };
      return t === "http" ? seenHttp(await httpCall(quote, raw)) : seenMcp(await mcpCall(quote, raw));
    });
    expect(hit.seen).toMatchObject({ kind: "hit", class: "2xx", paid: undefined });
    expect(hit).toMatchObject({ chainAtomic: 0n, metrics: { 'marketgate_tool_cache_total[["result","hit"],["tool","test_quote"]]': 1 } });
  });

  it("refused: an underpaying payment is a 402 with the facilitator's reason, counted as a verify failure, nothing charged or run", async () => {
    const raw = { label: "refused" };
    const runs = state.runs;
    const e = await parity(async (t) => paidCall(t, counter, raw, await signFor(t, counter, raw, { signFor: (r) => ({ ...r, amount: "1" }) })));
    expect(e.seen).toMatchObject({ kind: "payment_required", class: "4xx", siwx: true });
    expect(e.seen.reason).toBeTruthy();
    expect(e.chainAtomic).toBe(0n);
    expect(e.metrics).toEqual({ 'marketgate_payments_failed_total[["stage","verify"],["tool","test_counter"]]': 1 });
    expect(state.runs).toBe(runs);
  });

  it("handler failing: the error, nothing charged; a retry right after with the same payment runs once", async () => {
    // A slow ledger release: answering before the authorization is free would refuse the retry.
    const restore = slowLedger("release", 300, () => true);
    try {
      const e = await parity(async (t) => {
        const raw = { label: `fail-${t}` };
        const payload = await signFor(t, flaky, raw);
        extra.flakyFails = 1;
        const failed = await paidCall(t, flaky, raw, payload);
        expect(failed, t).toMatchObject({ kind: "error", class: "5xx", code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 1 });
        return paidCall(t, flaky, raw, payload);
      });
      expect(e.seen).toMatchObject({ kind: "answer", class: "2xx", paid: "x402" });
      expect(e.chainAtomic).toBe(-10_000n);
      expect(e.metrics).toEqual({
        'marketgate_payments_settled_total[["method","x402"],["tool","test_flaky"]]': 1,
        'marketgate_revenue_usdc_total[["tool","test_flaky"]]': 0.01,
      });
    } finally {
      restore();
    }
  });

  it("handler failing after an upfront settlement: charged once, and a retry right after gets the owed run free", async () => {
    // A slow write of the owed run: answering before it is recorded would refuse the retry as a used nonce.
    const restore = slowLedger("set", 300, (args) => (args[1] as AuthorizationState).state === "prepaid");
    try {
      const e = await parity(async (t) => {
        const raw = { name: `upfront-${t}` };
        const payload = await signFor(t, creator, raw);
        state.failCreates = 1;
        const failed = await paidCall(t, creator, raw, payload);
        expect(failed, t).toMatchObject({ kind: "error", class: "5xx", code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 1 });
        return paidCall(t, creator, raw, payload);
      });
      expect(e.seen).toMatchObject({ kind: "answer", class: "2xx", paid: "x402" });
      expect(e.chainAtomic).toBe(-30_000n);
      expect(e.metrics).toEqual({
        'marketgate_payments_settled_total[["method","x402"],["tool","test_create"]]': 1,
        'marketgate_revenue_usdc_total[["tool","test_create"]]': 0.03,
      });
    } finally {
      restore();
    }
  });

  it("settle throwing (the ledger fails after the transfer): 502 'retry with the same payment', counted as settle_unknown", async () => {
    const raw = { label: "settle-throws" };
    const runs = state.runs;
    const e = await parity(async (t) => {
      const paid = await signFor(t, counter, raw);
      // The payment identifier's answer is recorded after the transfer: that write fails once.
      const withId = { ...paid, extensions: appendPaymentIdentifierToExtensions({ ...paid.extensions }, generatePaymentId()) } as PaymentPayload;
      const spy = vi.spyOn(ledger(), "setIdempotent").mockRejectedValueOnce(new Error("payment ledger unreachable"));
      try {
        if (t === "http") {
          const res = await httpCall(counter, raw, { "PAYMENT-SIGNATURE": header(withId) });
          expect(res.headers.get("retry-after")).toBe("5");
          const seen = await seenHttp(res.clone());
          expect(((await json(res)) as { error: { message: string } }).error.message).toMatch(/Retry with the same payment/);
          return seen;
        }
        const r = await mcpCall(counter, raw, { "x402/payment": withId });
        expect(JSON.parse((r.content as Array<{ text: string }>)[0]!.text).error.message).toMatch(/Retry with the same payment/);
        return seenMcp(r);
      } finally {
        spy.mockRestore();
      }
    });
    expect(e.seen).toMatchObject({ kind: "error", class: "5xx", code: "UPSTREAM_ERROR", retryAfterSec: 5 });
    expect(e.chainAtomic).toBe(-20_000n);
    expect(e.metrics).toEqual({ 'marketgate_payments_failed_total[["stage","settle_unknown"],["tool","test_counter"]]': 1 });
    expect(state.runs - runs).toBe(2);
  });
});
