import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, PaymentRequiredError, ServiceError, SpendCapError, type ClientOptions, type ToolName } from "../../src/client/index.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../src/sandbox/https-receiver.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { isFree, type AnyTool } from "../../src/registry/tool.js";
import { TOOLS } from "../../tools/index.js";
import { testLiquidation } from "../helpers/liquidations.js";
import { until } from "../helpers/wait.js";

/** Micro-USD (= atomic USDC) of a decimal USD price. */
const atomic = (usd: string) => BigInt(Math.round(Number(usd) * 1e6));
const MINUTE_MS = 1500;

/*
 * The typed client against the offline stack (venue simulator, anvil with USDC at the Base address, the official
 * facilitator in process): it pays every paid tool once with x402 on Base, pays from credits and with MPP, refuses
 * over its caps with nothing charged, pages with cursors and reads a paid stream until it closes it.
 */
describe("marketgate/client against a paid service on anvil", () => {
  let stack: OfflineStack;
  let receiver: HttpsReceiver;
  const caDir = mkdtempSync(join(tmpdir(), "marketgate-client-"));
  const client = (payer: number, more: Partial<ClientOptions> = {}) => createClient({ url: stack.url, wallet: { evmPrivateKey: stack.payers[payer]!.privateKey }, ...more });
  const balance = (payer: number) => stack.balanceOf(stack.payers[payer]!.address);

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    const caFile = join(caDir, "receiver-ca.pem");
    writeFileSync(caFile, receiver.ca);
    stack = await startOfflineStack({
      env: {
        RATE_LIMIT_PER_MIN: "100000",
        WEBHOOK_ALLOW_LOOPBACK: "true",
        WEBHOOK_EXTRA_CA_FILE: caFile,
        MPP_SECRET_KEY: "test-only-mpp-secret-key-of-32-bytes!!",
        LIVE_STREAM_MINUTE_MS: String(MINUTE_MS),
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    rmSync(caDir, { recursive: true, force: true });
  });

  it("pays every paid tool once with x402 on Base: each answer valid, its cost the price, the balance down by exactly it", async () => {
    const c = client(1, { maxUsdPerCall: "1" });
    const webhook_url = receiver.url("/hook");
    const created: Record<string, string> = {};
    // Inputs: each tool's registry example; the alerts get the local receiver, the extensions the alerts just created.
    const inputOf = (tool: AnyTool): Record<string, unknown> => {
      if (tool.name === "credits_top_up") return { amount_usd: "0.5" };
      if (tool.name.endsWith("_extend")) return { ...tool.example, id: created[tool.name.replace(/_extend$/, "_create")] };
      return "webhook_url" in tool.example ? { ...tool.example, webhook_url } : { ...tool.example };
    };
    // Creations before their extensions.
    const paid = TOOLS.filter((t) => !isFree(t)).sort((a, b) => Number(a.name.endsWith("_extend")) - Number(b.name.endsWith("_extend")));
    expect(paid.length).toBeGreaterThan(25);
    let total = 0n;
    const start = await balance(1);
    for (const tool of paid) {
      const before = await balance(1);
      const input = inputOf(tool);
      const r = await c.call(tool.name as ToolName, input as never);
      expect(r.status, tool.name).toBe(200);
      expect(tool.output.safeParse(r.data).success, tool.name).toBe(true);
      const price = tool.priceOf ? tool.priceOf(tool.input.parse(input)) : tool.priceUsd;
      expect(r.cost, tool.name).toMatchObject({ method: "x402", usd: String(Number(price)), network: "eip155:8453", payer: stack.payers[1]!.address });
      expect(r.cost.transaction, tool.name).toMatch(/^0x[0-9a-f]{64}$/);
      expect(r.cacheHit).toBe(false);
      expect(await balance(1), tool.name).toBe(before - atomic(price));
      total += atomic(price);
      if ("alert_id" in (r.data as object)) created[tool.name] = (r.data as { alert_id: string }).alert_id;
    }
    expect(start - (await balance(1))).toBe(total);
    expect(c.spentUsd).toBe(String(Number(total) / 1e6));

    // The same call again within its cache TTL: a free hit.
    const again = await c.tools.funding_rate({ symbol: "ETH" });
    expect(again).toMatchObject({ cacheHit: true, cost: { method: "free", usd: "0" } });
    expect(start - (await balance(1))).toBe(total);
  }, 120_000);

  it("refuses a charge over the per-call or the per-session cap before signing: nothing charged", async () => {
    const before = await balance(2);
    const perCall = client(2, { maxUsdPerCall: "0.01" });
    const refused = await perCall.tools.liquidation_heatmap({ symbol: "ETH" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SpendCapError);
    expect(refused).toMatchObject({ code: "SPEND_CAP", details: { cap: "per_call", priceUsd: "0.05", limitUsd: "0.01" } });
    expect(await balance(2)).toBe(before);

    const session = client(2, { maxUsdPerSession: "0.03" });
    const first = await session.tools.basis({ symbol: "SOL" });
    expect(first.cost).toMatchObject({ method: "x402", usd: "0.02" });
    const second = await session.tools.long_short({ symbol: "SOL" }).catch((e: unknown) => e);
    expect(second).toMatchObject({ code: "SPEND_CAP", details: { cap: "per_session", priceUsd: "0.02", limitUsd: "0.03", spentUsd: "0.02" } });
    expect(await balance(2)).toBe(before - 20_000n);
    expect(session.spentUsd).toBe("0.02");

    // Without a key the 402 comes back as a typed error carrying the service's answer; errors are typed too.
    const unpaid = await createClient({ url: stack.url })
      .tools.cex_prices({ symbols: "btc" })
      .catch((e: unknown) => e);
    expect(unpaid).toBeInstanceOf(PaymentRequiredError);
    const bad = await session.tools.funding_rate({ symbol: "NOT_A_COIN_123" }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ServiceError);
    expect((bad as ServiceError).status).toBeGreaterThanOrEqual(400);
    expect((bad as ServiceError).code).toMatch(/^(BAD_REQUEST|UNKNOWN_SYMBOL)$/);
    expect(await balance(2)).toBe(before - 20_000n);
  });

  it("pays from credits: a top-up with x402, then calls debited with no chain transaction, the session token reused", async () => {
    const c = client(3, { pay: "credits" });
    const top = await c.topUp("1");
    expect(top.cost).toMatchObject({ method: "x402", usd: "1" });
    expect(top.data).toMatchObject({ credited_now_usd: "1" });
    const before = await balance(3);

    const first = await c.tools.basis({ symbol: "BNB" });
    expect(first.cost).toEqual({ method: "credits", usd: "0.02", creditsRemainingUsd: "0.98" });
    const token = c.creditsSession;
    expect(token).toMatch(/^v1\./);
    const second = await c.tools.open_interest({ symbol: "BNB" });
    expect(second.cost).toEqual({ method: "credits", usd: "0.03", creditsRemainingUsd: "0.95" });
    const account = await c.tools.credits_get();
    expect(account.data).toMatchObject({ balance_usd: "0.95" });
    expect(await balance(3)).toBe(before);
    expect(c.spentUsd).toBe("1.05");

    // A client started from the token alone (no key) spends the same credits.
    const tokenOnly = createClient({ url: stack.url, pay: "credits", creditsSession: token });
    expect((await tokenOnly.tools.funding_compare({ symbol: "BNB" })).cost).toMatchObject({ method: "credits", creditsRemainingUsd: "0.92" });
  });

  it("pays with MPP (the evm charge, settled on Base)", async () => {
    const before = await balance(4);
    const r = await client(4, { pay: "mpp" }).tools.cex_market({ id: "litecoin" });
    expect(r.data.data.id).toBe("litecoin");
    expect(r.cost).toMatchObject({ method: "mpp", usd: "0.005", network: "eip155:8453", receipt: { method: "evm", status: "success" } });
    expect(r.cost.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await balance(4)).toBe(before - 5_000n);
  });

  it("iterates a paged tool with its cursors, each page paid once", async () => {
    stack.service.ctx.ingestion!.liquidations.add(Array.from({ length: 12 }, (_, n) => testLiquidation(900 + n, "LINK")));
    const c = client(5);
    const before = await balance(5);
    const pages = [];
    for await (const page of c.pages("liquidation_recent", { symbol: "LINK", limit: 5 })) pages.push(page);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages.slice(0, -1).every((p) => p.data.truncated && p.data.next_cursor)).toBe(true);
    expect(pages.at(-1)!.data).toMatchObject({ truncated: false, next_cursor: null });
    const ids = pages.flatMap((p) => p.data.events.map((e) => e.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(12);
    expect(await balance(5)).toBe(before - BigInt(pages.length) * 30_000n);

    // Items, stopped early: the loop's end calls nothing more.
    const mid = await balance(5);
    const first7: string[] = [];
    for await (const e of c.items("liquidation_recent", { symbol: "LINK", limit: 5 })) {
      first7.push(e.id);
      if (first7.length === 7) break;
    }
    expect(first7).toEqual(ids.slice(0, 7));
    expect(mid - (await balance(5))).toBeLessThanOrEqual(60_000n);
  });

  it("reads a paid stream as an async iterator; leaving the loop closes it; the session cap ends it before an unpaid minute", async () => {
    await client(6).topUp("0.5");
    const c = client(6, { pay: "credits", maxUsdPerSession: "0.1" });
    const stream = await c.stream("liquidations", { symbol: "XRP", minuteMs: MINUTE_MS });
    expect(stack.service.live.limits.open).toBe(1);
    const seen: string[] = [];
    for await (const e of stream) {
      seen.push(e.event);
      if (e.event === "debit") {
        expect(e.data).toMatchObject({ topic: "liquidations", minute: 1, price_usd: "0.002" });
        stack.service.ctx.ingestion!.liquidations.add([testLiquidation(77, "XRP")]);
      }
      if (e.event === "liquidation") {
        expect(e.data).toMatchObject({ symbol: expect.stringMatching(/XRP/), id: expect.stringMatching(/^liq_/) });
        break;
      }
    }
    expect(seen).toEqual(["debit", "liquidation"]);
    await until("the service closed the stream", async () => stack.service.live.limits.open === 0);
    expect(c.spentUsd).toBe("0.002");

    // A session cap with room for one minute only: the client closes the stream before the second is debited.
    const capped = client(6, { pay: "credits", maxUsdPerSession: "0.003" });
    const short = await capped.stream("liquidations", { minuteMs: MINUTE_MS });
    const events: string[] = [];
    for await (const e of short) events.push(e.event);
    expect(events.filter((e) => e === "debit")).toHaveLength(1);
    await new Promise((r) => setTimeout(r, MINUTE_MS));
    const account = await client(6, { pay: "credits" }).tools.credits_get();
    expect(account.data.balance_usd).toBe("0.496");
    expect(capped.spentUsd).toBe("0.002");
  });
});
