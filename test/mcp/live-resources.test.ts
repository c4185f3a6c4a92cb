import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LIVE_NOTIFY_MS, LIVE_RING_SIZE, LIVE_STALL_MS, LiveResource, parseLiveUri } from "../../mcp/live-resources.js";
import type { StreamSession, StreamTransport } from "../../src/live/session.js";
import { cvdStream } from "../../tools/live/cvd.js";
import { liquidationStream } from "../../tools/live/liquidations.js";

describe("live MCP resource URIs", () => {
  it("parses the three forms into canonical URIs, and refuses the rest", () => {
    expect(parseLiveUri("marketgate://liquidations")).toEqual({ topic: "liquidations", uri: "marketgate://liquidations" });
    expect(parseLiveUri("marketgate://liquidations/ethusdt")).toEqual({ topic: "liquidations", raw: "ethusdt", base: "ETH", uri: "marketgate://liquidations/ETH" });
    expect(parseLiveUri("marketgate://cvd/BTC-USDT-SWAP")).toMatchObject({ base: "BTC", uri: "marketgate://cvd/BTC" });
    expect(() => parseLiveUri("marketgate://cvd")).toThrow(expect.objectContaining({ code: "BAD_REQUEST" }));
    expect(() => parseLiveUri("marketgate://cvd/%E0%A4%A")).toThrow(expect.objectContaining({ code: "BAD_REQUEST" }));
    expect(() => parseLiveUri("marketgate://cvd/$$$")).toThrow(expect.objectContaining({ code: "BAD_REQUEST" }));
    expect(() => parseLiveUri("marketgate://funding/BTC")).toThrow(expect.objectContaining({ code: "NOT_FOUND" }));
    expect(() => parseLiveUri("https://example.com/")).toThrow(expect.objectContaining({ code: "NOT_FOUND" }));
  });
});

describe("a live MCP resource (ring, coalesced updates, slow consumer)", () => {
  let notified: string[];
  let stalled: number;
  let canSend: boolean;
  let stopped: number;
  const host = {
    notify: (uri: string) => {
      if (!canSend) return false;
      notified.push(uri);
      return true;
    },
    stalledMs: () => stalled,
  };
  const fakeSession = () => ({ stop: () => stopped++ }) as unknown as StreamSession;
  /** A subscribed resource and the transport its stream session would write to. */
  const subscribed = async (def = liquidationStream, base = "ETH") => {
    const r = new LiveResource(def, base, `marketgate://${def.topic}/${base}`, host);
    r.aliases.add(r.uri);
    let transport!: StreamTransport;
    expect(
      await r.subscribe("0xabc", async (t) => {
        transport = t;
        t.send({ event: "debit", data: { topic: def.topic, minute: 1, price_usd: "0.002", remaining_usd: "0.998" } });
        return fakeSession();
      }),
    ).toBeUndefined();
    return { r, t: transport };
  };
  const liq = (n: number) => ({ event: "liquidation", id: `liq_1_${n}`, data: { n } });

  beforeEach(() => {
    vi.useFakeTimers();
    notified = [];
    stalled = 0;
    canSend = true;
    stopped = 0;
  });
  afterEach(() => vi.useRealTimers());

  it("notifies at once, then at most once per period; keeps the newest events with a growing seq", async () => {
    const { r, t } = await subscribed();
    expect(r.read()).toMatchObject({ status: "active", billing: { minutes_paid: 1, remaining_usd: "0.998" }, events: [] });
    for (let n = 0; n < 10; n++) expect(t.send(liq(n))).toBe(true);
    expect(notified).toHaveLength(1);
    vi.advanceTimersByTime(LIVE_NOTIFY_MS);
    expect(notified).toHaveLength(2);
    vi.advanceTimersByTime(LIVE_NOTIFY_MS * 4);
    expect(notified).toHaveLength(2);
    for (let n = 10; n < 250; n++) t.send(liq(n));
    const events = r.read().events as Array<{ seq: number; id: string }>;
    expect(events).toHaveLength(LIVE_RING_SIZE);
    expect(events[0]).toMatchObject({ seq: 151, id: "liq_1_150" });
    expect(events.at(-1)).toMatchObject({ seq: 250, id: "liq_1_249" });
  });

  it("running updates without an id replace the newest one; closed buckets stay", async () => {
    const { r, t } = await subscribed(cvdStream, "BTC");
    t.send({ event: "cvd_update", data: { cvd: 1 } });
    t.send({ event: "cvd_update", data: { cvd: 2 } });
    t.send({ event: "cvd_bucket", id: "cvd_BTC_1", data: { cvd: 3 } });
    t.send({ event: "cvd_update", data: { cvd: 4 } });
    t.send({ event: "cvd_update", data: { cvd: 5 } });
    expect((r.read().events as Array<{ data: unknown }>).map((e) => e.data)).toEqual([{ cvd: 2 }, { cvd: 3 }, { cvd: 5 }]);
  });

  it("a stalled notification stream keeps the update pending, and one stalled too long refuses events (the session drops it)", async () => {
    const { t } = await subscribed();
    canSend = false;
    stalled = 10;
    t.send(liq(1));
    expect(notified).toHaveLength(0);
    vi.advanceTimersByTime(LIVE_NOTIFY_MS * 3);
    canSend = true;
    stalled = 0;
    vi.advanceTimersByTime(LIVE_NOTIFY_MS);
    expect(notified).toHaveLength(1);
    stalled = LIVE_STALL_MS + 1;
    expect(t.send(liq(2))).toBe(false);
  });

  it("the end of a subscription is in the resource and notified at once; stop ends it without an event", async () => {
    const { r, t } = await subscribed();
    t.send(liq(1));
    t.end({ event: "payment_required", data: { reason: "credits_insufficient_balance: …" } });
    expect(notified).toHaveLength(2);
    expect(r.read()).toMatchObject({ status: "ended", ended: { event: "payment_required" } });
    expect(r.live).toBe(false);
    // Events of the ended stream are ignored.
    t.send(liq(2));
    expect(r.read().events).toHaveLength(1);

    const again = await subscribed();
    again.r.stop("unsubscribed");
    expect(stopped).toBe(1);
    expect(again.r.read()).toMatchObject({ status: "ended", ended: { event: "unsubscribed" } });
    expect(again.t.send(liq(3))).toBe(true);
    expect(again.r.read().events).toHaveLength(0);
  });

  it("a refused subscribe leaves nothing; an unsubscribe while opening stops the new stream", async () => {
    const r = new LiveResource(liquidationStream, undefined, "marketgate://liquidations", host);
    expect(await r.subscribe("0xabc", async () => ({ refused: "credits_insufficient_balance: …" }))).toBe("credits_insufficient_balance: …");
    expect(r.unused).toBe(true);
    let release!: () => void;
    const opening = r.subscribe("0xabc", async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return fakeSession();
    });
    expect(r.live).toBe(true);
    await Promise.resolve();
    r.stop("unsubscribed");
    release();
    await opening;
    expect(stopped).toBe(1);
    expect(r.live).toBe(false);
  });
});
