import { randomUUID } from "node:crypto";
import { AppError } from "../../errors.js";
import type { Redis, RedisHandle } from "../../state/redis.js";
import { evalScript, isTransientRedisError, luaScript, type LuaScript } from "../../state/lua.js";
import type {
  CreditAccount,
  CreditLedger,
  CreditLedgerOptions,
  CreditRefund,
  RefundEnd,
  RefundReason,
  RefundStatus,
  RefundTx,
  ReserveOutcome,
  ReserveRefusal,
  SpendCaps,
} from "./ledger.js";
import { ACCOUNT, FINISH_REFUND, LIB, RECORD_REFUND_TX, START_REFUND, SWEEP, WINDOW_TTL_MS } from "./redis-lua.js";
import { DAY_MS, HOUR_MS, capsFromJson, capsToJson, checkId, checkInt, checkRefundEnd, checkRefundTx, checkReserve, emptyAccount, holdTtlOf, nowOr, normWallet } from "./shared.js";

/** Holds released per sweep script call (the call is repeated until none are left). */
const SWEEP_BATCH = 500;

/** Extra lifetime of a nonce key past its expiry, ms, so that replica clock skew never frees a nonce early. */
const NONCE_SLACK_MS = 60_000;

/** ARGV: base, wallet, amount, reference, now. Returns {1 when credited else 0, account hash as a flat list}. */
const CREDIT = `${LIB}
local b, w, a = ARGV[1], ARGV[2], ARGV[3]
local wk = b .. 'w:' .. w
local credited = 0
if redis.call('SET', b .. 'r:' .. ARGV[4], w .. ':' .. a .. ':' .. ARGV[5], 'NX') then
  redis.call('HINCRBY', wk, 'balance', a)
  redis.call('HINCRBY', wk, 'credited', a)
  redis.call('HINCRBY', b .. 'totals', 'credited', a)
  redis.call('HINCRBY', b .. 'totals', 'outstanding', a)
  credited = 1
end
return {credited, redis.call('HGETALL', wk)}
`;

/**
 * ARGV: base, wallet, amount, hold id, now, hour window start (exclusive), day window start (exclusive),
 * then the global per-call, per-hour and per-day caps ('' = none), then the hold's expiry. The wallet's
 * expired holds go back to its balance first. The caps that apply are, per field, the lower of the
 * wallet's own (hash field 'caps', JSON) and the global one; checked in the order of shared.ts
 * \`refusal\` (call, hour, day, balance). Returns {1, balance after} or {0, reason, balance, limit (-1 = none)}.
 */
const RESERVE = `${LIB}
local b, w, a, id, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local amt, hourSince, daySince, exp = tonumber(a), tonumber(ARGV[6]), ARGV[7], ARGV[11]
local wk, dk, hw = b .. 'w:' .. w, b .. 'd:' .. w, b .. 'hw:' .. w
expire(b, w, now)
local bal = tonumber(redis.call('HGET', wk, 'balance') or '0')
local own = {}
local cj = redis.call('HGET', wk, 'caps')
if cj then own = cjson.decode(cj) end
local function cap(name, g)
  local o, gl = tonumber(own[name]), tonumber(g)
  if o == nil then return gl end
  if gl == nil or o < gl then return o end
  return gl
end
local perCall, perHour, perDay = cap('perCallMaxMicro', ARGV[8]), cap('perHourMaxMicro', ARGV[9]), cap('perDayMaxMicro', ARGV[10])
if perCall and amt > perCall then return {0, 'cap_per_call', bal, perCall} end
redis.call('ZREMRANGEBYSCORE', dk, '-inf', daySince)
if perHour or perDay then
  local hourSum, daySum = 0, 0
  local items = redis.call('ZRANGEBYSCORE', dk, '(' .. daySince, '+inf', 'WITHSCORES')
  for i = 1, #items, 2 do
    local v = tonumber(string.match(items[i], ':(%d+)$'))
    daySum = daySum + v
    if tonumber(items[i + 1]) > hourSince then hourSum = hourSum + v end
  end
  if perHour and hourSum + amt > perHour then return {0, 'cap_per_hour', bal, perHour} end
  if perDay and daySum + amt > perDay then return {0, 'cap_per_day', bal, perDay} end
end
if amt > bal then return {0, 'insufficient_balance', bal, -1} end
redis.call('HINCRBY', wk, 'balance', neg(a))
redis.call('HINCRBY', wk, 'held', a)
redis.call('HSET', b .. 'h:' .. id, 'wallet', w, 'amount', a, 'at', now, 'exp', exp)
redis.call('ZADD', b .. 'holds', exp, id)
redis.call('ZADD', hw, exp, id)
redis.call('PEXPIRE', hw, ${WINDOW_TTL_MS})
redis.call('ZADD', dk, now, id .. ':' .. a)
redis.call('PEXPIRE', dk, ${WINDOW_TTL_MS})
return {1, bal - amt}
`;

