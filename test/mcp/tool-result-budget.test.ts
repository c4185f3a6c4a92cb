import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Liquidation } from "../../src/ingestion/types.js";
import { isMarketDataTool } from "../../src/registry/tool.js";
import { TOOLS } from "../../tools/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { connectInMemory } from "../helpers/mcp.js";

/** Active price alerts created for the listing's pages, and the loopback webhook they name (WEBHOOK_ALLOW_LOOPBACK). */
const ALERTS = 30;
const WEBHOOK = "https://127.0.0.1/marketgate";

/** Most characters of text one MCP tool result may carry: about 20,000 tokens at 4 characters a token (issue 26). */
const RESULT_BUDGET_CHARS = 80_000;

type Args = Record<string, unknown>;
type Prop = { type?: string; maximum?: number; enum?: unknown[]; const?: unknown };

/** Characters of text of a result (what a client hands a model). */
const textChars = (r: CallToolResult) => r.content.reduce((n, c) => n + (c.type === "text" ? c.text.length : 0), 0);

/**
 * The argument sets that make `tool` answer its longest: its example with every bounded number at the maximum
 * the MCP listing states, then that with each value of each enumerated field in turn (every window, interval, venue).
 */
function maximalArgs(tool: Tool, example: Args): Args[] {
  const props = (tool.inputSchema.properties ?? {}) as Record<string, Prop>;
  const base: Args = { ...example };
  for (const [k, p] of Object.entries(props)) if ((p.type === "integer" || p.type === "number") && p.maximum !== undefined) base[k] = p.maximum;
  const out = [base];
  for (const [k, p] of Object.entries(props)) for (const v of p.enum ?? []) if (v !== base[k]) out.push({ ...base, [k]: v });
  return out;
}

/**
 * 1,000 liquidations (the buffer's cap) with long symbols and full-precision numbers, stamped over the last 20
 * minutes: the largest `liquidation_recent` can answer.
 */
function fullBuffer(): Liquidation[] {
  const now = Date.now();
  const venues = ["binance", "bybit", "okx", "gate"] as const;
  return Array.from({ length: 1000 }, (_, n) => {
    const price = 0.000012345678 + n * 1.23456789e-9;
    const size = 123456789.123 + n * 1.1;
    return {
      venue: venues[n % venues.length]!,
      base: n % 2 ? "1000SHIB" : "1000PEPE",
      venueSymbol: n % 2 ? "1000SHIBUSDT" : "1000PEPE-USDT-SWAP",
      time: now - 1_200_000 + n * 1000 + (n % 7),
      side: n % 3 ? "long" : "short",
      price,
      size,
      valueUsd: price * size * 1.000000001,
    };
  });
}

