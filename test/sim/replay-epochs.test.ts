import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { loadConfig } from "../../src/config.js";
import { acceptSimReplayMarks, recordVenueExchanges, runInScope, VenueLog } from "../../src/core/request-scope.js";
import { VenueHealth } from "../../src/core/venue-health.js";
import { VenueHttpClient } from "../../src/lib/venue-http.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { createService, type Service } from "../../src/service.js";
import { REPLAY_FILES } from "../../src/sim/replay.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { json } from "../helpers/json.js";
import { alertSignals } from "../../tools/alerts/signals.js";

/*
 * Sandbox replay never mixes epochs (issue 25, part 4): an answer comes from one recording alone or from the model
 * alone; one that would combine them is refused with 409 CONFLICT naming every source. Recorded websocket topics
 * never silence the model's flow.
 */

const PREMIUM_INDEX = REPLAY_FILES.binance.premiumIndex;

describe("sandbox replay: one epoch per answer", () => {
  let sim: RunningSimulator;
  let service: Service;
  let url: string;
  let close: () => Promise<void>;
  const get = (path: string) => fetch(`${url}${path}`);

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, replay: true });
    service = await createService({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0", STREAMS: "off", ALERTS: "off", ...simEnv(sim) }) });
    const l = await service.listen();
    url = l.url;
    close = async () => {
      await l.close();
      await sim.close();
    };
  });
  afterAll(() => close?.());

  /** The sources a 409 lists, as `venue endpoint source recording`. */
  const sourcesOf = (body: { error: { details: { sources: Array<{ venue: string; endpoint: string; source: string; recording?: string }> } } }) =>
    body.error.details.sources.map((s) => `${s.venue} ${s.endpoint} ${s.source}${s.recording ? ` ${s.recording}` : ""}`);

  it("refuses a basis of 2024 recorded Binance marks against the simulated spot of today (409, sources listed)", async () => {
    const res = await get("/futures/basis/BTCUSDT");
    expect(res.status).toBe(409);
    const body = await json(res);
    expect(body.error.code).toBe("CONFLICT");
    expect(body.error.message).toMatch(/different epochs/);
    const sources = sourcesOf(body);
    expect(sources).toContain(`binance GET /fapi/v1/premiumIndex recording ${PREMIUM_INDEX}`);
    expect(sources).toContain("binance GET /api/v3/ticker/price model");
  });

  it("refuses a liquidation alert's background reading that would mix epochs, like the heatmap tool", async () => {
    await expect(alertSignals(service.ctx).liquidationRisk("BTC")).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("refuses an arbitrage that would compare a 2024 recorded rate with simulated ones", async () => {
    const res = await get("/arbitrage-opportunity");
    expect(res.status).toBe(409);
    expect(sourcesOf(await json(res))).toContain(`binance GET /fapi/v1/premiumIndex recording ${PREMIUM_INDEX}`);
  });

  it("refuses a heatmap of 2021 recorded candles against a later price", async () => {
    const res = await get("/liquidation/heatmap/XRPUSDT");
    expect(res.status).toBe(409);
    const sources = sourcesOf(await json(res));
    expect(sources).toContain(`binance GET /fapi/v1/klines recording ${REPLAY_FILES.binance.klinesXRPUSDT1h}`);
    expect(sources.some((s) => s.endsWith(" model"))).toBe(true);
  });

  it("over MCP the refusal is an isError result with the same code", async () => {
    const r = await service.mcp.call("funding_compare", { symbol: "BTCUSDT" }, {});
    expect(r.isError).toBe(true);
    const text = (r.content as Array<{ type: string; text: string }>)[0]!.text;
    expect(JSON.parse(text)).toMatchObject({ error: { code: "CONFLICT" } });
  });

  it("serves what one recording answers alone (reference data aside), and model-only answers, as before", async () => {
    const rec = await get("/funding-rate/history/XRPUSDT");
    expect([rec.status, rec.headers.get("x-data-source")]).toEqual([200, "replay"]);
    expect((await json(rec)).history.every((h: { funding_time: string }) => h.funding_time.startsWith("2021-"))).toBe(true);
    const chart = await get("/api/v1/market/bitcoin/history?days=365");
    expect([chart.status, chart.headers.get("x-data-source")]).toEqual([200, "replay"]);
    const model = await get("/funding-rate/history/BTCUSDT?limit=5");
    expect([model.status, model.headers.get("x-data-source")]).toEqual([200, "simulated"]);
    const oneSource = await get("/futures/long-short/BTCUSDT");
    expect(oneSource.status).toBe(200);
  });
});