/**
 * ARGV: base, hold id, tool. The hold's record stays a day as the debit (field 'tool'); its window entry
 * stays in the wallet's zset. Returns 1 when committed, 0 for an unknown or already committed id.
 */
const COMMIT = `${LIB}
local b, id = ARGV[1], ARGV[2]
local hk = b .. 'h:' .. id
local h = redis.call('HMGET', hk, 'wallet', 'amount', 'tool', 'exp')
if not h[1] or h[3] then return 0 end
redis.call('HSET', hk, 'tool', ARGV[3])
redis.call('PEXPIRE', hk, ${WINDOW_TTL_MS})
redis.call('ZREM', b .. 'holds', id)
redis.call('ZREM', b .. 'hw:' .. h[1], id)
if h[4] then redis.call('HINCRBY', b .. 'w:' .. h[1], 'held', neg(h[2])) end
redis.call('HINCRBY', b .. 'w:' .. h[1], 'spent', h[2])
redis.call('HINCRBY', b .. 'totals', 'spent', h[2])
redis.call('HINCRBY', b .. 'totals', 'outstanding', neg(h[2]))
return 1
`;

/** ARGV: base, hold id. Returns 1 when released, 0 for an unknown or committed id. */
const RELEASE = `${LIB}
local b, id = ARGV[1], ARGV[2]
local hk = b .. 'h:' .. id
local h = redis.call('HMGET', hk, 'wallet', 'amount', 'tool')
if not h[1] or h[3] then return 0 end
release(b, id, hk, h[1], h[2])
return 1
`;

/** ARGV: base, wallet, caps JSON. Returns the account hash as a flat list. */
const SET_CAPS = `
local wk = ARGV[1] .. 'w:' .. ARGV[2]
redis.call('HSET', wk, 'caps', ARGV[3])
return redis.call('HGETALL', wk)
`;

/**
 * ARGV: base, nonce, now, expires at, key lifetime (ms). The value is the expiry by the caller's clock (so
 * that `nowMs` decides, as in SQLite); the key's own PX only cleans up. Returns 1 when claimed, 0 for a replay.
 */
const CLAIM_NONCE = `
local k = ARGV[1] .. 'n:' .. ARGV[2]
local v = redis.call('GET', k)
if v and tonumber(v) > tonumber(ARGV[3]) then return 0 end
redis.call('SET', k, ARGV[4], 'PX', ARGV[5])
return 1
`;

const SCRIPTS = {
  credit: luaScript(CREDIT),
  reserve: luaScript(RESERVE),
  commit: luaScript(COMMIT),
  release: luaScript(RELEASE),
  sweep: luaScript(SWEEP),
  setCaps: luaScript(SET_CAPS),
  account: luaScript(ACCOUNT),
  startRefund: luaScript(START_REFUND),
  recordRefundTx: luaScript(RECORD_REFUND_TX),
  finishRefund: luaScript(FINISH_REFUND),
  claimNonce: luaScript(CLAIM_NONCE),
};