describe("every MCP tool result fits a model's context (80,000 characters of text)", () => {
  let s: FreeStack;
  let client: Client;
  let listed: Tool[];
  beforeAll(async () => {
    s = await startFreeStack({ FREE_RATE_LIMIT_PER_MIN: "100000", WEBHOOK_ALLOW_LOOPBACK: "true" });
    s.service.ctx.ingestion!.liquidations.add(fullBuffer());
    client = await connectInMemory(s.service.mcp);
    listed = (await client.listTools()).tools;
    // More active price alerts than one MCP listing shows (payments off: creating them is free).
    const create = TOOLS.find((t) => t.name === "price_alert_create")!;
    for (let i = 0; i < ALERTS; i++) {
      const r = (await client.callTool({ name: create.name, arguments: { ...create.example, target_price: 5000 + i, webhook_url: WEBHOOK } })) as CallToolResult;
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    }
  });
  afterAll(async () => {
    await client?.close();
    await s?.close();
  });

  it("answers every tool at its maximum parameters within the budget", { timeout: 300_000 }, async () => {
    expect(s.service.ctx.ingestion!.liquidations.size).toBe(1000);
    const sizes: string[] = [];
    for (const tool of TOOLS) {
      const t = listed.find((l) => l.name === tool.name)!;
      let largest = 0;
      let answered = 0;
      for (const args of maximalArgs(t, tool.example)) {
        const r = (await client.callTool({ name: tool.name, arguments: args })) as CallToolResult;
        const n = textChars(r);
        expect.soft(n, `${tool.name} ${JSON.stringify(args)}`).toBeLessThanOrEqual(RESULT_BUDGET_CHARS);
        if (!r.isError) answered++;
        largest = Math.max(largest, n);
      }
      // A market-data tool answers at its maxima, so the bound was measured on real answers, not on refusals.
      if (isMarketDataTool(tool)) expect(answered, tool.name).toBeGreaterThan(0);
      sizes.push(`${tool.name}: ${largest}`);
    }
    console.log(`largest result text per tool (characters):\n${sizes.join("\n")}`);
  });

  /** A successful MCP call's structured answer. */
  async function call(name: string, args: Args): Promise<Record<string, unknown>> {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(r.isError, `${name} ${JSON.stringify(r.content)}`).toBeFalsy();
    return r.structuredContent!;
  }
  /** Every page of an MCP call, following next_cursor until truncated is false. */
  async function allPages(name: string, args: Args): Promise<Record<string, unknown>[]> {
    const pages = [await call(name, args)];
    while (pages.at(-1)!.truncated) {
      expect(pages.at(-1)!.next_cursor).toEqual(expect.any(String));
      pages.push(await call(name, { ...args, cursor: pages.at(-1)!.next_cursor }));
      expect(pages.length).toBeLessThan(50);
    }
    expect(pages.at(-1)!.next_cursor).toBeNull();
    return pages;
  }

  it("shows the MCP maxima in the listing and refuses a larger value, naming the maximum and the cursor", async () => {
    const maxima = { cex_market_history: 500, funding_history: 400, dex_price_history: 300, liquidation_recent: 250, price_alerts_list: 25, liquidation_alerts_list: 25 };
    for (const [name, max] of Object.entries(maxima)) {
      const t = listed.find((l) => l.name === name)!;
      expect((t.inputSchema.properties!.limit as Prop).maximum, name).toBe(max);
      expect(t.inputSchema.properties, name).toHaveProperty("cursor");
      expect(t.description, name).toContain("next_cursor");
      const r = (await client.callTool({ name, arguments: { ...TOOLS.find((x) => x.name === name)!.example, limit: max + 1 } })) as CallToolResult;
      expect(r.isError, name).toBe(true);
      const body = JSON.parse((r.content[0] as { text: string }).text) as { error: { code: string; message: string; details: { field: string }[] } };
      expect(body.error.code, name).toBe("BAD_REQUEST");
      expect(body.error.details[0]!.field).toBe("limit");
      expect(body.error.message).toContain(`at most ${max} over MCP`);
    }
    // HTTP keeps its own page sizes.
    const rest = await s.get("/funding-rate/history/BTC?limit=1000");
    expect(rest.status).toBe(200);
    expect(rest.body.count).toBe(1000);
    expect(rest.body.truncated).toBe(false);
  });

  it("pages the full liquidation buffer over MCP: every event once, newest first, the last page not truncated", async () => {
    const pages = await allPages("liquidation_recent", { limit: 250 });
    const ids = pages.flatMap((p) => (p.events as { id: string }[]).map((e) => e.id));
    expect(new Set(ids).size).toBe(ids.length);
    // The simulator's own liquidations keep arriving: newer ones precede the first page, and each pushes the oldest
    // out of the 1,000-event buffer, so the last page lacks at most as many as arrived while paging.
    const rest = (await s.get("/liquidation/recent?limit=1000")).body.events.map((e: { id: string }) => e.id) as string[];
    const from = rest.indexOf(ids[0]!);
    expect(from).toBeGreaterThanOrEqual(0);
    expect(pages.slice(0, 3).map((p) => (p.events as unknown[]).length)).toEqual([250, 250, 250]);
    expect(pages).toHaveLength(4);
    expect(ids.length).toBeLessThanOrEqual(1000);
    expect(ids.length).toBeGreaterThanOrEqual(1000 - from);
    expect(rest.slice(from)).toEqual(ids.slice(0, rest.length - from));
    // A symbol filter pages within the filter.
    const shib = (await allPages("liquidation_recent", { limit: 200, symbol: "1000SHIB" })).flatMap((p) => p.events as { id: string; symbol: string }[]);
    expect(new Set(shib.map((e) => e.id)).size).toBe(shib.length);
    expect(shib.length).toBeGreaterThan(400);
    expect(shib.every((e) => e.symbol === "1000SHIBUSDT")).toBe(true);
  });

  it("pages funding history over MCP into the same rows HTTP serves in one answer", async () => {
    const pages = await allPages("funding_history", { symbol: "BTC", limit: 400 });
    expect(pages.map((p) => p.count)).toEqual([400, 400, 200]);
    const rows = pages.flatMap((p) => p.history as { funding_time: string }[]);
    const rest = await s.get("/funding-rate/history/BTC?limit=1000");
    expect(rows).toEqual(rest.body.history);
    // The next page over HTTP with the cursor MCP gave: the same page.
    const second = await s.get(`/funding-rate/history/BTC?limit=400&cursor=${pages[0]!.next_cursor as string}`);
    expect(second.status).toBe(200);
    expect(second.body.history).toEqual(pages[1]!.history);
  });

  it("pages and thins CoinGecko market history", async () => {
    const whole = await s.get("/api/v1/market/ethereum/history?days=90");
    expect(whole.status).toBe(200);
    expect(whole.body.truncated).toBe(false);
    const n = whole.body.data.prices.length as number;
    expect(n).toBeGreaterThan(1000);
    const pages = await allPages("cex_market_history", { id: "ethereum", days: 90 });
    expect(pages.length).toBe(Math.ceil(n / 500));
    const data = pages.map((p) => p.data as Record<string, [number, number][]>);
    // Each series' last point is "now" at the time of each call; the points before it are the same.
    for (const key of ["prices", "market_caps", "total_volumes"]) {
      const paged = data.flatMap((d) => d[key]!);
      expect(paged.slice(0, -1), key).toEqual(whole.body.data[key].slice(0, -1));
    }
    // interval=1d: one point per UTC day, each the day's last.
    const daily = await call("cex_market_history", { id: "ethereum", days: 90, interval: "1d" });
    const prices = (daily.data as { prices: [number, number][] }).prices;
    expect(prices.length).toBeGreaterThanOrEqual(90);
    expect(prices.length).toBeLessThanOrEqual(91);
    expect(new Set(prices.map(([t]) => Math.floor(t / 86_400_000))).size).toBe(prices.length);
    const byTime = new Map((whole.body.data.prices as [number, number][]).map(([t, v]) => [t, v]));
    for (const [t, v] of prices.slice(0, -1)) {
      expect(byTime.get(t)).toBe(v);
      expect((whole.body.data.prices as [number, number][]).some(([u]) => u > t && Math.floor(u / 86_400_000) === Math.floor(t / 86_400_000))).toBe(false);
    }
    expect((daily.meta as { granularity: string }).granularity).toBe("1d");
    expect(daily.truncated).toBe(false);
  });

  it("pages DEX candles backwards without overlap or gap in the pages", async () => {
    const first = await call("dex_price_history", { symbol: "ETH", interval: "1m", limit: 300 });
    expect(first.truncated).toBe(true);
    const second = await call("dex_price_history", { symbol: "ETH", interval: "1m", limit: 300, cursor: first.next_cursor });
    const a = first.candles as { timestamp: string }[];
    const b = second.candles as { timestamp: string }[];
    expect(b.length).toBeGreaterThan(0);
    expect(Date.parse(b[0]!.timestamp)).toBeLessThan(Date.parse(a.at(-1)!.timestamp));
    // One HTTP answer ending at the first page's newest candle holds both pages.
    const both = await s.get(`/price/history/ETH?interval=1m&limit=600&end=${a[0]!.timestamp}`);
    // The same candles; closes within 1e-6 but the newest one's, which is still forming (and the simulator closes the
    // newest candle of a request bounded by before_timestamp at that instant, not a millisecond earlier).
    const paged = [...a, ...b] as { timestamp: string; close: number }[];
    const whole = both.body.candles.slice(0, paged.length) as { timestamp: string; close: number }[];
    expect(paged.map((c) => c.timestamp)).toEqual(whole.map((c) => c.timestamp));
    paged.slice(1).forEach((c, i) => expect(Math.abs(c.close / whole[i + 1]!.close - 1), c.timestamp).toBeLessThan(1e-6));
  });

  it("pages the active alerts: 25 per MCP call, then the rest, oldest first", async () => {
    const pages = await allPages("price_alerts_list", {});
    const alerts = pages.flatMap((p) => p.alerts as { alert_id: string; target_price: number; created_at: string }[]);
    expect(alerts.length).toBeGreaterThanOrEqual(ALERTS);
    expect(pages.map((p) => p.count)).toEqual(pages.map((_, i) => Math.min(25, alerts.length - 25 * i)));
    expect(new Set(alerts.map((a) => a.alert_id)).size).toBe(alerts.length);
    // Oldest first by (created_at, id), the documented order: alerts made in the same millisecond follow their ids.
    const key = (a: { created_at: string; alert_id: string }) => [Date.parse(a.created_at), a.alert_id] as const;
    alerts.slice(1).forEach((a, i) => {
      const [t0, id0] = key(alerts[i]!);
      const [t1, id1] = key(a);
      expect(t1 > t0 || (t1 === t0 && id1 > id0), `${alerts[i]!.alert_id} before ${a.alert_id}`).toBe(true);
    });
    // The first ones created (the maximum-parameter calls above may have added more at the end).
    expect(
      alerts
        .slice(0, ALERTS)
        .map((a) => a.target_price)
        .sort((x, y) => x - y),
    ).toEqual(Array.from({ length: ALERTS }, (_, i) => 5000 + i));
    const rest = await s.get("/price-alerts");
    expect(rest.status).toBe(200);
    expect(rest.body.alerts.map((a: { alert_id: string }) => a.alert_id)).toEqual(alerts.map((a) => a.alert_id));
  });

  it("refuses a malformed cursor, one from another tool and one from another query, before any work (400 / isError)", async () => {
    const first = await call("funding_history", { symbol: "BTC", limit: 10 });
    const cursor = first.next_cursor as string;
    const liq = await call("liquidation_recent", { limit: 10 });
    const cases: [string, Args][] = [
      ["funding_history", { symbol: "BTC", cursor: "not a cursor!" }],
      ["funding_history", { symbol: "BTC", cursor: Buffer.from('{"q":"x","p":{}}').toString("base64url") }],
      ["funding_history", { symbol: "ETH", cursor }],
      ["funding_history", { symbol: "BTC", exchange: "okx", cursor }],
      ["liquidation_recent", { cursor }],
      ["funding_history", { symbol: "BTC", cursor: liq.next_cursor }],
      ["dex_price_history", { symbol: "ETH", cursor: "x".repeat(300) }],
    ];
    for (const [name, args] of cases) {
      const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      const body = JSON.parse((r.content[0] as { text: string }).text) as { error: { code: string; details: { field: string }[] } };
      expect(body.error.code).toBe("BAD_REQUEST");
      expect(body.error.details[0]!.field).toBe("cursor");
    }
    const http = await s.get(`/funding-rate/history/ETH?cursor=${cursor}`);
    expect(http.status).toBe(400);
    expect(http.body.error.details[0].field).toBe("cursor");
    // The same cursor with its own query reads the next page.
    expect((await call("funding_history", { symbol: "BTC", limit: 10, cursor })).count).toBe(10);
  });
});
