import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { logger } from "../../src/lib/log.js";
import { createCreditLedger, RedisCreditLedger, SqliteCreditLedger } from "../../src/payments/credits/index.js";
import { DEFAULT_HOLD_TTL_MS, type CreditLedger, type CreditLedgerOptions, type RefundTx, type ReserveOutcome } from "../../src/payments/credits/ledger.js";
import { RedisHandle } from "../../src/state/redis.js";
import { redisAvailable, TEST_REDIS_URL as REDIS_URL } from "../helpers/redis-available.js";
import { cleanupAfterEach, tempDir } from "../helpers/scratch.js";

const RUN_PREFIX = `test:credits:${randomBytes(4).toString("hex")}:`;
const MIN = 60_000;
const T = Date.parse("2025-06-01T12:00:00Z");
const USD = 1_000_000;

const wallet = (): string => `0x${randomBytes(20).toString("hex")}`;
const okHold = (r: ReserveOutcome): string => {
  if (!r.ok) throw new Error(`reservation refused: ${r.reason}`);
  return r.holdId;
};

const cleanup = cleanupAfterEach();
/** Async undo steps (closing Redis connections), run after each test. */
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});
let fresh = 0;

/** Ledgers over one store: one SQLite ledger, or three Redis ledgers on three connections ("replicas") under a fresh prefix. */
interface Kind {
  name: string;
  /** Needs the test Redis (skipped locally when none answers, see redis-available.ts). */
  redis?: boolean;
  open: (opts?: CreditLedgerOptions) => Promise<CreditLedger[]>;
}

/** Holds that outlive the cap-window tests, which reserve hours apart. */
const LONG_HOLDS = { holdTtlMs: 2 * 24 * 60 * MIN };

const kinds: Kind[] = [
  {
    name: "SqliteCreditLedger",
    open: async (opts) => {
      const ledger = new SqliteCreditLedger(":memory:", opts);
      cleanup.push(() => void ledger.close());
      return [ledger];
    },
  },
  {
    name: "RedisCreditLedger",
    redis: true,
    open: async (opts) => {
      const prefix = `${RUN_PREFIX}${fresh++}:`;
      const handles = [0, 1, 2].map(() => new RedisHandle({ url: REDIS_URL, prefix, log: logger }));
      for (const h of handles) h.start();
      await Promise.all(handles.map((h) => h.waitReady()));
      closers.push(() => Promise.all(handles.map((h) => h.close())));
      return handles.map((h) => new RedisCreditLedger(h, opts));
    },
  },
];

afterAll(async () => {
  if (!redisAvailable) return;
  const redis = new RedisHandle({ url: REDIS_URL, prefix: RUN_PREFIX, log: logger });
  redis.start();
  await redis.waitReady();
  for await (const keys of redis.client.scanIterator({ MATCH: `${RUN_PREFIX}*`, COUNT: 500 })) if (keys.length) await redis.client.del(keys);
  await redis.close();
});

