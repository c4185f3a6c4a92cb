import { randomUUID } from "node:crypto";
import { AppError } from "../../errors.js";
import type { Redis, RedisHandle } from "../../state/redis.js";
import { evalScript, isTransientRedisError, luaScript, type LuaScript } from "../../state/lua.js";
import type { CreditAccount, CreditLedger, ReserveOutcome, ReserveRefusal, SpendCaps } from "./ledger.js";
import { DAY_MS, HOUR_MS, capsFromJson, capsToJson, checkId, checkInt, checkReserve, emptyAccount, nowOr, normWallet } from "./shared.js";

/** Holds released per sweep script call (the call is repeated until none are left). */
const SWEEP_BATCH = 500;

/** Lifetime of a wallet's debit window zset and of a committed hold's record after their last write, ms (a day + slack). */
const WINDOW_TTL_MS = DAY_MS + 3_600_000;

/** Extra lifetime of a nonce key past its expiry, ms, so that replica clock skew never frees a nonce early. */
const NONCE_SLACK_MS = 60_000;


/**
 * Lua shared by the scripts. Amounts travel as decimal strings (ARGV, hash fields) and are passed back to
 * Redis as strings: a Lua number handed to redis.call may be formatted with an exponent. `neg` negates one.
 * `release` returns open hold `id` (hash `hk`, wallet `w`, amount `a`) to the balance and forgets it.
 */
const LIB = `
local function neg(s) if s == '0' then return '0' end return '-' .. s end
local function release(b, id, hk, w, a)
  redis.call('HINCRBY', b .. 'w:' .. w, 'balance', a)
  redis.call('ZREM', b .. 'holds', id)
  redis.call('ZREM', b .. 'd:' .. w, id .. ':' .. a)
  redis.call('DEL', hk)
end
`;

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
 * then the global per-call, per-hour and per-day caps ('' = none). The caps that apply are, per field, the
 * lower of the wallet's own (hash field 'caps', JSON) and the global one; checked in the order of
 * shared.ts \`refusal\` (call, hour, day, balance). Returns {1, balance after} or {0, reason, balance,
 * limit (-1 = none)}.
 */
const RESERVE = `${LIB}
local b, w, a, id, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local amt, hourSince, daySince = tonumber(a), tonumber(ARGV[6]), ARGV[7]
local wk, dk = b .. 'w:' .. w, b .. 'd:' .. w
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
redis.call('HSET', b .. 'h:' .. id, 'wallet', w, 'amount', a, 'at', now)
redis.call('ZADD', b .. 'holds', now, id)
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
local h = redis.call('HMGET', hk, 'wallet', 'amount', 'tool')
if not h[1] or h[3] then return 0 end
redis.call('HSET', hk, 'tool', ARGV[3])
redis.call('PEXPIRE', hk, ${WINDOW_TTL_MS})
redis.call('ZREM', b .. 'holds', id)
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

/** ARGV: base, cutoff (holds reserved before it are released), batch. Returns {released, examined}. */
const SWEEP = `${LIB}
local b = ARGV[1]
local ids = redis.call('ZRANGEBYSCORE', b .. 'holds', '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local n = 0
for _, id in ipairs(ids) do
  local hk = b .. 'h:' .. id
  local h = redis.call('HMGET', hk, 'wallet', 'amount', 'tool')
  if h[1] and not h[3] then
    release(b, id, hk, h[1], h[2])
    n = n + 1
  else
    redis.call('ZREM', b .. 'holds', id)
  end
end
return {n, #ids}
`;

/** ARGV: base, wallet, caps JSON. Returns the account hash as a flat list. */
const SET_CAPS = `
local wk = ARGV[1] .. 'w:' .. ARGV[2]
redis.call('HSET', wk, 'caps', ARGV[3])
return redis.call('HGETALL', wk)
`;

/** ARGV: base, wallet. Returns the balance taken (0 when empty). */
const TAKE = `${LIB}
local b = ARGV[1]
local wk = b .. 'w:' .. ARGV[2]
local bal = redis.call('HGET', wk, 'balance')
if not bal or tonumber(bal) <= 0 then return 0 end
redis.call('HSET', wk, 'balance', '0')
redis.call('HINCRBY', wk, 'refunded', bal)
redis.call('HINCRBY', b .. 'totals', 'outstanding', neg(bal))
return tonumber(bal)
`;

