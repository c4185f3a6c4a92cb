import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { EventSource } from "eventsource";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { RESUME_MAX_EVENTS } from "../../src/live/resume.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { CVD_BUCKET_MS } from "../../src/ingestion/store/cvd-math.js";
import type { Liquidation } from "../../src/ingestion/types.js";
import { siwxHeader } from "../helpers/siwx.js";
import { until } from "../helpers/wait.js";

/** The default resume window (LIVE_RESUME_WINDOW_SEC), ms. */
const WINDOW_MS = 600_000;

/** One stream event as a client saw it (SSE, or a WebSocket `event` message). */
interface Got {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

/**
 * A resume from a very old Last-Event-ID replays a bounded window and says where it was cut, on every
 * transport that resumes (SSE and the WebSocket; MCP live resources do not resume); a recent id still
 * replays exactly what was missed (issue 20, finding 5). Offline stack, credits topped up with x402.
 */
describe("stream resume is bounded on SSE and WebSocket", () => {
  let stack: OfflineStack;
  const payer = () => stack.payers[5]!;
  const streams = () => stack.service.ctx.ingestion!;
  /** `n` ATOM liquidations at `timeMs` + k ms (ids assigned by the store). */
  const liquidations = (n: number, timeMs: number): Liquidation[] =>
    Array.from({ length: n }, (_, k) => ({
      venue: "bybit",
      base: "ATOM",
      venueSymbol: "ATOMUSDT",
      time: timeMs + k,
      side: k % 2 ? "long" : "short",
      price: 5 + k / 1000,
      size: 10 + k,
      valueUsd: (5 + k / 1000) * (10 + k),
    }));
  /** The stored ATOM liquidations, oldest first. */
  const stored = () => streams().liquidations.recent({ limit: 1000, symbol: "ATOM" }).reverse();

  /** Opens an SSE stream with the `eventsource` client and a SIWX header; collects every event. */
  const sse = async (path: string, lastEventId: string) => {
    const url = `${stack.url}${path}`;
    const siwx = await siwxHeader(payer().privateKey, url);
    const got: Got[] = [];
    const es = new EventSource(url, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), "SIGN-IN-WITH-X": siwx, "Last-Event-ID": lastEventId } }),
    });
    for (const event of ["debit", "replay_truncated", "gap", "liquidation", "cvd_bucket"]) {
      es.addEventListener(event, (e) => got.push({ event, ...(e.lastEventId ? { id: e.lastEventId } : {}), data: JSON.parse(e.data) as Record<string, unknown> }));
    }
    return { got, close: () => es.close() };
  };

  /** Opens a WebSocket signed in with SIWX; `subscribe` sends one subscribe and collects its events. */
  const ws = async () => {
    const url = `${stack.url.replace("http", "ws")}/ws`;
    const socket = new WebSocket(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer().privateKey, `${stack.url}/ws`) } });
    const got: Array<Got & { topic: string }> = [];
    socket.on("message", (d) => {
      const m = JSON.parse(String(d)) as { type: string; topic: string; event: string; id?: string; data: Record<string, unknown> };
      if (m.type === "event") got.push({ topic: m.topic, event: m.event, ...(m.id ? { id: m.id } : {}), data: m.data });
    });
    await new Promise((r) => socket.once("open", r));
    return {
      got,
      subscribe: (topic: string, symbol: string, lastEventId: string) => socket.send(JSON.stringify({ op: "subscribe", topic, symbol, last_event_id: lastEventId })),
      close: () => socket.close(),
    };
  };

  /** Checks a liquidation replay cut from `from`: replay_truncated first, then at most the window's newest 200. */
  const expectCutLiquidations = (got: Got[], from: string, openedAt: number) => {
    const replay = got.filter((e) => e.event !== "debit");
    expect(replay[0]).toMatchObject({
      event: "replay_truncated",
      data: { last_event_id: from, window_sec: WINDOW_MS / 1000, max_events: RESUME_MAX_EVENTS, rest: "GET /liquidation/recent?symbol=ATOM&limit=1000" },
    });
    const liqs = replay.filter((e) => e.event === "liquidation");
    expect(liqs.length).toBe(RESUME_MAX_EVENTS);
    expect(replay[0]!.data.oldest_id_served).toBe(liqs[0]!.id);
    for (const e of liqs) expect(Date.parse(e.data.timestamp as string)).toBeGreaterThanOrEqual(openedAt - WINDOW_MS - 1000);
    // The newest stored ones, in order, up to what the replay held.
    const ids = stored().map((r) => r.id);
    const at = ids.indexOf(liqs[0]!.id!);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(liqs.map((e) => e.id)).toEqual(ids.slice(at, at + liqs.length));
  };

  beforeAll(async () => {
    stack = await startOfflineStack({ env: { RATE_LIMIT_PER_MIN: "100000", FREE_RATE_LIMIT_PER_MIN: "100000", CREDITS_MIN_TOP_UP_USD: "0.01" } });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer().privateKey))));
    const res = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "1" }) });
    expect(res.status).toBe(200);
    // Two hours of ATOM liquidations: 5 an hour ago, then a burst of 250 within the last two minutes.
    streams().liquidations.add(liquidations(5, Date.now() - 3_600_000));
    streams().liquidations.add(liquidations(250, Date.now() - 120_000));
    // Two hours of BTC buckets (one old trade per 5 minutes), so a very old CVD id has a lot to replay.
    const now = Date.now();
    streams().cvd.add(
      Array.from({ length: 24 }, (_, k) => ({
        venue: "okx" as const,
        base: "BTC",
        time: now - (k + 1) * CVD_BUCKET_MS,
        price: 100,
        size: 1,
        side: "buy" as const,
        id: `resume-test-${k}`,
      })),
      "loose",
    );
  });
  afterAll(() => stack?.close());

  it("SSE: a very old Last-Event-ID replays the last 10 minutes, at most 200 events, after replay_truncated; a recent one replays exactly what was missed", async () => {
    const veryOld = `liq_${Math.floor(Date.now() / 1000) - 7200}_1`;
    const openedAt = Date.now();
    const cut = await sse("/stream/liquidations?symbol=ATOM", veryOld);
    await until("the replay", async () => cut.got.filter((e) => e.event === "liquidation").length >= RESUME_MAX_EVENTS);
    await new Promise((r) => setTimeout(r, 300));
    cut.close();
    expect(cut.got[0]!.event).toBe("debit");
    expectCutLiquidations(cut.got, veryOld, openedAt);

    const ids = stored().map((r) => r.id);
    const recent = ids[ids.length - 11]!;
    const exact = await sse("/stream/liquidations?symbol=ATOM", recent);
    await until("the replay of 10", async () => exact.got.filter((e) => e.event === "liquidation").length >= 10);
    await new Promise((r) => setTimeout(r, 300));
    exact.close();
    expect(exact.got.some((e) => e.event === "replay_truncated")).toBe(false);
    const replayed = exact.got.filter((e) => e.event === "liquidation").map((e) => e.id);
    // Compare up to what the stream received (the simulator's feeds may store more meanwhile).
    expect(replayed.slice(0, 10)).toEqual(ids.slice(ids.length - 10));
  });

  it("SSE: a very old CVD id replays only the buckets that ended in the window, after replay_truncated", async () => {
    const veryOld = `cvd_BTC_${Math.floor((Date.now() - 3 * 3_600_000) / CVD_BUCKET_MS) * CVD_BUCKET_MS}`;
    const openedAt = Date.now();
    const s = await sse("/stream/cvd/BTC", veryOld);
    await until("replay_truncated", async () => s.got.some((e) => e.event === "replay_truncated"));
    await new Promise((r) => setTimeout(r, 500));
    s.close();
    const replay = s.got.filter((e) => e.event !== "debit");
    expect(replay[0]).toMatchObject({ event: "replay_truncated", data: { last_event_id: veryOld, rest: "GET /cvd/history/BTC?period=7d" } });
    const buckets = replay.filter((e) => e.event === "cvd_bucket");
    expect(buckets.length).toBeGreaterThanOrEqual(1);
    expect(buckets.length).toBeLessThanOrEqual(3);
    expect(replay[0]!.data.oldest_id_served).toBe(buckets[0]!.id);
    for (const b of buckets) expect(Date.parse(b.data.bucket_end as string)).toBeGreaterThanOrEqual(openedAt - WINDOW_MS - 1000);
  });

  it("WebSocket: the same bounds per subscription (liquidations and CVD from very old ids), and a recent id replays exactly what was missed", async () => {
    const c = await ws();
    const veryOld = `liq_${Math.floor(Date.now() / 1000) - 7200}_1`;
    const openedAt = Date.now();
    c.subscribe("liquidations", "ATOM", veryOld);
    c.subscribe("cvd", "BTC", `cvd_BTC_${Math.floor((Date.now() - 3 * 3_600_000) / CVD_BUCKET_MS) * CVD_BUCKET_MS}`);
    await until(
      "both replays",
      async () => c.got.filter((e) => e.event === "liquidation").length >= RESUME_MAX_EVENTS && c.got.some((e) => e.topic === "cvd" && e.event === "replay_truncated"),
    );
    await new Promise((r) => setTimeout(r, 300));
    c.close();
    expectCutLiquidations(
      c.got.filter((e) => e.topic === "liquidations"),
      veryOld,
      openedAt,
    );
    const cvd = c.got.filter((e) => e.topic === "cvd" && e.event !== "debit");
    expect(cvd[0]!.event).toBe("replay_truncated");
    expect(cvd.filter((e) => e.event === "cvd_bucket").length).toBeLessThanOrEqual(3);

    const ids = stored().map((r) => r.id);
    const d = await ws();
    d.subscribe("liquidations", "ATOM", ids[ids.length - 6]!);
    await until("the replay of 5", async () => d.got.filter((e) => e.event === "liquidation").length >= 5);
    await new Promise((r) => setTimeout(r, 300));
    d.close();
    expect(d.got.some((e) => e.event === "replay_truncated")).toBe(false);
    expect(
      d.got
        .filter((e) => e.event === "liquidation")
        .map((e) => e.id)
        .slice(0, 5),
    ).toEqual(ids.slice(ids.length - 5));
  });
});
