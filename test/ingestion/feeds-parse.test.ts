import { describe, expect, it } from "vitest";
import type { FeedInstrument, InstrumentSource } from "../../src/ingestion/feeds/normalise.js";
import type { PerpVenueClient } from "../../src/venues/perp/types.js";
import { parseBinanceAggTrades, parseBinanceMessage } from "../../src/venues/binance/feed-parse.js";
import { parseBybitMessage, parseBybitRecentTrades } from "../../src/venues/bybit/feed-parse.js";
import { parseHyperliquidMessage, parseHyperliquidRecentTrades } from "../../src/venues/hyperliquid/feed-parse.js";
import { parseOkxMessage, parseOkxTrades } from "../../src/venues/okx/feed-parse.js";
import { decimal, idOf, positiveDecimal } from "../../src/ingestion/feeds/normalise.js";
import { fixture, fixtureText } from "../helpers/fixtures.js";

/** One frame per line of a venue's `.ndjson` fixture (`<venue>/<file>`). */
function frames(path: string): unknown[] {
  return fixtureText(path)
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as unknown);
}
/** The derived multiplier frames of every venue, by key (`binance_1000PEPEUSDT_aggTrade`, …). */
const derived = Object.assign({}, ...["binance", "bybit", "okx", "hyperliquid"].map((v) => fixture(`${v}/DERIVED_multiplier_frames.json`))) as Record<string, unknown>;

// a perp REST client is an instrument source for feeds and backfills (compile-time check)
export const perpClientIsASource = (c: PerpVenueClient): InstrumentSource => c;

const inst = (venueSymbol: string, base: string, multiplier = 1, contractSize = 1): FeedInstrument => ({ venueSymbol, base, multiplier, contractSize });
const lookup = (...list: FeedInstrument[]) => new Map(list.map((i) => [i.venueSymbol, i]));