/** A hash (HGETALL, as a flat field/value list from a script or as an object) as an object. */
function hashOf(hash: readonly string[] | Record<string, string>): Record<string, string> {
  if (!Array.isArray(hash)) return hash as Record<string, string>;
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < hash.length; i += 2) h[hash[i]!] = hash[i + 1]!;
  return h;
}

/** An account hash to a {@link CreditAccount}. */
function toAccount(wallet: string, hash: readonly string[] | Record<string, string>): CreditAccount {
  const h = hashOf(hash);
  if (Object.keys(h).length === 0) return emptyAccount(wallet);
  return {
    wallet,
    balanceMicro: Number(h.balance ?? 0),
    heldMicro: Number(h.held ?? 0),
    refundPendingMicro: Number(h.refund_pending ?? 0),
    creditedMicro: Number(h.credited ?? 0),
    spentMicro: Number(h.spent ?? 0),
    caps: capsFromJson(h.caps),
  };
}

/** A refund hash (`rf:<id>`) to a {@link CreditRefund}; undefined for an empty hash (expired or unknown). */
function toRefund(hash: readonly string[] | Record<string, string>): CreditRefund | undefined {
  const h = hashOf(hash);
  if (!h.id) return undefined;
  return {
    id: h.id,
    wallet: h.wallet!,
    amountMicro: Number(h.amount),
    status: h.status as RefundStatus,
    ...(h.tx ? { tx: { nonce: Number(h.nonce), txHash: h.tx, rawTx: h.raw ?? "" } } : {}),
    ...(h.reason ? { reason: h.reason as RefundReason } : {}),
    createdAtMs: Number(h.at),
    updatedAtMs: Number(h.upd),
  };
}

/** A cap as a script argument ('' = none). */
const capArg = (v: number | undefined): string => (v === undefined ? "" : String(v));

/**
 * The {@link CreditLedger} of a multi-replica deployment (`REDIS_URL`). Every mutating step is one Lua
 * script, so it is atomic across replicas (of 20 concurrent reservations against a balance that covers 10,
 * exactly 10 succeed, whichever replicas they hit). Keys, under `<REDIS_PREFIX>credits:`:
 *
 * - `w:<wallet>` hash: `balance`, `held` (open holds), `credited`, `spent`, `refunded` (pending and
 *   confirmed refunds), `refund_pending` (micro-USD integers), `caps` (JSON);
 * - `r:<reference>` string: a credited reference (`SET NX` in the credit script; kept, so a reference
 *   credits once for good);
 * - `h:<hold id>` hash: `wallet`, `amount`, `at`, `exp` (ms) of an open hold; on commit it gains `tool`
 *   and becomes the debit record, which expires after a day;
 * - `holds` sorted set: open hold ids by expiry (what `sweep` reads); `hw:<wallet>`: the wallet's open
 *   hold ids by expiry (what its next read, reservation or refund releases);
 * - `d:<wallet>` sorted set: `<hold id>:<amount>` of the wallet's debits and open holds by `at`, for the
 *   hour/day cap windows; trimmed to the last 24 h by each reservation and expiring a day after its last one;
 * - `rf:<refund id>` hash: `id`, `wallet`, `amount`, `status`, `nonce`, `tx`, `raw` (while open),
 *   `reason`, `at`, `upd`; kept 30 days after it ended; `rfw:<wallet>`: the wallet's open refund id;
 *   `rfl:<wallet>`: its latest refund id; `rfopen` sorted set: open refund ids by start;
 * - `totals` hash: `credited`, `spent`, `outstanding` (balances + open holds + pending refunds) of the whole service;
 * - `n:<nonce>` string: a claimed SIWX nonce (value: expiry ms by the claiming replica's clock).
 *
 * A debit counts in the windows at the time of its reservation. Scripts name their keys from the prefix
 * (single Redis or a primary with replicas; not Redis Cluster). While Redis is unreachable (or cannot serve:
 * READONLY, LOADING…) every method rejects at once with AppError UPSTREAM_UNAVAILABLE ("nothing was
 * charged", `Retry-After: 5`); invalid arguments reject with RangeError before Redis is asked.
 */
