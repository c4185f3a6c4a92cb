import { connect } from "node:net";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFree, requestPath, type AnyTool } from "../../src/registry/tool.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";

/*
 * The 402's header block (status line and every header, as a reverse proxy reads it) must fit a proxy's response
 * buffer, or the proxy answers 502 instead: nginx reads it into one `proxy_buffer_size` buffer, 4 KB (one memory
 * page) by default, and refuses larger ones ("upstream sent too big header"). Bounds: under 8 KB with everything
 * on (credits' SIWX challenge, both MPP challenges: MPP_CHALLENGES=always); under 4 KB, nginx's default, for a client
 * that does not speak MPP with MPP on as by default (MPP_CHALLENGES=negotiated: no challenge without Accept-Payment;
 * docs/payments.md), which is also the 402 with MPP off.
 */

/** Hard bound of any 402's header block, bytes. */
const MAX_402_HEADER_BYTES = 8192;
/** nginx's default `proxy_buffer_size` on x86-64 Linux (one memory page), bytes. */
const NGINX_DEFAULT_PROXY_BUFFER = 4096;

/** A loopback webhook the alert tools accept before payment (with WEBHOOK_ALLOW_LOOPBACK). */
const WEBHOOK = "https://127.0.0.1/marketgate";

/** The raw status line and headers of one HTTP/1.1 request, as the service writes them. */
async function rawHeaderBlock(url: string, method: string, body?: string, extra: readonly string[] = []): Promise<{ status: number; block: string }> {
  const u = new URL(url);
  const head = [`${method} ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, "Connection: close", "Accept: application/json", ...extra];
  if (body !== undefined) head.push("Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`);
  const request = `${head.join("\r\n")}\r\n\r\n${body ?? ""}`;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => socket.write(request));
    let got = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      got += chunk;
      const end = got.indexOf("\r\n\r\n");
      if (end >= 0) {
        socket.destroy();
        resolve({ status: Number(got.slice(9, 12)), block: got.slice(0, end + 4) });
      }
    });
    socket.on("error", reject);
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no answer from ${url}`)));
  });
}

/** The unpaid request of a tool: its example, with a loopback webhook for the alert tools and a real alert id to extend. */
function unpaidRequest(base: string, tool: AnyTool, ids: Record<string, string>): { url: string; method: string; body?: string } {
  const example: Record<string, string | number | boolean> = { ...tool.example };
  if ("webhook_url" in example) example.webhook_url = WEBHOOK;
  if ("id" in example && ids[tool.name]) example.id = ids[tool.name]!;
  const url = `${base}${requestPath(tool, example)}`;
  return tool.method === "POST" ? { url, method: "POST", body: JSON.stringify(example) } : { url, method: tool.method };
}

/**
 * Header blocks of every paid tool's 402 on `stack`, by tool name (creating one alert of each kind to extend), the
 * unpaid requests carrying `extra` request headers (e.g. an MPP client's `Accept-Payment`).
 */
async function paidHeaderBlocks(stack: OfflineStack, payerIndex: number, extra: readonly string[] = []): Promise<Map<string, string>> {
  const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(stack.payers[payerIndex]!.privateKey))));
  const ids: Record<string, string> = {};
  for (const [create, extend] of [
    ["liquidation_alert_create", "liquidation_alert_extend"],
    ["price_alert_create", "price_alert_extend"],
  ] as const) {
    const tool = TOOLS.find((t) => t.name === create)!;
    const res = await pay(`${stack.url}${tool.path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...tool.example, webhook_url: WEBHOOK }),
    });
    expect(res.status, create).toBe(200);
    ids[extend] = ((await res.json()) as { alert_id: string }).alert_id;
  }
  const blocks = new Map<string, string>();
  for (const tool of TOOLS.filter((t) => !isFree(t))) {
    const r = unpaidRequest(stack.url, tool, ids);
    const { status, block } = await rawHeaderBlock(r.url, r.method, r.body, extra);
    expect(status, `${tool.name}: ${block.slice(0, 200)}`).toBe(402);
    blocks.set(tool.name, block);
  }
  return blocks;
}