describe("binance frames", () => {
  const map = lookup(inst("SANDUSDT", "SAND"), inst("CTKUSDT", "CTK"), inst("BATUSDT", "BAT"), inst("BTCUSDT", "BTC"), inst("1000PEPEUSDT", "PEPE", 1000));

  it("maps recorded aggTrade frames: m=true → taker sell, id = aggregate id, T = time", () => {
    const out = frames("binance/binance_usdm_ws_aggTrade_2021-04-05_excerpt.ndjson").map((f) => parseBinanceMessage(f, map));
    expect(out.every((o) => o.error === undefined)).toBe(true);
    const trades = out.flatMap((o) => o.trades);
    expect(trades[0]).toEqual({ venue: "binance", base: "SAND", time: 1617647797485, price: 0.69067, size: 369, side: "sell", id: "9445517" });
    expect(trades[1]).toEqual({ venue: "binance", base: "CTK", time: 1617647797706, price: 3.64307, size: 12, side: "buy", id: "11306585" });
    expect(trades.map((t) => t.side)).toEqual(["sell", "buy", "sell", "sell", "sell", "sell", "sell"]);
    // NEOUSDT is not in the lookup: skipped, not an error; the kline frame is ignored
    expect(out[6]).toMatchObject({ trades: [], skipped: 1 });
    expect(out[8]).toMatchObject({ trades: [], liquidations: [], skipped: 0 });
    // text frames parse the same way
    const text = fixtureText("binance/binance_usdm_ws_aggTrade_2021-04-05_excerpt.ndjson").split("\n")[0]!;
    expect(parseBinanceMessage(text, map).trades).toEqual([trades[0]]);
    // raw (non-combined) payloads too
    expect(parseBinanceMessage((frames("binance/binance_usdm_ws_aggTrade_2021-04-05_excerpt.ndjson")[0] as { data: unknown }).data, map).trades).toEqual([trades[0]]);
  });

  it("maps the recorded forceOrder: S=BUY → a short was liquidated, size z, price ap", () => {
    const out = parseBinanceMessage(fixture("binance/binance_usdm_ws_forceOrder_BTCUSDT_2020-03-13.json"), map);
    expect(out.liquidations).toEqual([
      { venue: "binance", base: "BTC", venueSymbol: "BTCUSDT", time: 1584059031421, side: "short", price: 4706.04, size: 0.014, valueUsd: 65.88456 },
    ]);
    const sell = JSON.parse(
      JSON.stringify(fixture("binance/binance_usdm_ws_forceOrder_BTCUSDT_2020-03-13.json")).replace('"S":"BUY"', '"S":"SELL"').replace('"ap":"4706.04"', '"ap":"0"'),
    );
    expect(parseBinanceMessage(sell, map).liquidations[0]).toMatchObject({ side: "long", price: 4793.91 });
    // all-market stream: unknown symbols are filtered out silently
    expect(parseBinanceMessage(fixture("binance/binance_usdm_ws_forceOrder_BTCUSDT_2020-03-13.json"), lookup())).toMatchObject({ liquidations: [], skipped: 1 });
  });

  it("undoes the 1000PEPE multiplier (derived frame)", () => {
    expect(parseBinanceMessage(derived.binance_1000PEPEUSDT_aggTrade, map).trades).toEqual([
      { venue: "binance", base: "PEPE", time: 1689634800120, price: 0.000001565, size: 2_500_000_000, side: "buy", id: "412345678" },
    ]);
  });

  it("reports acks, venue errors and malformed frames as values", () => {
    expect(parseBinanceMessage('{"result":null,"id":1}', map).control).toEqual({ type: "ack" });
    expect(parseBinanceMessage({ error: { code: 2, msg: "Invalid request" }, id: 3 }, map).control).toMatchObject({ type: "venue_error" });
    expect(parseBinanceMessage(fixture("binance/binance_usdm_ws_aggTrade_tardis_without_a_2019-09-17.json"), map).error).toMatch(/aggTrade: a:/);
    expect(parseBinanceMessage("{not json", map).error).toMatch(/not JSON/);
    expect(parseBinanceMessage("42", map).error).toBeDefined();
    expect(parseBinanceMessage({ stream: "x", data: { e: "aggTrade", s: "BTCUSDT", a: 1, p: "abc", q: "1", T: 1, m: true } }, map).error).toMatch(/p: expected a decimal/);
    expect(parseBinanceMessage({ stream: "x", data: {} }, map).error).toMatch(/no event type/);
  });

  it("parses a REST aggTrades page with the same normalisation", () => {
    const out = parseBinanceAggTrades(fixture("binance/binance_rest_aggTrades_BTCUSDT_2021-10-22.json"), inst("BTCUSDT", "BTC"));
    expect(out.error).toBeUndefined();
    expect(out.trades).toHaveLength(10);
    expect(out.trades[0]).toEqual({ venue: "binance", base: "BTC", time: 1634944096633, price: 60759.6, size: 0.00841, side: "buy", id: "966492862" });
    expect(out.trades[2]!.side).toBe("sell");
    expect(parseBinanceAggTrades({ code: -1121 }, inst("BTCUSDT", "BTC")).error).toBeDefined();
  });
});