describe.each(kinds.filter((k) => redisAvailable || !k.redis))("$name", ({ open }) => {
  it("credits once per reference, even under concurrent calls", async () => {
    const ls = await open();
    const [l] = ls as [CreditLedger];
    const w = wallet();
    expect(await l.account(w)).toEqual({ wallet: w, balanceMicro: 0, heldMicro: 0, refundPendingMicro: 0, creditedMicro: 0, spentMicro: 0, caps: {} });
    expect(await l.credit(w, 5 * USD, "ref-1")).toEqual({
      credited: true,
      account: { wallet: w, balanceMicro: 5 * USD, heldMicro: 0, refundPendingMicro: 0, creditedMicro: 5 * USD, spentMicro: 0, caps: {} },
    });
    expect(await l.credit(w, 5 * USD, "ref-1")).toMatchObject({ credited: false, account: { balanceMicro: 5 * USD } });
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => ls[i % ls.length]!.credit(w, 2 * USD, "ref-2")));
    expect(many.filter((r) => r.credited)).toHaveLength(1);
    // The wallet is normalised (checksummed addresses are the same wallet).
    expect(await l.account(w.toUpperCase().replace("0X", "0x"))).toMatchObject({ wallet: w, balanceMicro: 7 * USD, creditedMicro: 7 * USD });
    expect(await l.totals()).toEqual({ creditedMicro: 7 * USD, spentMicro: 0, outstandingMicro: 7 * USD });
  });

  it("reserves, commits and releases with exact arithmetic; totals count open holds as outstanding", async () => {
    const [l, l2] = (await open()) as [CreditLedger, CreditLedger | undefined];
    const other = l2 ?? l;
    const w = wallet();
    await l.credit(w, USD, "top-up");
    const r1 = await l.reserve(w, 300_000, { globalCaps: {} });
    expect(r1).toMatchObject({ ok: true, balanceMicro: 700_000 });
    const h1 = okHold(r1);
    expect(await l.totals()).toEqual({ creditedMicro: USD, spentMicro: 0, outstandingMicro: USD });
    await other.commit(h1, { tool: "price" });
    expect(await l.account(w)).toMatchObject({ balanceMicro: 700_000, creditedMicro: USD, spentMicro: 300_000 });
    expect(await l.totals()).toEqual({ creditedMicro: USD, spentMicro: 300_000, outstandingMicro: 700_000 });

    // Commit is idempotent; a release of a committed hold changes nothing.
    await l.commit(h1, { tool: "price" });
    await other.release(h1);
    expect(await l.account(w)).toMatchObject({ balanceMicro: 700_000, spentMicro: 300_000 });

    const h2 = okHold(await l.reserve(w, 200_000, { globalCaps: {} }));
    expect(await l.account(w)).toMatchObject({ balanceMicro: 500_000 });
    await other.release(h2);
    await l.release(h2);
    expect(await l.account(w)).toMatchObject({ balanceMicro: 700_000, spentMicro: 300_000 });
    // A released hold cannot be committed afterwards; unknown ids are ignored.
    await l.commit(h2, { tool: "price" });
    await l.commit("no-such-hold", { tool: "price" });
    await l.release("no-such-hold");
    expect(await l.account(w)).toMatchObject({ balanceMicro: 700_000, spentMicro: 300_000 });
    expect(await l.totals()).toEqual({ creditedMicro: USD, spentMicro: 300_000, outstandingMicro: 700_000 });

    // A zero-price reservation is fine; spending the exact balance is fine; one more micro-USD is not.
    await l.commit(okHold(await l.reserve(w, 0, { globalCaps: {} })), { tool: "free" });
    expect(await l.reserve(w, 700_000, { globalCaps: {} })).toMatchObject({ ok: true, balanceMicro: 0 });
    expect(await l.reserve(w, 1, { globalCaps: {} })).toEqual({ ok: false, reason: "insufficient_balance", balanceMicro: 0 });
    expect(await l.reserve(wallet(), 1, { globalCaps: {} })).toEqual({ ok: false, reason: "insufficient_balance", balanceMicro: 0 });
  });

  it("lets exactly 10 of 20 concurrent reservations through when the balance covers 10", async () => {
    const ls = await open();
    const w = wallet();
    await ls[0]!.credit(w, 10 * 5_000, "top-up");
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ls[i % ls.length]!.reserve(w, 5_000, { globalCaps: {} })));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    expect(results.filter((r) => !r.ok && r.reason === "insufficient_balance")).toHaveLength(10);
    expect(new Set(results.flatMap((r) => (r.ok ? [r.holdId] : []))).size).toBe(10);
    expect(await ls[0]!.account(w)).toMatchObject({ balanceMicro: 0 });
    expect(await ls[0]!.totals()).toMatchObject({ outstandingMicro: 50_000 });
    // Committing every hold concurrently from every replica spends each once.
    const holds = results.flatMap((r) => (r.ok ? [r.holdId] : []));
    await Promise.all(holds.flatMap((h) => ls.map((l) => l.commit(h, { tool: "t" }))));
    expect(await ls[0]!.account(w)).toMatchObject({ balanceMicro: 0, spentMicro: 50_000 });
    expect(await ls[0]!.totals()).toEqual({ creditedMicro: 50_000, spentMicro: 50_000, outstandingMicro: 0 });
  });

  it("refuses above the per-call cap, the wallet's own or the global one (the lower applies)", async () => {
    const [l] = (await open()) as [CreditLedger];
    const w = wallet();
    await l.credit(w, USD, "top-up");
    expect(await l.setCaps(w, { perCallMaxMicro: 100_000 })).toEqual({
      wallet: w,
      balanceMicro: USD,
      heldMicro: 0,
      refundPendingMicro: 0,
      creditedMicro: USD,
      spentMicro: 0,
      caps: { perCallMaxMicro: 100_000 },
    });
    expect(await l.reserve(w, 100_001, { globalCaps: {} })).toEqual({ ok: false, reason: "cap_per_call", balanceMicro: USD, limitMicro: 100_000 });
    expect(await l.reserve(w, 100_000, { globalCaps: {} })).toMatchObject({ ok: true });
    expect(await l.reserve(w, 60_000, { globalCaps: { perCallMaxMicro: 50_000 } })).toEqual({ ok: false, reason: "cap_per_call", balanceMicro: 900_000, limitMicro: 50_000 });
    // The cap is checked before the balance.
    expect(await l.reserve(w, 5 * USD, { globalCaps: {} })).toMatchObject({ ok: false, reason: "cap_per_call" });
    // A field left undefined removes that cap.
    expect((await l.setCaps(w, { perDayMaxMicro: undefined })).caps).toEqual({});
    expect(await l.reserve(w, 200_000, { globalCaps: {} })).toMatchObject({ ok: true, balanceMicro: 700_000 });
    // Caps of a wallet never credited are kept.
    const fresh = wallet();
    expect(await l.setCaps(fresh, { perHourMaxMicro: 7 })).toEqual({
      wallet: fresh,
      balanceMicro: 0,
      heldMicro: 0,
      refundPendingMicro: 0,
      creditedMicro: 0,
      spentMicro: 0,
      caps: { perHourMaxMicro: 7 },
    });
    expect(await l.account(fresh)).toMatchObject({ caps: { perHourMaxMicro: 7 } });
  });

  it("counts the last hour's debits and open holds against the per-hour cap (61 minutes ago does not count)", async () => {
    const [l] = (await open(LONG_HOLDS)) as [CreditLedger];
    const w = wallet();
    await l.credit(w, 10 * USD, "top-up");
    await l.setCaps(w, { perHourMaxMicro: USD });
    await l.commit(okHold(await l.reserve(w, 600_000, { globalCaps: {}, nowMs: T - 61 * MIN })), { tool: "a" });
    await l.commit(okHold(await l.reserve(w, 300_000, { globalCaps: {}, nowMs: T - 59 * MIN })), { tool: "a" });
    const open1 = okHold(await l.reserve(w, 600_000, { globalCaps: {}, nowMs: T }));
    expect(await l.reserve(w, 200_000, { globalCaps: {}, nowMs: T })).toEqual({ ok: false, reason: "cap_per_hour", balanceMicro: 8_500_000, limitMicro: USD });
    expect(await l.reserve(w, 100_000, { globalCaps: {}, nowMs: T })).toMatchObject({ ok: true });
    // Releasing the open hold frees its room in the window; a minute later the 59-minute-old debit leaves it.
    await l.release(open1);
    expect(await l.reserve(w, 600_000, { globalCaps: {}, nowMs: T })).toMatchObject({ ok: true });
    expect(await l.reserve(w, 300_000, { globalCaps: {}, nowMs: T + 30_000 })).toMatchObject({ ok: false, reason: "cap_per_hour" });
    expect(await l.reserve(w, 300_000, { globalCaps: {}, nowMs: T + 2 * MIN })).toMatchObject({ ok: true });
  });

  it("counts the last day's debits and open holds against the per-day cap", async () => {
    const [l] = (await open(LONG_HOLDS)) as [CreditLedger];
    const w = wallet();
    await l.credit(w, 10 * USD, "top-up");
    await l.setCaps(w, { perDayMaxMicro: 2 * USD, perHourMaxMicro: 5 * USD });
    await l.commit(okHold(await l.reserve(w, 1_500_000, { globalCaps: {}, nowMs: T - 49 * 60 * MIN })), { tool: "a" });
    await l.commit(okHold(await l.reserve(w, 1_000_000, { globalCaps: {}, nowMs: T - 23 * 60 * MIN })), { tool: "a" });
    okHold(await l.reserve(w, 500_000, { globalCaps: {}, nowMs: T - 61 * MIN }));
    expect(await l.reserve(w, 600_000, { globalCaps: {}, nowMs: T })).toEqual({ ok: false, reason: "cap_per_day", balanceMicro: 7_000_000, limitMicro: 2 * USD });
    expect(await l.reserve(w, 500_000, { globalCaps: {}, nowMs: T })).toMatchObject({ ok: true, balanceMicro: 6_500_000 });
    // The hour cap is checked before the day cap.
    expect(await l.reserve(w, 600_000, { globalCaps: { perHourMaxMicro: 1_000_000 }, nowMs: T })).toEqual({
      ok: false,
      reason: "cap_per_hour",
      balanceMicro: 6_500_000,
      limitMicro: 1_000_000,
    });
    // After the 23-hour-old debit leaves the window, there is room again.
    expect(await l.reserve(w, 1_000_000, { globalCaps: {}, nowMs: T + 61 * MIN })).toMatchObject({ ok: true });
  });

  it("applies global caps to wallets without caps of their own", async () => {
    const [l] = (await open(LONG_HOLDS)) as [CreditLedger];
    const w = wallet();
    await l.credit(w, 10 * USD, "top-up");
    const globalCaps = { perCallMaxMicro: USD, perHourMaxMicro: 2 * USD, perDayMaxMicro: 3 * USD };
    expect(await l.reserve(w, USD + 1, { globalCaps, nowMs: T })).toEqual({ ok: false, reason: "cap_per_call", balanceMicro: 10 * USD, limitMicro: USD });
    await l.commit(okHold(await l.reserve(w, USD, { globalCaps, nowMs: T - 2 * 60 * MIN })), { tool: "a" });
    await l.commit(okHold(await l.reserve(w, USD, { globalCaps, nowMs: T - 30 * MIN })), { tool: "a" });
    okHold(await l.reserve(w, USD, { globalCaps, nowMs: T }));
    expect(await l.reserve(w, 1, { globalCaps, nowMs: T })).toEqual({ ok: false, reason: "cap_per_hour", balanceMicro: 7 * USD, limitMicro: 2 * USD });
    expect(await l.reserve(w, 1, { globalCaps: { perDayMaxMicro: 3 * USD }, nowMs: T })).toEqual({ ok: false, reason: "cap_per_day", balanceMicro: 7 * USD, limitMicro: 3 * USD });
    // A lower own cap wins over the global one, a higher one does not lift it.
    await l.setCaps(w, { perHourMaxMicro: 10 * USD, perDayMaxMicro: 10 * USD });
    expect(await l.reserve(w, 1, { globalCaps, nowMs: T })).toMatchObject({ ok: false, reason: "cap_per_hour", limitMicro: 2 * USD });
    expect(await l.reserve(w, 1, { globalCaps: {}, nowMs: T })).toMatchObject({ ok: true });
    // Caps of 0 refuse every paid call.
    expect(await l.reserve(w, 1, { globalCaps: { perCallMaxMicro: 0 }, nowMs: T })).toMatchObject({ ok: false, reason: "cap_per_call", limitMicro: 0 });
  });

  it("shows held credits while a call is in flight, and returns an expired hold on the wallet's next read or reservation, without a sweep", async () => {
    const ls = await open({ holdTtlMs: MIN });
    const [a, b] = [ls[0]!, ls[1] ?? ls[0]!];
    const w = wallet();
    await a.credit(w, USD, "top-up");
    // A call in flight: its price is held, not spent, and the account says so.
    const crashed = okHold(await a.reserve(w, 300_000, { globalCaps: {}, nowMs: T }));
    expect(await b.account(w, T + 1_000)).toMatchObject({ balanceMicro: 700_000, heldMicro: 300_000, spentMicro: 0 });
    expect(await b.account(w, T + MIN - 1)).toMatchObject({ balanceMicro: 700_000, heldMicro: 300_000 });
    // Its process died (never committed nor released): one read after the expiry returns it, on any replica.
    expect(await b.account(w, T + MIN)).toMatchObject({ balanceMicro: USD, heldMicro: 0, spentMicro: 0 });
    expect(await a.account(w, T + MIN)).toMatchObject({ balanceMicro: USD, heldMicro: 0 });
    // A hold that expired and went back is not charged when its call finally answers.
    expect(await a.commit(crashed, { tool: "late" })).toBe(false);
    expect(await a.account(w, T + MIN)).toMatchObject({ balanceMicro: USD, spentMicro: 0 });

    // The next reservation of the wallet returns its expired holds first: the whole balance is spendable again.
    const t2 = T + 10 * MIN;
    okHold(await a.reserve(w, 400_000, { globalCaps: {}, nowMs: t2 }));
    expect(await b.reserve(w, USD, { globalCaps: {}, nowMs: t2 + MIN - 1 })).toEqual({ ok: false, reason: "insufficient_balance", balanceMicro: 600_000 });
    const whole = okHold(await b.reserve(w, USD, { globalCaps: {}, nowMs: t2 + MIN }));
    expect(await a.account(w, t2 + MIN)).toMatchObject({ balanceMicro: 0, heldMicro: USD });
    // A hold committed before its expiry is charged; a hold of another wallet is untouched by this wallet's reads.
    const other = wallet();
    await a.credit(other, USD, "top-up-other");
    const otherHold = okHold(await a.reserve(other, 100_000, { globalCaps: {}, nowMs: t2 }));
    expect(await b.commit(whole, { tool: "a" })).toBe(true);
    expect(await a.account(w, t2 + MIN)).toMatchObject({ balanceMicro: 0, heldMicro: 0, spentMicro: USD });
    expect(await a.totals()).toEqual({ creditedMicro: 2 * USD, spentMicro: USD, outstandingMicro: USD });
    // The periodic sweep returns what no read touched (once across replicas); released ids commit nothing.
    const swept = await Promise.all(ls.map((x) => x.sweep(t2 + MIN)));
    expect(swept.reduce((x, y) => x + y, 0)).toBe(1);
    expect(await a.commit(otherHold, { tool: "late" })).toBe(false);
    expect(await a.account(other, t2 + MIN)).toMatchObject({ balanceMicro: USD, heldMicro: 0, spentMicro: 0 });
    expect(await a.totals()).toEqual({ creditedMicro: 2 * USD, spentMicro: USD, outstandingMicro: USD });
  });

  it("claims a nonce once (of 20 concurrent claims, one wins) and again after it expired", async () => {
    const ls = await open();
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => ls[i % ls.length]!.claimNonce("nonce-a", 5 * MIN, T)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await ls[0]!.claimNonce("nonce-a", 5 * MIN, T + 5 * MIN - 1)).toBe(false);
    expect(await ls[0]!.claimNonce("nonce-b", 5 * MIN, T)).toBe(true);
    expect(await ls[0]!.claimNonce("nonce-a", 5 * MIN, T + 5 * MIN)).toBe(true);
    expect(await ls[0]!.claimNonce("nonce-a", 5 * MIN, T + 6 * MIN)).toBe(false);
    // Without nowMs: the wall clock.
    expect(await ls[0]!.claimNonce("nonce-c", 60_000)).toBe(true);
    expect(await ls[0]!.claimNonce("nonce-c", 60_000)).toBe(false);
  });

  it("moves the whole balance into one refund under concurrency; a second refund while it is open takes nothing", async () => {
    const ls = await open();
    const l = ls[0]!;
    const w = wallet();
    await l.credit(w, USD, "top-up");
    const hold = okHold(await l.reserve(w, 300_000, { globalCaps: {} }));
    const started = await Promise.all(Array.from({ length: 6 }, (_, i) => ls[i % ls.length]!.startRefund(w, `refund-${i}`)));
    const created = started.filter((r) => r?.created);
    expect(created).toHaveLength(1);
    const id = created[0]!.refund.id;
    expect(created[0]!.refund).toMatchObject({ wallet: w, amountMicro: 700_000, status: "preparing" });
    // Whoever lost the race sees the open refund, not a second one.
    for (const r of started) expect(r?.refund.id).toBe(id);
    // Open holds are not refunded; the pending amount is still owed (outstanding) until it is confirmed.
    expect(await l.account(w)).toMatchObject({ balanceMicro: 0, heldMicro: 300_000, refundPendingMicro: 700_000, creditedMicro: USD });
    expect(await l.totals()).toEqual({ creditedMicro: USD, spentMicro: 0, outstandingMicro: USD });
    expect(await l.reserve(w, 1, { globalCaps: {} })).toMatchObject({ ok: false, reason: "insufficient_balance" });
    // A top-up while the refund is open stays in the balance: a new refund request answers the open one.
    await l.credit(w, 200_000, "top-up-2");
    await l.release(hold);
    expect(await l.startRefund(w, "refund-late")).toMatchObject({ created: false, refund: { id, amountMicro: 700_000 } });
    expect(await l.account(w)).toMatchObject({ balanceMicro: 500_000, heldMicro: 0, refundPendingMicro: 700_000 });
    expect(await l.openRefunds({ wallet: w })).toMatchObject([{ id, status: "preparing" }]);
    expect(await l.startRefund(wallet(), "refund-empty")).toBeUndefined();
  });

  it("records the transfer before its broadcast as a compare-and-set, and ends a refund once: confirmed keeps it paid, restored puts it back", async () => {
    const ls = await open();
    const l = ls[0]!;
    const w = wallet();
    const tx = (n: number): RefundTx => ({ nonce: n, txHash: `0x${String(n).padStart(64, "0")}`, rawTx: `0x02${String(n).padStart(8, "0")}` });
    await l.credit(w, USD, "top-up");
    const { refund } = (await l.startRefund(w, "r1"))!;
    // Only a preparing refund takes a first transaction; a later one must name the one it replaces.
    expect(await l.recordRefundTx(refund.id, null, tx(7))).toBe(true);
    expect(await l.recordRefundTx(refund.id, null, tx(8))).toBe(false);
    expect(await l.recordRefundTx(refund.id, tx(6).txHash, tx(8))).toBe(false);
    expect(await l.recordRefundTx(refund.id, tx(7).txHash, tx(8))).toBe(true);
    expect(await l.recordRefundTx("no-such-refund", null, tx(9))).toBe(false);
    expect(await ls[ls.length - 1]!.openRefunds({})).toMatchObject([{ id: "r1", status: "pending", tx: tx(8), amountMicro: USD }]);
    expect(await l.latestRefund(w)).toMatchObject({ id: "r1", status: "pending", tx: tx(8) });

    // Confirmed by several reconcilers at once: once. Nothing comes back to the balance, and it is no longer owed.
    const confirmed = await Promise.all(Array.from({ length: 6 }, (_, i) => ls[i % ls.length]!.finishRefund("r1", "confirmed", null)));
    expect(confirmed.filter(Boolean)).toHaveLength(1);
    expect(await l.finishRefund("r1", "restored", "dropped")).toBe(false);
    expect(await l.recordRefundTx("r1", tx(8).txHash, tx(9))).toBe(false);
    expect(await l.account(w)).toMatchObject({ balanceMicro: 0, refundPendingMicro: 0, creditedMicro: USD });
    expect(await l.totals()).toEqual({ creditedMicro: USD, spentMicro: 0, outstandingMicro: 0 });
    expect(await l.openRefunds({})).toEqual([]);
    expect(await l.latestRefund(w)).toMatchObject({ id: "r1", status: "confirmed", tx: { txHash: tx(8).txHash } });

    // A refund whose transfer was dropped is restored once, however many reconcilers conclude so.
    await l.credit(w, 400_000, "top-up-2");
    expect((await l.startRefund(w, "r2"))?.created).toBe(true);
    expect(await l.recordRefundTx("r2", null, tx(10))).toBe(true);
    const restored = await Promise.all(Array.from({ length: 6 }, (_, i) => ls[i % ls.length]!.finishRefund("r2", "restored", "dropped")));
    expect(restored.filter(Boolean)).toHaveLength(1);
    expect(await l.finishRefund("r2", "confirmed", null)).toBe(false);
    expect(await l.account(w)).toMatchObject({ balanceMicro: 400_000, refundPendingMicro: 0 });
    expect(await l.totals()).toEqual({ creditedMicro: 1_400_000, spentMicro: 0, outstandingMicro: 400_000 });
    expect(await l.latestRefund(w)).toMatchObject({ id: "r2", status: "restored", reason: "dropped" });
    // A restored balance can be refunded again.
    expect(await l.startRefund(w, "r3")).toMatchObject({ created: true, refund: { amountMicro: 400_000 } });
    await expect(l.finishRefund("r3", "restored", null)).rejects.toBeInstanceOf(RangeError);
    await expect(l.finishRefund("r3", "confirmed", "dropped")).rejects.toBeInstanceOf(RangeError);
    await expect(l.recordRefundTx("r3", null, { ...tx(11), txHash: "0xABC" })).rejects.toBeInstanceOf(RangeError);
  });

  it("rejects invalid arguments with RangeError", async () => {
    const [l] = (await open()) as [CreditLedger];
    const w = wallet();
    await expect(l.credit("0x1234", 1, "r")).rejects.toBeInstanceOf(RangeError);
    await expect(l.credit(`${w}:x`, 1, "r")).rejects.toBeInstanceOf(RangeError);
    await expect(l.credit(w, 0, "r")).rejects.toBeInstanceOf(RangeError);
    await expect(l.credit(w, 1.5, "r")).rejects.toBeInstanceOf(RangeError);
    await expect(l.credit(w, 1, "")).rejects.toBeInstanceOf(RangeError);
    await expect(l.reserve(w, -1, { globalCaps: {} })).rejects.toBeInstanceOf(RangeError);
    await expect(l.reserve(w, 1, { globalCaps: { perDayMaxMicro: -5 } })).rejects.toBeInstanceOf(RangeError);
    await expect(l.setCaps(w, { perCallMaxMicro: Number.NaN })).rejects.toBeInstanceOf(RangeError);
    await expect(l.claimNonce("n", 0)).rejects.toBeInstanceOf(RangeError);
    await expect(l.startRefund("0x12", "r")).rejects.toBeInstanceOf(RangeError);
    expect(await l.account(w)).toMatchObject({ balanceMicro: 0, creditedMicro: 0 });
  });
});