const headerValue = (block: string, name: string): string[] =>
  block
    .split("\r\n")
    .filter((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    .map((l) => l.slice(name.length + 1).trim());

describe("every paid endpoint's 402 header block fits a reverse proxy's buffer", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    // Credits (SIWX challenge) are on by default; MPP offers both challenges on every 402 (the largest case).
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true", MPP_CHALLENGES: "always" } });
  });
  afterAll(() => stack?.close());

  it("stays under 8 KB with credits and both MPP challenges, with no duplicate or non-standard header", async () => {
    const blocks = await paidHeaderBlocks(stack, 6, ["Accept-Payment: evm/charge, tempo/charge"]);
    expect(blocks.size).toBe(TOOLS.filter((t) => !isFree(t)).length);
    const sizes: Record<string, number> = {};
    for (const [name, block] of blocks) {
      sizes[name] = Buffer.byteLength(block, "latin1");
      expect(sizes[name], `${name}: ${sizes[name]} bytes`).toBeLessThan(MAX_402_HEADER_BYTES);
      // v2 requirements in PAYMENT-REQUIRED only: no v1 copy in an X-PAYMENT response header.
      expect(headerValue(block, "X-PAYMENT"), name).toEqual([]);
      expect(headerValue(block, "PAYMENT-REQUIRED"), name).toHaveLength(1);
      const required = decodePaymentRequiredHeader(headerValue(block, "PAYMENT-REQUIRED")[0]!);
      expect(Object.keys(required.extensions ?? {}).sort(), name).toEqual(["bazaar", "payment-identifier", "sign-in-with-x"]);
      // The challenges carry only what their specs require: no statement or resources in SIWX, no description in MPP.
      expect(Object.keys((required.extensions!["sign-in-with-x"] as { info: object }).info).sort(), name).toEqual(["domain", "issuedAt", "nonce", "uri", "version"]);
      const challenges = headerValue(block, "WWW-Authenticate").join(", ");
      expect(challenges.match(/Payment id=/g), name).toHaveLength(2);
      expect(challenges, name).not.toContain("description=");
    }
    // The largest one, for the record when the bound is approached.
    const largest = Object.entries(sizes).sort((a, b) => b[1] - a[1])[0]!;
    expect(largest[1], `largest: ${largest[0]}`).toBeLessThan(MAX_402_HEADER_BYTES);
  });
});

describe("with MPP on (negotiated, the default), a 402 to a client that does not speak MPP fits nginx's default 4 KB proxy buffer", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true" } });
  });
  afterAll(() => stack?.close());

  it("offers an MPP client one challenge, under 8 KB", async () => {
    const blocks = await paidHeaderBlocks(stack, 5, ["Accept-Payment: tempo/charge;q=0.5, evm/charge"]);
    const sizes = Object.fromEntries([...blocks].map(([name, block]) => [name, Buffer.byteLength(block, "latin1")]));
    for (const [name, block] of blocks) {
      expect(sizes[name], name).toBeLessThan(MAX_402_HEADER_BYTES);
      expect(headerValue(block, "WWW-Authenticate"), name).toHaveLength(1);
      expect(headerValue(block, "WWW-Authenticate")[0], name).toContain('method="evm"');
    }
  });

  it("stays under 4 KB with credits on and no Accept-Payment (an x402 client)", async () => {
    const blocks = await paidHeaderBlocks(stack, 7);
    const sizes = Object.fromEntries([...blocks].map(([name, block]) => [name, Buffer.byteLength(block, "latin1")]));
    for (const [name, block] of blocks) {
      expect(sizes[name], `${name}; all: ${JSON.stringify(sizes)}`).toBeLessThan(NGINX_DEFAULT_PROXY_BUFFER);
      expect(headerValue(block, "WWW-Authenticate"), name).toEqual([]);
    }
    const largest = Object.entries(sizes).sort((a, b) => b[1] - a[1])[0]!;
    console.info(`402 header blocks for an x402 client: largest ${largest[1]} bytes (${largest[0]})`);
  });
});

describe("with Solana offered too (PAY_TO_SOLANA), a 402 lists both networks and stays under 8 KB", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack({ solana: true, env: { RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true", MPP_CHALLENGES: "always" } });
  });
  afterAll(() => stack?.close());

  it("under 8 KB with both accepts entries, credits and both MPP challenges (docs/operations/deploy.md: proxy_buffer_size 8k)", async () => {
    const blocks = await paidHeaderBlocks(stack, 4, ["Accept-Payment: evm/charge, tempo/charge"]);
    const sizes = Object.fromEntries([...blocks].map(([name, block]) => [name, Buffer.byteLength(block, "latin1")]));
    for (const [name, block] of blocks) {
      expect(sizes[name], `${name}; all: ${JSON.stringify(sizes)}`).toBeLessThan(MAX_402_HEADER_BYTES);
      const required = decodePaymentRequiredHeader(headerValue(block, "PAYMENT-REQUIRED")[0]!);
      expect(
        required.accepts.map((a) => a.network),
        name,
      ).toEqual(["eip155:8453", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"]);
    }
    console.info(`402 header blocks with Solana: largest ${Math.max(...Object.values(sizes))} bytes`);
  });
});