describe("bybit frames", () => {
  const map = lookup(inst("BTCUSDT", "BTC"), inst("ETHUSDT", "ETH"), inst("SOLUSDT", "SOL"), inst("PIPPINUSDT", "PIPPIN"), inst("1000PEPEUSDT", "PEPE", 1000));

  it("maps recorded publicTrade frames: S is the taker side, v size, i id", () => {
    const out = frames("bybit/bybit_v5_ws_linear_2026-08-09_excerpt.ndjson").map((f) => parseBybitMessage(f, map));
    expect(out[0]!.control).toEqual({ type: "ack", message: "" });
    expect(out[1]!.trades).toEqual([{ venue: "bybit", base: "BTC", time: 1786310819680, price: 65114.2, size: 0.004, side: "sell", id: "a9188a0a-82bc-50de-be60-03eedbe3cdd7" }]);
    expect(out[2]!.trades.map((t) => [t.side, t.size, t.price])).toEqual([
      ["buy", 0.01, 1922.5],
      ["buy", 1.3, 1922.5],
      ["buy", 0.1, 1922.5],
      ["buy", 0.1, 1922.5],
      ["buy", 0.16, 1922.5],
    ]);
    expect(out[3]!.trades[0]).toMatchObject({ base: "SOL", side: "sell", size: 5.1, price: 77.3 });
    expect(out[4]).toMatchObject({ trades: [], skipped: 1 }); // DOGE not in the lookup
    expect(out[5]).toMatchObject({ trades: [], liquidations: [], skipped: 0 }); // tickers ignored
    expect(out.every((o) => o.error === undefined)).toBe(true);
  });

  it("maps the recorded allLiquidation: S is the POSITION side (Sell → short)", () => {
    expect(parseBybitMessage(fixture("bybit/bybit_v5_ws_allLiquidation_PIPPINUSDT_2025-02-25.json"), map).liquidations).toEqual([
      { venue: "bybit", base: "PIPPIN", venueSymbol: "PIPPINUSDT", time: 1740480207110, side: "short", price: 0.02456, size: 2846, valueUsd: 69.89776 },
    ]);
  });

  it("undoes the 1000PEPE multiplier; allLiquidation Buy → long (derived frames)", () => {
    expect(parseBybitMessage(derived.bybit_1000PEPEUSDT_publicTrade, map).trades[0]).toMatchObject({ base: "PEPE", price: 0.0000015648, size: 120_000_000, side: "sell" });
    expect(parseBybitMessage(derived.bybit_1000PEPEUSDT_allLiquidation, map).liquidations[0]).toMatchObject({
      base: "PEPE",
      venueSymbol: "1000PEPEUSDT",
      side: "long",
      price: 0.00000155,
      size: 300_000_000,
      valueUsd: 465,
    });
  });

  it("reports pongs, refusals and malformed rows as values (good rows kept)", () => {
    expect(parseBybitMessage({ success: true, ret_msg: "pong", conn_id: "x", op: "ping" }, map).control).toEqual({ type: "pong", message: "pong" });
    expect(parseBybitMessage({ success: false, ret_msg: "handler not found", conn_id: "x", op: "subscribe" }, map).control).toEqual({
      type: "venue_error",
      message: "subscribe: handler not found",
    });
    const bad = frames("bybit/bybit_v5_ws_linear_2026-08-09_excerpt.ndjson")[2] as { data: Record<string, unknown>[] };
    delete bad.data[1]!.v;
    const out = parseBybitMessage(bad, map);
    expect(out.trades).toHaveLength(4);
    expect(out.error).toMatch(/1 malformed row\(s\); row 1: v:/);
    expect(parseBybitMessage({ topic: "publicTrade.BTCUSDT" }, map).error).toBeDefined();
    expect(parseBybitMessage("", map).error).toBeDefined();
  });

  it("parses a REST recent-trade page (long key names) with the same normalisation", () => {
    const body = {
      retCode: 0,
      retMsg: "OK",
      result: { category: "linear", list: [{ execId: "e1", symbol: "BTCUSDT", price: "65114.20", size: "0.004", side: "Sell", time: "1786310819680", isBlockTrade: false }] },
    };
    expect(parseBybitRecentTrades(body, inst("BTCUSDT", "BTC")).trades).toEqual([
      { venue: "bybit", base: "BTC", time: 1786310819680, price: 65114.2, size: 0.004, side: "sell", id: "e1" },
    ]);
    expect(parseBybitRecentTrades({ retCode: 10001, retMsg: "params error" }, inst("BTCUSDT", "BTC")).error).toMatch(/10001/);
  });
});