/** ARGV: base, wallet, amount (> 0). */
const RESTORE = `${LIB}
local b, a = ARGV[1], ARGV[3]
local wk = b .. 'w:' .. ARGV[2]
redis.call('HINCRBY', wk, 'balance', a)
redis.call('HINCRBY', wk, 'refunded', neg(a))
redis.call('HINCRBY', b .. 'totals', 'outstanding', a)
return 1
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
  take: luaScript(TAKE),
  restore: luaScript(RESTORE),
  claimNonce: luaScript(CLAIM_NONCE),
};

/** An account hash (HGETALL, as a flat field/value list from a script or as an object) to a {@link CreditAccount}. */
function toAccount(wallet: string, hash: readonly string[] | Record<string, string>): CreditAccount {
  let h: Record<string, string>;
  if (Array.isArray(hash)) {
    h = {};
    for (let i = 0; i + 1 < hash.length; i += 2) h[hash[i]!] = hash[i + 1]!;
  } else h = hash as Record<string, string>;
  if (Object.keys(h).length === 0) return emptyAccount(wallet);
  return { wallet, balanceMicro: Number(h.balance ?? 0), creditedMicro: Number(h.credited ?? 0), spentMicro: Number(h.spent ?? 0), caps: capsFromJson(h.caps) };
}

/** A cap as a script argument ('' = none). */
const capArg = (v: number | undefined): string => (v === undefined ? "" : String(v));

/**
 * The {@link CreditLedger} of a multi-replica deployment (`REDIS_URL`). Every mutating step is one Lua
 * script, so it is atomic across replicas (of 20 concurrent reservations against a balance that covers 10,
 * exactly 10 succeed, whichever replicas they hit). Keys, under `<REDIS_PREFIX>credits:`:
 *
 * - `w:<wallet>` hash: `balance`, `credited`, `spent`, `refunded` (micro-USD integers), `caps` (JSON);
 * - `r:<reference>` string: a credited reference (`SET NX` in the credit script; kept, so a reference
 *   credits once for good);
 * - `h:<hold id>` hash: `wallet`, `amount`, `at` (ms) of an open hold; on commit it gains `tool` and
 *   becomes the debit record, which expires after a day;
 * - `holds` sorted set: open hold ids by `at` (what `sweep` reads);
 * - `d:<wallet>` sorted set: `<hold id>:<amount>` of the wallet's debits and open holds by `at`, for the
 *   hour/day cap windows; trimmed to the last 24 h by each reservation and expiring a day after its last one;
 * - `totals` hash: `credited`, `spent`, `outstanding` (balances + open holds) of the whole service;
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

  /** Uses `redis` (not owned: `close` leaves it open). */
  constructor(redis: RedisHandle) {
    this.client = redis.client;
    this.base = redis.key("credits:");
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

  async account(wallet: string): Promise<CreditAccount> {
    const w = normWallet(wallet);
    return toAccount(w, await this.run(() => this.client.hGetAll(`${this.base}w:${w}`)));
  }

  async reserve(wallet: string, amountMicro: number, opts: { globalCaps: SpendCaps; nowMs?: number }): Promise<ReserveOutcome> {
    const a = checkReserve(wallet, amountMicro, opts);
    const holdId = randomUUID();
    const g = a.global;
    const args = [a.wallet, String(a.amount), holdId, String(a.now), String(a.now - HOUR_MS), String(a.now - DAY_MS), capArg(g.perCallMaxMicro), capArg(g.perHourMaxMicro), capArg(g.perDayMaxMicro)];
    const r = (await this.eval(SCRIPTS.reserve, args)) as [number, ...unknown[]];
    if (r[0] === 1) return { ok: true, holdId, balanceMicro: Number(r[1]) };
    const [, reason, balance, limit] = r as [0, ReserveRefusal, number, number];
    return limit >= 0 ? { ok: false, reason, balanceMicro: Number(balance), limitMicro: Number(limit) } : { ok: false, reason, balanceMicro: Number(balance) };
  }

  async commit(holdId: string, meta: { tool: string }): Promise<void> {
    await this.eval(SCRIPTS.commit, [checkId(holdId, "holdId"), String(meta.tool)]);
  }

  async release(holdId: string): Promise<void> {
    await this.eval(SCRIPTS.release, [checkId(holdId, "holdId")]);
  }

  /** See {@link CreditLedger.sweep}; runs the sweep script in batches of 500 holds (each batch atomic). */
  async sweep(olderThanMs: number, nowMs?: number): Promise<number> {
    const cutoff = String(nowOr(nowMs) - checkInt(olderThanMs, "olderThanMs"));
    let released = 0;
    for (;;) {
      const [n, examined] = (await this.eval(SCRIPTS.sweep, [cutoff, String(SWEEP_BATCH)])) as [number, number];
      released += n;
      if (examined < SWEEP_BATCH) return released;
    }
  }

  async setCaps(wallet: string, caps: SpendCaps): Promise<CreditAccount> {
    const w = normWallet(wallet);
    return toAccount(w, (await this.eval(SCRIPTS.setCaps, [w, capsToJson(caps)])) as string[]);
  }

  async takeForRefund(wallet: string): Promise<number> {
    return Number(await this.eval(SCRIPTS.take, [normWallet(wallet)]));
  }

  async restoreRefund(wallet: string, amountMicro: number): Promise<void> {
    const w = normWallet(wallet);
    if (checkInt(amountMicro, "amountMicro") === 0) return;
    await this.eval(SCRIPTS.restore, [w, String(amountMicro)]);
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
