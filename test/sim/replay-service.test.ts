import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { loadConfig } from "../../src/config.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { createService, type Service } from "../../src/service.js";
import { DEFAULT_REPLAY_DIR, REPLAY_FILES } from "../../src/sim/replay.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { json } from "../helpers/json.js";

/** The recorded Binance XRPUSDT funding history the simulator replays (oldest first). */
const recorded = JSON.parse(readFileSync(join(DEFAULT_REPLAY_DIR, REPLAY_FILES.binance.fundingRateXRPUSDT), "utf8")) as Array<{
  symbol: string;
  fundingTime: number;
  fundingRate: string;
}>;

/** A payment-free service on a simulator, with the environment `simEnv` gives it (SIM_REPLAY follows the simulator). */
async function stack(replay: boolean, env: Record<string, string> = {}): Promise<{ sim: RunningSimulator; service: Service; url: string; close(): Promise<void> }> {
  const sim = await startSimulator({ seed: 11, replay });
  const service = await createService({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0", STREAMS: "off", ALERTS: "off", ...simEnv(sim), ...env }) });
  const l = await service.listen();
  return {
    sim,
    service,
    url: l.url,
    close: async () => {
      await l.close();
      await sim.close();
    },
  };
}

describe("sandbox replay: the service on a simulator replaying real recordings", () => {
  let s: Awaited<ReturnType<typeof stack>>;
  const get = (path: string) => fetch(`${s.url}${path}`);

  beforeAll(async () => {
    s = await stack(true);
  });
  afterAll(() => s?.close());

  it("labels answers the model computed `simulated`, also when the request loaded a recorded instrument list", async () => {
    const btc = await get("/funding-rate/history/BTCUSDT?limit=5");
    expect(btc.status).toBe(200);
    expect(btc.headers.get("x-data-source")).toBe("simulated");
    const prices = await get("/api/v1/prices?symbols=btc");
    expect(prices.status).toBe(200);
    expect(prices.headers.get("x-data-source")).toBe("simulated");
  });

  it("reproduces the recorded Binance XRPUSDT funding rates and their average exactly, labelled replay", async () => {
    const res = await get("/funding-rate/history/XRPUSDT");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-data-source")).toBe("replay");
    const body = await json(res);
    expect(body.count).toBe(recorded.length);
    const newestFirst = [...recorded].reverse();
    expect(body.history.map((h: { funding_rate: number }) => h.funding_rate)).toEqual(newestFirst.map((r) => Number(r.fundingRate)));
    // As recorded: the answer shows the recorded settlement times (November-December 2021, Binance's ms jitter kept).
    expect(body.history.map((h: { funding_time: string }) => h.funding_time)).toEqual(newestFirst.map((r) => new Date(r.fundingTime).toISOString()));
    const mean = recorded.reduce((sum, r) => sum + Number(r.fundingRate), 0) / recorded.length;
    expect(body.summary.avg_rate).toBe(Number(mean.toPrecision(12))); // the service publishes 12 significant digits
    expect(body.summary.max_rate).toBe(Math.max(...recorded.map((r) => Number(r.fundingRate))));
    expect(body.summary.min_rate).toBe(Math.min(...recorded.map((r) => Number(r.fundingRate))));
    expect(body.funding_interval_hours).toBe(8);

    // The cached answer keeps its label.
    const again = await get("/funding-rate/history/XRPUSDT");
    expect(again.headers.get("x-cache")).toBe("HIT");
    expect(again.headers.get("x-data-source")).toBe("replay");
  });

  it("labels MCP results the same way", async () => {
    const rec = await s.service.mcp.call("funding_history", { symbol: "XRPUSDT", limit: 10 }, {});
    expect(rec.isError).toBeFalsy();
    expect(rec._meta).toMatchObject({ "marketgate/data-source": "replay" });
    const sim = await s.service.mcp.call("funding_history", { symbol: "ETHUSDT", limit: 5 }, {});
    expect(sim._meta).toMatchObject({ "marketgate/data-source": "simulated" });
  });

  it("status says sim with replay on, and which endpoints answered from recordings", async () => {
    const res = await get("/api/v1/status");
    expect(res.headers.get("x-data-source")).toBe("simulated");
    const body = await json(res);
    expect(body.data_mode).toBe("sim");
    expect(body.simulated).toBe(true);
    expect(body.replay.enabled).toBe(true);
    expect(body.replay.endpoints).toContainEqual(
      expect.objectContaining({ venue: "binance", endpoint: "GET /fapi/v1/fundingRate", kind: "data", recording: REPLAY_FILES.binance.fundingRateXRPUSDT }),
    );
    expect(body.replay.endpoints).toContainEqual(expect.objectContaining({ venue: "binance", endpoint: "GET /fapi/v1/exchangeInfo", kind: "instruments" }));
    expect(body.doctor).toBeNull(); // DATA_DIR=:memory:
  });
});

describe("sim mode without replay", () => {
  it("labels everything simulated, and status shows replay off", async () => {
    const s = await stack(false);
    try {
      const res = await fetch(`${s.url}/funding-rate/history/XRPUSDT?limit=5`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-data-source")).toBe("simulated");
      const status = await json(await fetch(`${s.url}/api/v1/status`));
      expect(status.replay).toEqual({ enabled: false, endpoints: [] });
    } finally {
      await s.close();
    }
  });

  it("ignores the simulator's replay marks unless SIM_REPLAY=on", async () => {
    const s = await stack(true, { SIM_REPLAY: "off" });
    try {
      const res = await fetch(`${s.url}/funding-rate/history/XRPUSDT`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-data-source")).toBe("simulated");
      expect((await json(res)).count).toBe(recorded.length); // the simulator did replay
    } finally {
      await s.close();
    }
  });
});

describe("the simulator marks what it replays", () => {
  let sim: RunningSimulator;
  const rec = (file: string) => JSON.parse(readFileSync(join(DEFAULT_REPLAY_DIR, file), "utf8")) as unknown;
  const get = async (url: string, init?: RequestInit) => {
    const res = await fetch(url, init);
    return { source: res.headers.get("x-sim-source"), recording: res.headers.get("x-sim-recording"), status: res.status, body: (await res.json()) as unknown };
  };
  const info = (body: unknown) => get(`${sim.urls.hyperliquid}/info`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, replay: true });
  });
  afterAll(() => sim?.close());

  it("serves every recording with X-Sim-Source and the recording's name; the model's answers carry no mark", async () => {
    const f = REPLAY_FILES;
    const cases: Array<[Promise<{ source: string | null; recording: string | null; status: number; body: unknown }>, string, string]> = [
      [get(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=XRPUSDT&limit=1000`), f.binance.fundingRateXRPUSDT, "replay"],
      [get(`${sim.urls.binance}/fapi/v1/premiumIndex`), f.binance.premiumIndex, "replay"],
      [get(`${sim.urls.binance}/fapi/v1/klines?symbol=XRPUSDT&interval=1h&limit=1500`), f.binance.klinesXRPUSDT1h, "replay"],
      [get(`${sim.urls.binance}/fapi/v1/exchangeInfo`), f.binance.exchangeInfo, "replay-instruments"],
      [info({ type: "fundingHistory", coin: "BTC", startTime: 0 }), f.hyperliquid.fundingHistoryBTC, "replay"],
      [info({ type: "meta" }), f.hyperliquid.meta, "replay-instruments"],
      [get(`${sim.urls.bybit}/v5/market/instruments-info?category=linear`), f.bybit.instrumentsInfo, "replay-instruments"],
      [get(`${sim.urls.geckoterminal}/networks/solana/pools/7bqJG2ZdMKbEkgSmfuqNVBvqEvWavgL8UEo33ZqdL3NP/ohlcv/hour`), f.geckoterminal.ohlcvCbrlHour1, "replay"],
      [get(`${sim.urls.geckoterminal}/networks/eth/pools`), f.geckoterminal.topPoolsEth, "replay"],
      [get(`${sim.urls.dexscreener}/latest/dex/search?q=LUNA`), f.dexscreener.searchLuna, "replay"],
      [get(`${sim.urls.coingecko}/coins/bitcoin/market_chart?vs_currency=usd&days=365`), f.coingecko.marketChartBitcoinDaily, "replay"],
    ];
    for (const [pending, file, source] of cases) {
      const r = await pending;
      expect([r.status, r.source, r.recording], file).toEqual([200, source, file]);
    }
    // Verbatim where the request asks for the whole recording.
    expect((await cases[0]![0]).body).toEqual(rec(f.binance.fundingRateXRPUSDT));
    expect((await cases[2]![0]).body).toEqual(rec(f.binance.klinesXRPUSDT1h));
    expect((await cases[10]![0]).body).toEqual(rec(f.coingecko.marketChartBitcoinDaily));
    // Binance paging over the recording: the last `limit` rows, or the first ones from startTime.
    const rows = rec(f.binance.fundingRateXRPUSDT) as Array<{ fundingTime: number }>;
    expect((await get(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=XRPUSDT&limit=3`)).body).toEqual(rows.slice(-3));
    expect((await get(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=XRPUSDT&limit=2&startTime=${rows[5]!.fundingTime}`)).body).toEqual(rows.slice(5, 7));

    // Not recorded: the model answers, unmarked.
    for (const url of [
      `${sim.urls.binance}/fapi/v1/fundingRate?symbol=BTCUSDT&limit=3`,
      `${sim.urls.binance}/fapi/v1/klines?symbol=XRPUSDT&interval=4h&limit=3`,
      `${sim.urls.coingecko}/coins/bitcoin/market_chart?vs_currency=usd&days=7`,
      `${sim.urls.bybit}/v5/market/tickers?category=linear&symbol=BTCUSDT`,
    ]) {
      const r = await get(url);
      expect([r.status, r.source], url).toEqual([200, null]);
    }
    // An invalid request still gets the venue's own error.
    expect((await get(`${sim.urls.binance}/fapi/v1/fundingRate?symbol=XRPUSDT&limit=abc`)).status).toBe(400);
  });

  it("pushes recorded trades and liquidations on the websocket topics the model does not serve", async () => {
    const frames = async (url: string, subscribe: unknown, until: (msgs: string[]) => boolean): Promise<string[]> => {
      const ws = new WebSocket(url);
      const msgs: string[] = [];
      ws.on("message", (d: Buffer) => msgs.push(d.toString("utf8")));
      await new Promise<void>((resolve, reject) => {
        ws.once("open", () => resolve());
        ws.once("error", reject);
      });
      if (subscribe !== undefined) ws.send(JSON.stringify(subscribe));
      const end = Date.now() + 5000;
      while (!until(msgs) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      ws.close();
      return msgs;
    };
    const liq = '"o":{"s":"BTCUSDT","S":"BUY","o":"LIMIT","f":"IOC","q":"0.014","p":"4793.91","ap":"4706.04","X":"FILLED","l":"0.015","z":"0.014","T":1584059031421}';
    // SANDUSDT is not simulated on Binance: its recorded trades play. The all-market liquidation stream is the
    // model's: the 2020 recorded liquidation (due 1 s in) is not mixed into it.
    const t0 = Date.now();
    const bn = await frames(`${sim.wsUrls.binance}/market/stream?streams=sandusdt@aggTrade/!forceOrder@arr`, undefined, () => Date.now() - t0 > 2000);
    expect(bn.some((x) => x.startsWith('{"stream":"sandusdt@aggTrade","data":{"e":"aggTrade"'))).toBe(true);
    expect(bn.some((x) => x.includes(liq))).toBe(false);

    const bb = await frames(`${sim.wsUrls.bybit}/v5/public/linear`, { op: "subscribe", args: ["publicTrade.BTCUSDT", "allLiquidation.PIPPINUSDT"] }, (m) =>
      m.some((x) => x.includes("allLiquidation.PIPPINUSDT") && x.includes('"ts":1740480207578')),
    );
    // BTCUSDT is the model's on the linear path: its recorded trades (2026-08-09) are not played there
    // (test/sim/replay-epochs.test.ts checks the model's trades flow).
    expect(bb.some((x) => x.includes('"topic":"publicTrade.BTCUSDT"') && x.includes('"ts":1786310819681'))).toBe(false);
    expect(bb).toContain(
      '{"topic":"allLiquidation.PIPPINUSDT","type":"snapshot","ts":1740480207578,"data":[{"T":1740480207110,"s":"PIPPINUSDT","S":"Sell","v":"2846","p":"0.02456"}]}',
    );
  });
});