describe("okx frames", () => {
  const map = lookup(inst("BTC-USDT-SWAP", "BTC", 1, 0.01), inst("SHIB-USDT-SWAP", "SHIB", 1, 1_000_000), inst("XRP-USD-230929", "XRP", 1, 1));

  it("maps the recorded swap trade: sz contracts × ctVal, side = taker", () => {
    expect(parseOkxMessage(fixture("okx/okx_v5_ws_trades_BTC-USDT-SWAP_2021-12-22.json"), map).trades).toEqual([
      { venue: "okx", base: "BTC", time: 1640131236050, price: 48938.5, size: 0.05, side: "buy", id: "148266905" },
    ]);
    expect(parseOkxMessage(derived["okx_SHIB-USDT-SWAP_trades"], map).trades[0]).toMatchObject({ base: "SHIB", size: 12_000_000, price: 0.00000765, side: "sell" });
  });

  it("acks subscriptions and skips recorded non-USDT-swap instruments", () => {
    const out = frames("okx/okx_v5_ws_2022-05-13_excerpt.ndjson").map((f) => parseOkxMessage(f, map));
    expect(out.slice(0, 3).map((o) => o.control?.type)).toEqual(["ack", "ack", "ack"]);
    expect(out.slice(3).map((o) => [o.trades.length, o.skipped, o.error])).toEqual(Array(5).fill([0, 1, undefined]));
  });

  it("maps the recorded liquidation-orders: posSide short → short; else the order side (sell → long)", () => {
    const real = fixture("okx/okx_v5_ws_liquidation-orders_XRP-USD-230929_2023-03-30.json");
    expect(parseOkxMessage(real, map).liquidations).toEqual([
      { venue: "okx", base: "XRP", venueSymbol: "XRP-USD-230929", time: 1680173247614, side: "short", price: 0.55205, size: 39, valueUsd: 21.52995 },
    ]);
    const noPos = JSON.parse(JSON.stringify(real).replace('"posSide":"short","side":"buy"', '"posSide":"net","side":"sell"'));
    expect(parseOkxMessage(noPos, map).liquidations[0]!.side).toBe("long");
    const btc = {
      arg: { channel: "liquidation-orders", instType: "SWAP" },
      data: [{ instId: "BTC-USDT-SWAP", details: [{ bkPx: "50000", sz: "3", side: "buy", posSide: "", ts: "1680173247614" }] }],
    };
    expect(parseOkxMessage(btc, map).liquidations[0]).toMatchObject({ side: "short", size: 0.03, valueUsd: 1500 });
    expect(parseOkxMessage({ ...btc, data: [{ ...btc.data[0], instId: "ETH-USDT-SWAP" }] }, map)).toMatchObject({ liquidations: [], skipped: 1 });
  });

  it("reports pong, errors, the upgrade notice and malformed frames as values", () => {
    expect(parseOkxMessage("pong", map).control).toEqual({ type: "pong" });
    expect(parseOkxMessage({ event: "error", code: "60012", msg: "Invalid request" }, map).control).toEqual({ type: "venue_error", message: "60012 Invalid request" });
    expect(parseOkxMessage({ event: "notice", code: "64008", msg: "The connection will soon be closed for a service upgrade." }, map).control?.type).toBe("reconnect");
    expect(parseOkxMessage({ arg: { channel: "trades", instId: "BTC-USDT-SWAP" } }, map).error).toMatch(/data/);
    expect(parseOkxMessage({ arg: { channel: "trades" }, data: [{ instId: "BTC-USDT-SWAP", tradeId: "1", px: "1", sz: "1", side: "up", ts: "1" }] }, map).error).toMatch(/side/);
    expect(parseOkxMessage("ping?", map).error).toMatch(/not JSON/);
  });

  it("parses a REST trades page with the same normalisation", () => {
    const out = parseOkxTrades(fixture("okx/okx_rest_trades_BTC-USDT_2025-05-12.json"), inst("BTC-USDT", "BTC"));
    expect(out.trades).toEqual([
      { venue: "okx", base: "BTC", time: 1747087163557, price: 102537.9, size: 0.00013669, side: "sell", id: "734864333" },
      { venue: "okx", base: "BTC", time: 1747087161666, price: 102537.9, size: 0.0000125, side: "buy", id: "734864332" },
    ]);
    expect(parseOkxTrades({ code: "51001", msg: "Instrument ID does not exist", data: [] }, inst("BTC-USDT", "BTC")).error).toMatch(/51001/);
  });
});

