/**
 * Completeness per topic, not per connection (issue 25, part 5): a symbol whose trades stop while its venue
 * connection stays up is checked against the venue's REST trades; when REST cannot cover the silence, the symbol's
 * `/cvd` is not `data_complete` (the store's `unfilled`, which `tools/streams/cvd.ts` publishes as
 * `data_complete: false`). Real manager, stores (SQLite in memory) and Bybit REST backfill against a local stub;
 * the feed is scripted (a live connection that delivers BTC trades only).
 */
import { EventEmitter } from "node:events";
import { afterAll, describe, expect, it } from "vitest";
import type { TradeBackfill } from "../../src/ingestion/backfill/common.js";
import type { VenueFeed } from "../../src/ingestion/feeds/feed-base.js";
import { IngestionManager } from "../../src/ingestion/manager.js";
import { CvdStore } from "../../src/ingestion/store/cvd-store.js";
import { openStreamDb } from "../../src/ingestion/store/db.js";
import { LiquidationStore } from "../../src/ingestion/store/liquidation-store.js";
import { TopicSilence } from "../../src/ingestion/topic-silence.js";
import { STREAM_VENUES, type FeedState, type StreamVenue, type Trade } from "../../src/ingestion/types.js";
import { BybitTradeBackfill } from "../../src/venues/bybit/backfill.js";
import { startStub, type RunningStub } from "../venues/perp-server.js";

const MIN = 60_000;

/** A connection that is up and subscribes the bases it lists; trades are pushed by the test. */
class ScriptedFeed extends EventEmitter {
  readonly #subs = new Set<string>();
  constructor(
    readonly venue: StreamVenue,
    private readonly lists: readonly string[],
  ) {
    super();
  }
  start(): void {}
  async stop(): Promise<void> {}
  async subscribe(bases: readonly string[]) {
    const subscribed = bases.filter((b) => this.lists.includes(b));
    for (const b of subscribed) this.#subs.add(b);
    return { subscribed, unknown: bases.filter((b) => !this.lists.includes(b)), rejected: [] };
  }
  unsubscribe(bases: readonly string[]): void {
    for (const b of bases) this.#subs.delete(b);
  }
  subscriptions(): string[] {
    return [...this.#subs];
  }
  state(): FeedState {
    const connected = this.lists.length > 0;
    return { venue: this.venue, connected, connectedSince: connected ? 0 : null, lastMessageAt: null, reconnects: 0, subscribedSymbols: this.#subs.size, lagMs: null };
  }
}

describe("completeness per topic", () => {
  const cleanup: Array<() => unknown> = [];
  afterAll(async () => {
    for (const f of cleanup.reverse()) await f();
  });

  it("a symbol silent on a live connection is not data_complete when REST cannot cover it; a quiet one REST covers is", async () => {
    const clock = { now: Date.now() };
    const now = () => clock.now;
    // Bybit REST: ETH fails (venue error), SOL answers trades older than the silence (a quiet market, covered).
    const stub: RunningStub = await startStub({
      "GET /v5/market/recent-trade": (req) => {
        const symbol = (req.query as Record<string, string>).symbol;
        if (symbol === "ETHUSDT") return { status: 400, body: { retCode: 10001, retMsg: "params error" } };
        const list = [{ execId: "s1", symbol, price: "150.1", size: "2", side: "Buy", time: String(clock.now - 60 * MIN), isBlockTrade: false }];
        return { body: { retCode: 0, retMsg: "OK", result: { category: "linear", list }, time: clock.now } };
      },
    });
    cleanup.push(() => stub.close());
    const instruments = { instrument: async (b: string) => ({ base: b, venueSymbol: `${b}USDT`, multiplier: 1, contractSize: 1 }) };
    const bybitBackfill = new BybitTradeBackfill({ baseUrl: stub.url, instruments, timeoutMs: 2000, retries: 0 });
    const bybit = new ScriptedFeed("bybit", ["BTC", "ETH", "SOL"]);
    const feeds = Object.fromEntries(STREAM_VENUES.map((v) => [v, v === "bybit" ? bybit : new ScriptedFeed(v, [])])) as unknown as Record<StreamVenue, VenueFeed>;
    const backfills = Object.fromEntries(STREAM_VENUES.map((v) => [v, bybitBackfill])) as unknown as Record<StreamVenue, TradeBackfill>;
    const db = openStreamDb(":memory:");
    const cvd = new CvdStore(db, { now, flushMs: 60_000, purgeEveryMs: 0 });
    const liquidations = new LiquidationStore(db, { now });
    const manager = new IngestionManager(feeds, backfills, cvd, liquidations, { preSubscribed: ["BTC", "ETH", "SOL"], sweepMs: 20, topicSilenceMs: 5 * MIN, now });
    cleanup.push(
      () => db.close(),
      () => manager.stop(),
    );
    await manager.start();
    const start = clock.now;
    await new Promise((r) => setTimeout(r, 60)); // first sweeps: every topic watched from `start`

    // BTC trades every minute for 7 minutes; ETH and SOL say nothing.
    let id = 0;
    for (let i = 1; i <= 7; i++) {
      clock.now = start + i * MIN;
      const trade: Trade = { venue: "bybit", base: "BTC", time: clock.now, price: 70_000, size: 0.1, side: "buy", id: `b${++id}` };
      bybit.emit("trades", [trade]);
      await new Promise((r) => setTimeout(r, 40)); // sweeps run
    }
    await new Promise((r) => setTimeout(r, 200)); // REST checks answer

    const window = (base: string) => cvd.cvd(base, start - MIN, clock.now + 1);
    expect(window("BTC").unfilled).toBe(false); // delivering: complete
    expect(window("ETH").unfilled).toBe(true); // silent, REST failed: not data_complete
    expect(window("SOL").unfilled).toBe(false); // silent, REST shows a quiet market: complete
    expect(stub.calls.filter((c) => c.includes("symbol=BTCUSDT"))).toEqual([]); // a delivering topic costs no REST call
  });
});

describe("TopicSilence", () => {
  it("reports a topic once per silence interval, forgets unsubscribed bases, and restarts after a disconnect", () => {
    const s = new TopicSilence(1000);
    expect(s.silent("okx", ["BTC", "ETH"], 0)).toEqual([]); // watched from now
    s.seen([{ venue: "okx", base: "BTC", time: 500, price: 1, size: 1, side: "buy", id: "1" }], 500);
    expect(s.silent("okx", ["BTC", "ETH"], 1200)).toEqual([{ venue: "okx", base: "ETH", from: 0, to: 1200 }]);
    expect(s.silent("okx", ["BTC", "ETH"], 1600)).toEqual([{ venue: "okx", base: "BTC", from: 500, to: 1600 }]);
    expect(s.silent("okx", ["BTC", "ETH"], 2000)).toEqual([]); // ETH checked at 1200: next due at 2200
    s.reset("okx", 2100);
    expect(s.silent("okx", ["ETH"], 2300)).toEqual([]); // the connection gap covered it; watched again from 2100
    expect(s.silent("okx", ["ETH", "BTC"], 3200)).toEqual([{ venue: "okx", base: "ETH", from: 2100, to: 3200 }]); // BTC forgotten, watched anew
  });
});