describe("a request sharing another's venue fetch (single-flight) notes its source too", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 5, replay: true });
  });
  afterAll(() => sim?.close());

  it("both concurrent requests see the recording behind the one fetch", async () => {
    const health = new VenueHealth(["binance"]);
    acceptSimReplayMarks(health);
    const client = new VenueHttpClient({ venue: "binance", baseUrl: sim.urls.binance, timeoutMs: 5000, callsPerMin: 600, health });
    const logs = [new VenueLog(), new VenueLog()];
    const bodies = await Promise.all(logs.map((log) => recordVenueExchanges(log, () => runInScope({ deadlineMs: 5000 }, () => client.getJson("/fapi/v1/premiumIndex")))));
    expect(bodies[0]).toBe(bodies[1]); // one fetch, shared
    for (const log of logs) {
      expect(log.replayed).toBe(true);
      expect(log.exchanges).toContainEqual(expect.objectContaining({ endpoint: "GET /fapi/v1/premiumIndex", simSource: "replay", recording: PREMIUM_INDEX }));
    }
  });
});

describe("recorded websocket topics never silence the model's flow", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, replay: true });
  });
  afterAll(() => sim?.close());

  /** Frames received after subscribing, until `done` holds (or 8 s pass: the assertions then say what is missing). */
  const frames = async (wsUrl: string, subscribe: unknown, done: (msgs: string[]) => boolean): Promise<string[]> => {
    const ws = new WebSocket(wsUrl);
    const msgs: string[] = [];
    ws.on("message", (d: Buffer) => msgs.push(d.toString("utf8")));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    ws.send(JSON.stringify(subscribe));
    const end = Date.now() + 8000;
    while (!done(msgs) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    ws.close();
    return msgs;
  };

  it("Bybit BTCUSDT trades on the linear path are the model's present ones, never the 2026-08-09 recording", async () => {
    const started = Date.now();
    const msgs = await frames(
      `${sim.wsUrls.bybit}/v5/public/linear`,
      { op: "subscribe", args: ["publicTrade.BTCUSDT", "allLiquidation.PIPPINUSDT"] },
      (m) => m.some((x) => x.includes('"topic":"allLiquidation.PIPPINUSDT"')) && m.filter((x) => x.includes('"topic":"publicTrade.BTCUSDT"')).length >= 3,
    );
    const trades = msgs.filter((m) => m.includes('"topic":"publicTrade.BTCUSDT"')).map((m) => JSON.parse(m) as { ts: number });
    expect(trades.length).toBeGreaterThan(0);
    for (const t of trades) expect(Math.abs(t.ts - started)).toBeLessThan(60_000);
    // A topic the model does not serve still plays its recording.
    expect(msgs.some((m) => m.includes('"topic":"allLiquidation.PIPPINUSDT"') && m.includes('"ts":1740480207578'))).toBe(true);
  });

  it("Bybit's spot path (not simulated) plays the recorded trades", async () => {
    const msgs = await frames(`${sim.wsUrls.bybit}/v5/public/spot`, { op: "subscribe", args: ["publicTrade.BTCUSDT"] }, (m) =>
      m.some((x) => x.includes('"topic":"publicTrade.BTCUSDT"')),
    );
    expect(msgs.some((m) => m.includes('"topic":"publicTrade.BTCUSDT"') && /"ts":178631\d{7}/.test(m))).toBe(true);
  });

  it("Hyperliquid BTC trades are the model's, not the recorded ones", async () => {
    const started = Date.now();
    const btc = await frames(`${sim.wsUrls.hyperliquid}/ws`, { method: "subscribe", subscription: { type: "trades", coin: "BTC" } }, (m) =>
      m.some((x) => x.startsWith('{"channel":"trades"')),
    );
    const rows = btc.flatMap((m) => {
      const x = JSON.parse(m) as { channel?: string; data?: Array<{ time: number }> };
      return x.channel === "trades" ? (x.data ?? []) : [];
    });
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(Math.abs(r.time - started)).toBeLessThan(60_000);
  });
});