describe("hyperliquid frames", () => {
  const map = lookup(inst("BTC", "BTC"), inst("FXS", "FXS"), inst("kPEPE", "PEPE", 1000));

  it("maps recorded trades: B = buy aggressor, A = sell aggressor, tid id", () => {
    const out = frames("hyperliquid/hyperliquid_ws_trades_2024-10-29.ndjson").map((f) => parseHyperliquidMessage(f, map));
    expect(out[0]!.trades).toEqual([{ venue: "hyperliquid", base: "FXS", time: 1730160015113, price: 1.9008, size: 10.5, side: "sell", id: "611279506717453" }]);
    expect(out[2]!.trades.map((t) => [t.side, t.size, t.price, t.id])).toEqual([
      ["buy", 0.38111, 69997, "1016375172059570"],
      ["buy", 0.33458, 69997, "479312521152049"],
      ["buy", 0.83613, 69997, "229986151112628"],
    ]);
    expect(out.flatMap((o) => o.trades)).toHaveLength(6);
  });

  it("undoes the kPEPE multiplier (derived frame)", () => {
    expect(parseHyperliquidMessage(derived.hyperliquid_kPEPE_trades, map).trades).toEqual([
      { venue: "hyperliquid", base: "PEPE", time: 1689634800000, price: 0.000001565, size: 1_000_000_000, side: "sell", id: "704512398765432" },
    ]);
  });

  it("reports control and malformed frames as values", () => {
    expect(parseHyperliquidMessage('{"channel":"pong"}', map).control).toEqual({ type: "pong" });
    expect(parseHyperliquidMessage({ channel: "subscriptionResponse", data: { method: "subscribe" } }, map).control).toEqual({ type: "ack" });
    expect(parseHyperliquidMessage({ channel: "error", data: "Invalid subscription" }, map).control).toEqual({ type: "venue_error", message: "Invalid subscription" });
    expect(parseHyperliquidMessage({ channel: "trades", data: {} }, map).error).toBeDefined();
    expect(parseHyperliquidMessage({ channel: "trades", data: [{ coin: "BTC", side: "X", px: "1", sz: "1", time: 1, tid: 1 }] }, map).error).toMatch(/side/);
    expect(parseHyperliquidMessage({ data: [] }, map).error).toMatch(/channel/);
  });

  it("parses a REST recentTrades answer (same rows)", () => {
    const rows = (frames("hyperliquid/hyperliquid_ws_trades_2024-10-29.ndjson")[2] as { data: unknown[] }).data;
    expect(parseHyperliquidRecentTrades(rows, inst("BTC", "BTC")).trades).toHaveLength(3);
    expect(parseHyperliquidRecentTrades({}, inst("BTC", "BTC")).error).toBeDefined();
  });
});

