import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { fetchVia } from "../helpers/host-fetch.js";
import { upgradeStatus } from "../helpers/ws-upgrade.js";
import { json } from "../helpers/json.js";
import { OTHER_SITE, startOtherSite, type OtherSite } from "../helpers/other-site.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { siwxHeader } from "../helpers/siwx.js";

const { state, counter } = paidTestTools();

/** The text of an MCP tool result. */
const resultText = (r: Record<string, unknown>) => (r.content as Array<{ text: string }>)[0]!.text;

/**
 * Issue 20 finding 1: the origin SIWX proofs and credits sessions are bound to is configuration (here the
 * loopback bind), never the request's Host or X-Forwarded-Host. A victim signs in at another x402 service
 * with the official `wrapFetchWithSIWx`; the attacker replays that proof here under the other site's name,
 * over HTTP, MCP, SSE, `/ws` and `/mcp/live`. Every attempt is a 402 and the victim's credits do not move.
 * (MCP and `/ws` of a loopback bind now refuse the other site's name with a 403 before reading anything,
 * issue 31 finding 7: there the proof is replayed under this service's own name.)
 */
describe("SIWX origin is configuration: a proof signed for another site spends nothing here", () => {
  let stack: OfflineStack;
  let other: OtherSite;
  const payer = (i: number) => stack.payers[i]!;
  /** The attacker: reaches this service but names the other site in Host. */
  const asOtherSite = () => fetchVia(stack.url, { host: OTHER_SITE });
  const topUp = async (i: number, amount: string) => {
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));
    const res = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: amount }) });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
  };
  /** The victim's own view of its account (a proof for this service's origin). */
  const account = async (i: number) =>
    json(await fetch(`${stack.url}/api/v1/credits`, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, `${stack.url}/api/v1/credits`) } }));

  beforeAll(async () => {
    other = await startOtherSite();
    // TRUST_PROXY=loopback: express believes X-Forwarded-Host from the test client, as it would from a proxy.
    stack = await startOfflineStack({
      tools: [...TOOLS, counter],
      env: { RATE_LIMIT_PER_MIN: "100000", FREE_RATE_LIMIT_PER_MIN: "100000", CREDITS_MIN_TOP_UP_USD: "0.01", LIVE_STREAM_MINUTE_MS: "1500", TRUST_PROXY: "loopback" },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await other?.close();
  });

  it("HTTP: the victim's proof for the other site, sent with its Host or X-Forwarded-Host, is a 402 that debits, reads and changes nothing", async () => {
    const i = 1;
    await topUp(i, "0.5");
    const capsUrl = `${stack.url}/api/v1/credits/caps`;
    const own = await fetch(capsUrl, {
      method: "POST",
      headers: { "content-type": "application/json", "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, capsUrl) },
      body: JSON.stringify({ per_call_max_usd: "0.05" }),
    });
    expect(own.status).toBe(200);
    const runs = state.runs;

    const stolen = await asOtherSite()(`${other.origin}/test/counter/stolen`, { headers: { "SIGN-IN-WITH-X": await other.proofFrom(payer(i).privateKey) } });
    expect(stolen.status).toBe(402);
    expect((await json(stolen)).error).toMatch(/^invalid_siwx_domain/);
    expect(stolen.headers.get("x-credits-session")).toBeNull();
    // The 402's challenge names this service's origin, not the Host the request gave.
    const challenge = JSON.parse(Buffer.from(stolen.headers.get("payment-required")!, "base64").toString()).extensions["sign-in-with-x"].info;
    expect(challenge.domain).toBe(new URL(stack.url).host);

    const read = await asOtherSite()(`${other.origin}/api/v1/credits`, { headers: { "SIGN-IN-WITH-X": await other.proofFrom(payer(i).privateKey) } });
    expect(read.status).toBe(402);
    const uncap = await asOtherSite()(`${other.origin}/api/v1/credits/caps`, {
      method: "POST",
      headers: { "content-type": "application/json", "SIGN-IN-WITH-X": await other.proofFrom(payer(i).privateKey) },
      body: JSON.stringify({ per_call_max_usd: "100" }),
    });
    expect(uncap.status).toBe(402);

    // A proxy that forwards the other site's name in X-Forwarded-Host (trusted here) changes nothing.
    const forwarded: Array<Record<string, string>> = [
      { "X-Forwarded-Host": OTHER_SITE, "X-Forwarded-Proto": "http" },
      { "X-Forwarded-Host": `${OTHER_SITE}, ${new URL(stack.url).host}` },
    ];
    for (const headers of forwarded) {
      const res = await fetch(`${stack.url}/test/counter/stolen-xfh`, { headers: { ...headers, "SIGN-IN-WITH-X": await other.proofFrom(payer(i).privateKey) } });
      expect(res.status).toBe(402);
      expect((await json(res)).error).toMatch(/^invalid_siwx_domain/);
    }
    const both = await fetchVia(stack.url, { host: OTHER_SITE, headers: { "X-Forwarded-Host": OTHER_SITE } })(`${other.origin}/test/counter/stolen-both`, {
      headers: { "SIGN-IN-WITH-X": await other.proofFrom(payer(i).privateKey) },
    });
    expect(both.status).toBe(402);

    expect(state.runs).toBe(runs);
    expect(await account(i)).toMatchObject({ balance_usd: "0.5", spent_usd: "0", caps: { per_call_max_usd: "0.05" } });
  });

  it("HTTP: a proof for the configured origin pays whatever Host the request names, and its session token is bound to that origin", async () => {
    const i = 2;
    await topUp(i, "0.1");
    const official = await wrapFetchWithSIWx(fetch, privateKeyToAccount(payer(i).privateKey))(`${stack.url}/test/counter/mine`);
    expect(official.status).toBe(200);
    expect(official.headers.get("x-credits-remaining")).toBe("0.08");

    const url = `${stack.url}/test/counter/mine-2`;
    const res = await asOtherSite()(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, url) } });
    expect(res.status).toBe(200);
    const token = res.headers.get("x-credits-session")!;
    expect(token).toMatch(/^v1\./);
    // Minted for the configured origin: it pays on this service's own name.
    const again = await fetch(`${stack.url}/test/counter/mine-3`, { headers: { "X-Credits-Session": token } });
    expect(again.status).toBe(200);
    expect(await account(i)).toMatchObject({ balance_usd: "0.04", spent_usd: "0.06" });
  });

  it("a nonce is spent once for the whole service, whichever of its configured origins the proof names", async () => {
    const i = 5;
    await topUp(i, "0.1");
    const nonce = "f00dfeedf00dfeedf00dfeed";
    const first = `${stack.url}/test/counter/nonce-1`;
    expect((await fetch(first, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, first, { nonce }) } })).status).toBe(200);
    // The same nonce signed for the service's other loopback name (http://localhost:<port>), asked there.
    const other = `${stack.url.replace("127.0.0.1", "localhost")}/test/counter/nonce-2`;
    const replay = await fetchVia(stack.url)(other, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, other, { nonce }) } });
    expect(replay.status).toBe(402);
    expect((await json(replay)).error).toMatch(/^invalid_siwx_nonce/);
    expect(await account(i)).toMatchObject({ spent_usd: "0.02" });
  });

  it("MCP (/mcp, SDK client): the foreign proof in _meta['x402/sign-in-with-x'] is refused; this origin's proof pays", async () => {
    const i = 3;
    await topUp(i, "0.2");
    // Under the other site's Host, a loopback-bound service's MCP endpoints answer nothing at all (DNS
    // rebinding guard, issue 31 finding 7: test/http/browser-origin.test.ts); the proof is refused by itself below.
    await expect(
      new Client({ name: "attacker", version: "1" }).connect(new StreamableHTTPClientTransport(new URL(`${other.origin}/mcp`), { fetch: fetchVia(stack.url) })),
    ).rejects.toThrow(/FORBIDDEN/);
    const client = new Client({ name: "attacker", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
    try {
      const runs = state.runs;
      const paid = await client.callTool({
        name: "test_counter",
        arguments: { label: "mcp-stolen" },
        _meta: { "x402/sign-in-with-x": await other.proofFrom(payer(i).privateKey, "/mcp") },
      });
      expect(paid.isError).toBe(true);
      expect(JSON.parse(resultText(paid)).error).toMatch(/^invalid_siwx_domain/);
      const me = await client.callTool({ name: "credits_get", arguments: {}, _meta: { "x402/sign-in-with-x": await other.proofFrom(payer(i).privateKey, "/mcp") } });
      expect(me.isError).toBe(true);
      // The 402's PaymentRequired (structuredContent and text, x402 MCP transport), never the account.
      expect(me.structuredContent).toEqual(JSON.parse(resultText(me)));
      expect(me.structuredContent).not.toHaveProperty("balance_usd");
      expect(state.runs).toBe(runs);

      const mine = await client.callTool({
        name: "test_counter",
        arguments: { label: "mcp-mine" },
        _meta: { "x402/sign-in-with-x": await siwxHeader(payer(i).privateKey, `${stack.url}/mcp`) },
      });
      expect(mine.isError).toBeFalsy();
      expect(mine._meta?.["marketgate/credits"]).toMatchObject({ remaining_usd: "0.18" });
    } finally {
      await client.close();
    }
    expect(await account(i)).toMatchObject({ balance_usd: "0.18", spent_usd: "0.02" });
  });

  it("streams: SSE, /ws and /mcp/live refuse the foreign proof (SSE under the other site's Host too), and debit no minute", async () => {
    const i = 4;
    await topUp(i, "0.1");

    const sse = await asOtherSite()(`${other.origin}/stream/liquidations`, { headers: { "SIGN-IN-WITH-X": await other.proofFrom(payer(i).privateKey, "/stream/liquidations") } });
    expect(sse.status).toBe(402);
    expect((await json(sse)).error).toMatch(/^invalid_siwx_domain/);
    const viaQuery = await asOtherSite()(`${other.origin}/stream/liquidations?siwx=${encodeURIComponent(await other.proofFrom(payer(i).privateKey, "/stream/liquidations"))}`);
    expect(viaQuery.status).toBe(402);

    // /ws and /mcp/live of a loopback bind refuse the other site's Host (or X-Forwarded-Host) outright (403, the
    // DNS rebinding guard); under this service's own name the foreign proof is a 402.
    const ws = new WebSocket(`${stack.url.replace("http", "ws")}/ws`, { headers: { host: OTHER_SITE, "SIGN-IN-WITH-X": await other.proofFrom(payer(i).privateKey, "/ws") } });
    expect(await upgradeStatus(ws)).toBe(403);
    const wsXfh = new WebSocket(`${stack.url.replace("http", "ws")}/ws`, {
      headers: { "X-Forwarded-Host": OTHER_SITE, "SIGN-IN-WITH-X": await other.proofFrom(payer(i).privateKey, "/ws") },
    });
    expect(await upgradeStatus(wsXfh)).toBe(403);
    const wsOwn = new WebSocket(`${stack.url.replace("http", "ws")}/ws`, { headers: { "SIGN-IN-WITH-X": await other.proofFrom(payer(i).privateKey, "/ws") } });
    expect(await upgradeStatus(wsOwn)).toBe(402);

    await expect(
      new Client({ name: "attacker", version: "1" }).connect(new StreamableHTTPClientTransport(new URL(`${other.origin}/mcp/live`), { fetch: fetchVia(stack.url) })),
    ).rejects.toThrow(/FORBIDDEN/);
    const client = new Client({ name: "attacker", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp/live`)));
    try {
      const err = await client
        .subscribeResource({ uri: "marketgate://liquidations/ETH", _meta: { "x402/sign-in-with-x": await other.proofFrom(payer(i).privateKey, "/mcp/live") } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(402);
      expect((err as McpError & { data: { reason: string } }).data.reason).toMatch(/^invalid_siwx_domain/);
    } finally {
      await client.close();
    }

    expect(stack.service.live.limits.open).toBe(0);
    expect(await account(i)).toMatchObject({ balance_usd: "0.1", spent_usd: "0" });
    // The same proofs for this service's origin open the streams (the refusals above were about the origin).
    const mine = new WebSocket(`${stack.url.replace("http", "ws")}/ws`, {
      headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, `${stack.url}/ws`) },
    });
    expect(await upgradeStatus(mine)).toBe("open");
  });
});
