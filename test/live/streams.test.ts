import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { EventSource } from "eventsource";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import type { Liquidation } from "../../src/ingestion/types.js";
import { testLiquidation } from "../helpers/liquidations.js";
import { json } from "../helpers/json.js";
import { siwxHeader } from "../helpers/siwx.js";
import { until } from "../helpers/wait.js";

const MINUTE_MS = 1500;

/** One SSE event as the client saw it. */
interface Received {
  type: string;
  id: string;
  data: Record<string, unknown>;
}

/**
 * Paid live streams against the offline stack (venue simulator, anvil, real credits ledger): SSE with the
 * `eventsource` client, the WebSocket with `ws`, per-minute debits from credits topped up with x402.
 */
describe("paid live streams over SSE and WebSocket", () => {
  let stack: OfflineStack;
  const payer = (i: number) => stack.payers[i]!;
  const topUp = async (i: number, amount: string) => {
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer(i).privateKey))));
    const res = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: amount }) });
    expect(res.status).toBe(200);
  };
  const account = async (i: number) =>
    json(await fetch(`${stack.url}/api/v1/credits`, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(i).privateKey, `${stack.url}/api/v1/credits`) } }));
  const liquidation = testLiquidation;
  const inject = (events: Liquidation[]) => stack.service.ctx.ingestion!.liquidations.add(events);

  /** Opens an SSE stream with the official-shaped `eventsource` client, a SIWX header on the first request. */
  const open = async (i: number, path: string, headers: Record<string, string> = {}) => {
    const url = `${stack.url}${path}`;
    const siwx = await siwxHeader(payer(i).privateKey, url);
    const got: Received[] = [];
    let status = 0;
    let session: string | null = null;
    const es = new EventSource(url, {
      fetch: async (input, init) => {
        const res = await fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), "SIGN-IN-WITH-X": siwx, ...headers } });
        status = res.status;
        session = res.headers.get("x-credits-session") ?? session;
        return res;
      },
    });
    for (const type of ["liquidation", "debit", "payment_required", "dropped", "cvd_update", "funding"]) {
      es.addEventListener(type, (e) => got.push({ type, id: e.lastEventId, data: JSON.parse(e.data) as Record<string, unknown> }));
    }
    return { es, got, status: () => status, session: () => session };
  };

  beforeAll(async () => {
    stack = await startOfflineStack({
      env: {
        RATE_LIMIT_PER_MIN: "100000",
        FREE_RATE_LIMIT_PER_MIN: "100000",
        CREDITS_MIN_TOP_UP_USD: "0.01",
        LIVE_STREAM_MINUTE_MS: String(MINUTE_MS),
        LIVE_STREAM_BUFFER_KB: "16",
      },
    });
  });
  afterAll(() => stack?.close());

  it("without a proof, or without credits for the first minute, opening a stream is a 402 with the SIWX challenge and how to top up", async () => {
    const bare = await fetch(`${stack.url}/stream/liquidations`);
    expect(bare.status).toBe(402);
    const pr = JSON.parse(Buffer.from(bare.headers.get("payment-required")!, "base64").toString());
    expect(pr.extensions["sign-in-with-x"]).toBeDefined();
    expect(pr.accepts[0].amount).toBe("10000");
    const url = `${stack.url}/stream/liquidations`;
    const broke = await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(8).privateKey, url) } });
    expect(broke.status).toBe(402);
    expect((await json(broke)).error).toMatch(/credits_insufficient_balance/);
    expect((await fetch(`${stack.url}/stream/cvd/NOTACOIN1`)).status).toBe(404);
    expect((await fetch(`${stack.url}/stream/cvd/${"x".repeat(60)}`)).status).toBe(400);
  });

  it("SSE: events arrive in order with ids, each minute is debited, Last-Event-ID resumes without a gap or a duplicate", async () => {
    await topUp(1, "1");
    const first = await open(1, "/stream/liquidations?symbol=ETH");
    await until("the first debit", async () => first.got.some((e) => e.type === "debit"));
    expect(first.status()).toBe(200);
    inject(Array.from({ length: 30 }, (_, n) => liquidation(n, "ETH")));
    inject([liquidation(1, "SOL")]);
    await until("30 ETH liquidations", async () => first.got.filter((e) => e.type === "liquidation").length >= 30);
    const liqs = first.got.filter((e) => e.type === "liquidation");
    expect(liqs.every((e) => e.data.symbol === "ETHUSDT" && e.id === e.data.id)).toBe(true);
    expect(new Set(liqs.map((e) => e.id)).size).toBe(liqs.length);
    await new Promise((r) => setTimeout(r, MINUTE_MS * 2 + 300));
    first.es.close();
    const debits = first.got.filter((e) => e.type === "debit");
    expect(debits.map((d) => d.data.minute)).toEqual(debits.map((_, k) => k + 1));
    // Each debit carries a fresh session token, so a reconnect after the first token expired needs no signature.
    expect(debits.every((d) => typeof d.data.session === "string" && d.data.session.length > 20)).toBe(true);
    expect(debits.length).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 200));
    const spent = Number((await account(1)).spent_usd);
    expect(spent).toBeCloseTo(debits.length * 0.002, 9);

    // Disconnected at event 10: more arrive while away; the resume replays 11.. then continues live.
    const cut = liqs[9]!.id;
    inject(Array.from({ length: 5 }, (_, n) => liquidation(100 + n, "ETH")));
    const again = await open(1, "/stream/liquidations?symbol=ETH", { "Last-Event-ID": cut });
    await until("the replay", async () => again.got.filter((e) => e.type === "liquidation").length >= 25);
    inject([liquidation(500, "ETH")]);
    await until("a live event after the replay", async () => again.got.filter((e) => e.type === "liquidation").length >= 26);
    again.es.close();
    // The session token of a stream reopens one without a new signature (an EventSource reconnect
    // resends its headers, and a SIWX nonce is single-use).
    const token = again.session()!;
    expect(token).toMatch(/\S{20,}/);
    const viaSession = await fetch(`${stack.url}/stream/funding/BTC`, { headers: { "X-Credits-Session": token } });
    expect(viaSession.status).toBe(200);
    await viaSession.body!.cancel();
    const replayed = await fetch(`${stack.url}/stream/funding/BTC`, {
      headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(1).privateKey, `${stack.url}/stream/funding/BTC`, { nonce: "0123456789abcdef0123456789abcdef" }) },
    });
    await replayed.body!.cancel();
    const reused = await fetch(`${stack.url}/stream/funding/BTC`, {
      headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(1).privateKey, `${stack.url}/stream/funding/BTC`, { nonce: "0123456789abcdef0123456789abcdef" }) },
    });
    expect(reused.status).toBe(402);
    expect((await json(reused)).error).toMatch(/nonce/);
    const stored = stack.service.ctx.ingestion!.liquidations.recent({ limit: 1000, symbol: "ETH" }).map((r) => r.id);
    const after = stored.slice(0, stored.indexOf(cut)).reverse();
    // The simulator's own feeds keep storing liquidations (ETH too): one stored after the stream closed is
    // in `after` but was never sent, so compare up to what the stream received.
    const received = again.got.filter((e) => e.type === "liquidation").map((e) => e.id);
    expect(received).toEqual(after.slice(0, received.length));
  });

  it("an exhausted balance gets a final payment_required and the stream closes; debits equal minutes x price", async () => {
    await topUp(2, "0.01");
    const s = await open(2, "/stream/liquidations");
    await until("payment_required", async () => s.got.some((e) => e.type === "payment_required"), MINUTE_MS * 8);
    s.es.close();
    const debits = s.got.filter((e) => e.type === "debit");
    expect(debits).toHaveLength(5);
    expect(debits.at(-1)!.data.remaining_usd).toBe("0");
    expect(s.got.at(-1)!.type).toBe("payment_required");
    expect(s.got.at(-1)!.data.reason).toMatch(/credits_insufficient_balance/);
    expect(await account(2)).toMatchObject({ balance_usd: "0", spent_usd: "0.01" });
    expect(stack.service.live.limits.open).toBe(0);
  });

  it("WebSocket: signs in on the upgrade, several topics on one connection, unsubscribe, errors for bad messages; 402 on the upgrade without a proof", async () => {
    await topUp(3, "1");
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${stack.url.replace("http", "ws")}/ws`);
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => resolve(101));
    });
    expect(refused).toBe(402);

    const ws = new WebSocket(`${stack.url.replace("http", "ws")}/ws`, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(3).privateKey, `${stack.url}/ws`) } });
    const msgs: Array<Record<string, unknown>> = [];
    ws.on("message", (d) => msgs.push(JSON.parse(String(d)) as Record<string, unknown>));
    await new Promise((r) => ws.once("open", r));
    ws.send(JSON.stringify({ op: "subscribe", topic: "liquidations", symbol: "XRP" }));
    ws.send(JSON.stringify({ op: "subscribe", topic: "cvd", symbol: "BTC" }));
    ws.send("not json");
    ws.send(JSON.stringify({ op: "subscribe", topic: "weather" }));
    await until("both subscribed", async () => msgs.filter((m) => m.type === "subscribed").length === 2);
    inject([liquidation(7, "XRP")]);
    await until(
      "an XRP liquidation and a CVD update",
      async () => msgs.some((m) => m.type === "event" && m.event === "liquidation") && msgs.some((m) => m.type === "event" && m.event === "cvd_update"),
    );
    expect(msgs[0]).toMatchObject({ type: "welcome" });
    expect(msgs.filter((m) => m.type === "error").map((m) => (m.error as { code: string }).code)).toEqual(["BAD_REQUEST", "BAD_REQUEST"]);
    expect(
      msgs
        .filter((m) => m.event === "debit")
        .map((m) => m.topic)
        .sort(),
    ).toEqual(["cvd", "liquidations"]);
    ws.send(JSON.stringify({ op: "unsubscribe", topic: "cvd", symbol: "BTC" }));
    await until("unsubscribed", async () => msgs.some((m) => m.type === "unsubscribed" && m.topic === "cvd"));
    expect(stack.service.live.limits.open).toBe(1);
    ws.close();
    await until("the connection's streams closed", async () => stack.service.live.limits.open === 0);
    expect(Number((await account(3)).spent_usd)).toBeGreaterThanOrEqual(0.004);
  });

  it("WebSocket: hostile messages get errors, never a crash; oversized messages (1009) and floods (1008) close the connection", async () => {
    const connect = async () => {
      const ws = new WebSocket(`${stack.url.replace("http", "ws")}/ws`, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(3).privateKey, `${stack.url}/ws`) } });
      const errors: string[] = [];
      ws.on("message", (d) => {
        const m = JSON.parse(String(d)) as { type: string; error?: { code: string } };
        if (m.type === "error") errors.push(m.error!.code);
      });
      const closed = new Promise<number>((r) => ws.on("close", (code) => r(code)));
      await new Promise((r) => ws.once("open", r));
      return { ws, errors, closed };
    };
    const a = await connect();
    for (const m of [
      '{"op":"subscribe","topic":"cvd","symbol":"\u0000%00"}',
      '{"op":"subscribe","topic":"cvd"}',
      '{"op":"unsubscribe","topic":"liquidations"}',
      "[]",
      "null",
      '{"op":"subscribe","topic":"funding","symbol":"NOTACOIN1"}',
    ])
      a.ws.send(m);
    a.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    await until("seven errors", async () => a.errors.length === 7);
    expect(a.errors.sort()).toEqual(["BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "NOT_FOUND", "UNKNOWN_SYMBOL"].sort());
    a.ws.send("x".repeat(5000));
    expect(await a.closed).toBe(1009);
    const b = await connect();
    for (let k = 0; k < 120; k++) b.ws.send("{}");
    expect(await b.closed).toBe(1008);
    expect((await fetch(`${stack.url}/health`)).status).toBe(200);
    expect(stack.service.live.limits.open).toBe(0);
  });

  it("a subscriber that stops reading is dropped with a reason instead of buffering without limit", async () => {
    await topUp(4, "1");
    const url = `${stack.url}/stream/liquidations?symbol=DOGE`;
    const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer(4).privateKey, url) } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    // Not reading: the kernel buffers fill, then the server's 16 KiB budget.
    let rounds = 0;
    for (; rounds < 60 && stack.service.live.limits.open > 0; rounds++) {
      inject(Array.from({ length: 1000 }, (_, n) => liquidation(rounds * 1000 + n, "DOGE")));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(stack.service.live.limits.open).toBe(0);
    // Dropped long before the 60,000 events (about 15 MB) could have been buffered for it.
    expect(rounds).toBeLessThan(30);
    let text = "";
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
      if (done) break;
      text += Buffer.from(value).toString();
    }
    expect(text).toMatch(/event: dropped\ndata: \{"reason":"slow consumer/);
  });
});