describe("SqliteCreditLedger on a file", () => {
  it("keeps balances, spent totals, caps, references, nonces and open refunds across a restart, and releases the holds left open", async () => {
    const dir = tempDir(cleanup, "mg-credits-");
    const w = wallet();
    const first = createCreditLedger({ dataDir: join(dir, "data") });
    expect(first).toBeInstanceOf(SqliteCreditLedger);
    expect(existsSync(join(dir, "data", "credits.sqlite"))).toBe(true);
    await first.credit(w, USD, "top-up");
    await first.setCaps(w, { perDayMaxMicro: 900_000 });
    await first.commit(okHold(await first.reserve(w, 250_000, { globalCaps: {}, nowMs: T })), { tool: "a" });
    const open = okHold(await first.reserve(w, 400_000, { globalCaps: {}, nowMs: T }));
    expect(await first.claimNonce("n1", 10 * MIN, T)).toBe(true);
    // A refund of another wallet whose transfer was recorded when the process stopped.
    const v = wallet();
    await first.credit(v, 300_000, "top-up-v");
    await first.startRefund(v, "refund-v", T);
    const tx = { nonce: 3, txHash: `0x${"ab".repeat(32)}`, rawTx: "0x02f8" };
    expect(await first.recordRefundTx("refund-v", null, tx, T)).toBe(true);
    await first.close();

    const second = new SqliteCreditLedger(join(dir, "data", "credits.sqlite"));
    cleanup.push(() => void second.close());
    expect(await second.account(w)).toEqual({
      wallet: w,
      balanceMicro: 750_000,
      heldMicro: 0,
      refundPendingMicro: 0,
      creditedMicro: USD,
      spentMicro: 250_000,
      caps: { perDayMaxMicro: 900_000 },
    });
    expect(await second.totals()).toEqual({ creditedMicro: 1_300_000, spentMicro: 250_000, outstandingMicro: 1_050_000 });
    expect(await second.openRefunds({})).toEqual([{ id: "refund-v", wallet: v, amountMicro: 300_000, status: "pending", tx, createdAtMs: T, updatedAtMs: T }]);
    expect(await second.account(v)).toMatchObject({ balanceMicro: 0, refundPendingMicro: 300_000 });
    await second.commit(open, { tool: "late" });
    expect(await second.account(w)).toMatchObject({ balanceMicro: 750_000, spentMicro: 250_000 });
    expect(await second.credit(w, USD, "top-up")).toMatchObject({ credited: false });
    expect(await second.claimNonce("n1", 10 * MIN, T + MIN)).toBe(false);
    // The committed debit still counts in the day window after the restart.
    expect(await second.reserve(w, 700_000, { globalCaps: {}, nowMs: T + MIN })).toMatchObject({ ok: false, reason: "cap_per_day", limitMicro: 900_000 });
    expect(await second.reserve(w, 650_000, { globalCaps: {}, nowMs: T + MIN })).toMatchObject({ ok: true });
  });

  it("prunes debits older than a day and expired nonces on sweep, keeping the spent totals", async () => {
    const l = new SqliteCreditLedger(":memory:");
    cleanup.push(() => void l.close());
    const w = wallet();
    await l.credit(w, USD, "top-up");
    await l.commit(okHold(await l.reserve(w, 100_000, { globalCaps: {}, nowMs: T - 25 * 60 * MIN })), { tool: "a" });
    await l.commit(okHold(await l.reserve(w, 100_000, { globalCaps: {}, nowMs: T - 60 * MIN })), { tool: "a" });
    await l.claimNonce("old", MIN, T - 2 * MIN);
    await l.claimNonce("live", 10 * MIN, T);
    expect(await l.sweep(T)).toBe(0);
    // Reach into the file: the pruning is an implementation detail the totals must not see.
    const db = (l as unknown as { db: import("better-sqlite3").Database }).db;
    expect(db.prepare("SELECT COUNT(*) AS n FROM debits").get()).toEqual({ n: 1 });
    expect(db.prepare("SELECT nonce FROM nonces").all()).toEqual([{ nonce: "live" }]);
    expect(await l.account(w)).toMatchObject({ balanceMicro: 800_000, spentMicro: 200_000 });
    expect(await l.totals()).toEqual({ creditedMicro: USD, spentMicro: 200_000, outstandingMicro: 800_000 });
  });
});