describe("the per-message fast paths", () => {
  const map = lookup(
    inst("SANDUSDT", "SAND"),
    inst("CTKUSDT", "CTK"),
    inst("BATUSDT", "BAT"),
    inst("BTCUSDT", "BTC"),
    inst("ETHUSDT", "ETH"),
    inst("SOLUSDT", "SOL"),
    inst("1000PEPEUSDT", "PEPE", 1000),
  );
  /** The frame with its times as strings: valid for the schemas, refused by the fast paths. */
  const slow = (f: unknown): unknown =>
    JSON.parse(JSON.stringify(f), function (this: unknown, key, value: unknown) {
      return key === "T" && typeof value === "number" ? String(value) : value;
    });

  it("give exactly what the schemas give on the recorded frames (Binance aggTrade, Bybit publicTrade)", () => {
    const cases: Array<[string, (f: unknown) => ReturnType<typeof parseBinanceMessage>]> = [
      ["binance/binance_usdm_ws_aggTrade_2021-04-05_excerpt.ndjson", (f) => parseBinanceMessage(f, map)],
      ["bybit/bybit_v5_ws_linear_2026-08-09_excerpt.ndjson", (f) => parseBybitMessage(f, map)],
    ];
    for (const [file, parse] of cases) {
      const all = frames(file);
      let trades = 0;
      for (const f of all) {
        const fast = parse(f);
        expect(parse(slow(f))).toEqual(fast);
        expect(parse(JSON.stringify(f))).toEqual(fast);
        trades += fast.trades.length;
      }
      expect(trades).toBeGreaterThan(3);
    }
    const pepe = parseBybitMessage(derived.bybit_1000PEPEUSDT_publicTrade, map);
    expect(parseBybitMessage(slow(derived.bybit_1000PEPEUSDT_publicTrade), map)).toEqual(pepe);
  });

  it("leave unusual rows to the schemas, errors included", () => {
    const row = { T: 1786310819680, s: "BTCUSDT", S: "Sell", v: "0.004", p: "65114.20", i: "a9188a0a-82bc-50de-be60-03eedbe3cdd7" };
    const bybit = (data: unknown[]) => parseBybitMessage({ topic: "publicTrade.BTCUSDT", data }, map);
    expect(bybit([row, { ...row, p: "-1" }])).toMatchObject({ trades: [{ price: 65114.2 }], error: expect.stringMatching(/^1 malformed row\(s\); row 1: p:/) });
    expect(bybit([row, { ...row, i: "" }]).trades).toHaveLength(1);
    expect(bybit([{ ...row, s: "DOGEUSDT" }, row])).toMatchObject({ trades: [{ base: "BTC" }], skipped: 1 });
    expect(bybit([{ ...row, i: 42 }]).trades[0]!.id).toBe("42");
    expect(parseBybitMessage({ topic: 1, data: [] }, map).error).toMatch(/no topic/);
    const agg = { e: "aggTrade", s: "BTCUSDT", a: 7, p: "1", q: "2", T: 5, m: false };
    expect(parseBinanceMessage({ ...agg, a: Infinity }, map).error).toMatch(/aggTrade: a:/);
    expect(parseBinanceMessage({ ...agg, q: " 2 " }, map).trades[0]).toMatchObject({ size: 2, id: "7", side: "buy" });
    expect(parseBinanceMessage({ ...agg, s: "NEOUSDT" }, map)).toMatchObject({ trades: [], skipped: 1 });
  });

  it("read decimals bit for bit as Number does", () => {
    const edge = [
      "0.69067",
      "369",
      "65114.20",
      "0.000001565",
      "5.",
      ".5",
      ".",
      "",
      "007",
      "1e5",
      " 1",
      "+1",
      "-1",
      "0x10",
      "1.2.3",
      "Infinity",
      "123456789012345",
      "1234567890123456",
      "0.1234567890123456789",
    ];
    for (const x of edge) expect(Object.is(decimal(x), Number(x))).toBe(true);
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 20_000; i++) {
      let x = "";
      for (let d = 0, n = 1 + rnd(17); d < n; d++) x += String(rnd(10));
      if (rnd(5) > 0) {
        const at = rnd(x.length + 1);
        x = `${x.slice(0, at)}.${x.slice(at)}`;
      }
      expect(Object.is(decimal(x), Number(x))).toBe(true);
    }
    expect([positiveDecimal("0"), positiveDecimal(""), positiveDecimal("1e400"), positiveDecimal(null), positiveDecimal(2)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      2,
    ]);
    expect([idOf(""), idOf(12), idOf(Number.NaN), idOf("x"), idOf(null)]).toEqual([undefined, "12", undefined, "x", undefined]);
  });
});