export class RedisCreditLedger implements CreditLedger {
  private readonly client: Redis;
  private readonly base: string;
  private readonly holdTtlMs: number;

  /** Uses `redis` (not owned: `close` leaves it open). @throws RangeError for a bad `holdTtlMs`. */
  constructor(redis: RedisHandle, opts: CreditLedgerOptions = {}) {
    this.client = redis.client;
    this.base = redis.key("credits:");
    this.holdTtlMs = holdTtlOf(opts);
  }

  /** Runs `op`, mapping connection failures and transient replies to AppError UPSTREAM_UNAVAILABLE; other error replies are bugs and rethrown. */
  private async run<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (!isTransientRedisError(err)) throw err;
      throw new AppError("UPSTREAM_UNAVAILABLE", "the credits ledger (Redis) is unreachable; nothing was charged", { retryAfterSec: 5, cause: err });
    }
  }

  /** Runs `s` with `[base, ...args]` (see {@link evalScript}). */
  private eval(s: LuaScript, args: readonly string[]): Promise<unknown> {
    return this.run(() => evalScript(this.client, s, [this.base, ...args]));
  }

  async credit(wallet: string, amountMicro: number, reference: string): Promise<{ credited: boolean; account: CreditAccount }> {
    const w = normWallet(wallet);
    const args = [w, String(checkInt(amountMicro, "amountMicro", 1)), checkId(reference, "reference"), String(Date.now())];
    const [credited, hash] = (await this.eval(SCRIPTS.credit, args)) as [number, string[]];
    return { credited: credited === 1, account: toAccount(w, hash) };
  }

  async account(wallet: string, nowMs?: number): Promise<CreditAccount> {
    const w = normWallet(wallet);
    return toAccount(w, (await this.eval(SCRIPTS.account, [w, String(nowOr(nowMs))])) as string[]);
  }

  async reserve(wallet: string, amountMicro: number, opts: { globalCaps: SpendCaps; nowMs?: number }): Promise<ReserveOutcome> {
    const a = checkReserve(wallet, amountMicro, opts);
    const holdId = randomUUID();
    const g = a.global;
    const args = [
      a.wallet,
      String(a.amount),
      holdId,
      String(a.now),
      String(a.now - HOUR_MS),
      String(a.now - DAY_MS),
      capArg(g.perCallMaxMicro),
      capArg(g.perHourMaxMicro),
      capArg(g.perDayMaxMicro),
      String(a.now + this.holdTtlMs),
    ];
    const r = (await this.eval(SCRIPTS.reserve, args)) as [number, ...unknown[]];
    if (r[0] === 1) return { ok: true, holdId, balanceMicro: Number(r[1]) };
    const [, reason, balance, limit] = r as [0, ReserveRefusal, number, number];
    return limit >= 0 ? { ok: false, reason, balanceMicro: Number(balance), limitMicro: Number(limit) } : { ok: false, reason, balanceMicro: Number(balance) };
  }

  async commit(holdId: string, meta: { tool: string }): Promise<boolean> {
    return (await this.eval(SCRIPTS.commit, [checkId(holdId, "holdId"), String(meta.tool)])) === 1;
  }

  async release(holdId: string): Promise<void> {
    await this.eval(SCRIPTS.release, [checkId(holdId, "holdId")]);
  }

  /** See {@link CreditLedger.sweep}; runs the sweep script in batches of 500 holds (each batch atomic). */
  async sweep(nowMs?: number): Promise<number> {
    const now = String(nowOr(nowMs));
    let released = 0;
    for (;;) {
      const [n, examined] = (await this.eval(SCRIPTS.sweep, [now, String(SWEEP_BATCH)])) as [number, number];
      released += n;
      if (examined < SWEEP_BATCH) return released;
    }
  }

  async setCaps(wallet: string, caps: SpendCaps): Promise<CreditAccount> {
    const w = normWallet(wallet);
    return toAccount(w, (await this.eval(SCRIPTS.setCaps, [w, capsToJson(caps)])) as string[]);
  }

  async startRefund(wallet: string, id: string, nowMs?: number): Promise<{ refund: CreditRefund; created: boolean } | undefined> {
    const r = (await this.eval(SCRIPTS.startRefund, [normWallet(wallet), checkId(id, "id"), String(nowOr(nowMs))])) as [number, string[]?];
    if (r[0] === -1) return undefined;
    return { refund: toRefund(r[1]!)!, created: r[0] === 1 };
  }

  async recordRefundTx(id: string, expectTxHash: string | null, tx: RefundTx, nowMs?: number): Promise<boolean> {
    const t = checkRefundTx(tx);
    const expect = expectTxHash === null ? "" : checkId(expectTxHash, "expectTxHash");
    const args = [checkId(id, "id"), expect, String(t.nonce), t.txHash, t.rawTx, String(nowOr(nowMs))];
    return (await this.eval(SCRIPTS.recordRefundTx, args)) === 1;
  }

  async finishRefund(id: string, outcome: RefundEnd, reason: RefundReason | null, nowMs?: number): Promise<boolean> {
    checkRefundEnd(outcome, reason);
    return (await this.eval(SCRIPTS.finishRefund, [checkId(id, "id"), outcome, reason ?? "", String(nowOr(nowMs))])) === 1;
  }

  async openRefunds(opts: { wallet?: string; limit?: number }): Promise<CreditRefund[]> {
    let ids: string[];
    if (opts.wallet !== undefined) {
      const id = await this.run(() => this.client.get(`${this.base}rfw:${normWallet(opts.wallet!)}`));
      ids = id ? [id] : [];
    } else {
      const limit = checkInt(opts.limit ?? 100, "limit", 1);
      ids = await this.run(() => this.client.zRange(`${this.base}rfopen`, 0, limit - 1));
    }
    const refunds = await Promise.all(ids.map((id) => this.refund(id)));
    return refunds.filter((r): r is CreditRefund => r !== undefined && (r.status === "preparing" || r.status === "pending"));
  }

  async latestRefund(wallet: string): Promise<CreditRefund | undefined> {
    const id = await this.run(() => this.client.get(`${this.base}rfl:${normWallet(wallet)}`));
    return id ? this.refund(id) : undefined;
  }

  /** The refund record `id`, or undefined when there is none (unknown, or expired 30 days after it ended). */
  private async refund(id: string): Promise<CreditRefund | undefined> {
    return toRefund(await this.run(() => this.client.hGetAll(`${this.base}rf:${id}`)));
  }

  async claimNonce(nonce: string, ttlMs: number, nowMs?: number): Promise<boolean> {
    const now = nowOr(nowMs);
    const ttl = checkInt(ttlMs, "ttlMs", 1);
    return (await this.eval(SCRIPTS.claimNonce, [checkId(nonce, "nonce"), String(now), String(now + ttl), String(ttl + NONCE_SLACK_MS)])) === 1;
  }

  async totals(): Promise<{ creditedMicro: number; spentMicro: number; outstandingMicro: number }> {
    const [credited, spent, outstanding] = await this.run(() => this.client.hmGet(`${this.base}totals`, ["credited", "spent", "outstanding"]));
    return { creditedMicro: Number(credited ?? 0), spentMicro: Number(spent ?? 0), outstandingMicro: Number(outstanding ?? 0) };
  }

  /** Nothing to close: the RedisHandle belongs to the caller. */
  async close(): Promise<void> {}
}