describe.skipIf(!redisAvailable)("RedisCreditLedger", () => {
  it("is what the factory returns for a Redis handle, and keeps the debit record with its tool for a day", async () => {
    const prefix = `${RUN_PREFIX}factory:`;
    const redis = new RedisHandle({ url: REDIS_URL, prefix, log: logger });
    redis.start();
    await redis.waitReady();
    closers.push(() => redis.close());
    const l = createCreditLedger({ dataDir: "/nonexistent", redis });
    expect(l).toBeInstanceOf(RedisCreditLedger);
    const w = wallet();
    await l.credit(w, USD, "top-up");
    const hold = okHold(await l.reserve(w, 1234, { globalCaps: {}, nowMs: T }));
    await l.commit(hold, { tool: "orderbook" });
    expect(await redis.client.hGetAll(redis.key(`credits:h:${hold}`))).toEqual({
      wallet: w,
      amount: "1234",
      at: String(T),
      exp: String(T + DEFAULT_HOLD_TTL_MS),
      tool: "orderbook",
    });
    expect(await redis.client.pTTL(redis.key(`credits:h:${hold}`))).toBeGreaterThan(86_000_000);
    expect(await redis.client.zRange(redis.key(`credits:d:${w}`), 0, -1)).toEqual([`${hold}:1234`]);
    expect(await redis.client.zCard(redis.key("credits:holds"))).toBe(0);
    expect(await redis.client.zCard(redis.key(`credits:hw:${w}`))).toBe(0);
  });

  it("refuses everything while Redis is unreachable: 503, nothing charged", async () => {
    const down = new RedisHandle({ url: "redis://127.0.0.1:1", prefix: RUN_PREFIX, log: logger });
    down.start();
    closers.push(() => down.close());
    const l = new RedisCreditLedger(down);
    const w = wallet();
    const unavailable = { code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 5, message: expect.stringContaining("nothing was charged") };
    await expect(l.reserve(w, 1, { globalCaps: {} })).rejects.toMatchObject(unavailable);
    await expect(l.credit(w, 1, "r")).rejects.toMatchObject(unavailable);
    await expect(l.account(w)).rejects.toMatchObject(unavailable);
    await expect(l.totals()).rejects.toMatchObject(unavailable);
    await expect(l.claimNonce("n", 1000)).rejects.toMatchObject(unavailable);
  });
});
