/**
 * Lua of the Redis credits ledger (src/payments/credits/redis-ledger.ts describes the keys): the library
 * its scripts share, and the refund scripts. Amounts travel as decimal strings (ARGV, hash fields) and are
 * passed back to Redis as strings: a Lua number handed to redis.call may be formatted with an exponent.
 */
import { DAY_MS, REFUND_RECORD_TTL_MS } from "./shared.js";

/** Lifetime of a wallet's debit window zset, of its open-holds zset and of a committed hold's record after their last write, ms (a day + slack). */
export const WINDOW_TTL_MS = DAY_MS + 3_600_000;

/** How long after its start a hold of an older build (no expiry of its own) is returned, ms (that build's sweeper age). */
const LEGACY_HOLD_AGE_MS = 10 * 60_000;

/**
 * Shared functions. `neg` negates an amount string. `release` returns open hold `id` (hash `hk`, wallet `w`,
 * amount `a`) to the balance and forgets it (its `held` share only when the hold has an expiry: holds of an
 * older build never counted there). `expire` releases wallet `w`'s holds expired at `now` (at most 1,000
 * per call; a wallet has as many as its calls in flight).
 */
export const LIB = `
local function neg(s) if s == '0' then return '0' end return '-' .. s end
local function release(b, id, hk, w, a)
  local wk = b .. 'w:' .. w
  redis.call('HINCRBY', wk, 'balance', a)
  if redis.call('HEXISTS', hk, 'exp') == 1 then redis.call('HINCRBY', wk, 'held', neg(a)) end
  redis.call('ZREM', b .. 'holds', id)
  redis.call('ZREM', b .. 'hw:' .. w, id)
  redis.call('ZREM', b .. 'd:' .. w, id .. ':' .. a)
  redis.call('DEL', hk)
end
local function expire(b, w, now)
  local ids = redis.call('ZRANGEBYSCORE', b .. 'hw:' .. w, '-inf', now, 'LIMIT', 0, 1000)
  for _, id in ipairs(ids) do
    local hk = b .. 'h:' .. id
    local h = redis.call('HMGET', hk, 'amount', 'tool')
    if h[1] and not h[2] then release(b, id, hk, w, h[1]) else redis.call('ZREM', b .. 'hw:' .. w, id) end
  end
end
`;

/**
 * ARGV: base, now, batch. Releases up to `batch` holds expired at `now` (the `holds` zset is scored by
 * expiry; a hold of an older build is scored by its start and gets {@link LEGACY_HOLD_AGE_MS} first).
 * Returns {released, examined}.
 */
export const SWEEP = `${LIB}
local b, now = ARGV[1], ARGV[2]
local ids = redis.call('ZRANGEBYSCORE', b .. 'holds', '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local n = 0
for _, id in ipairs(ids) do
  local hk = b .. 'h:' .. id
  local h = redis.call('HMGET', hk, 'wallet', 'amount', 'tool', 'exp', 'at')
  if not h[1] or h[3] then
    redis.call('ZREM', b .. 'holds', id)
  elseif not h[4] and tonumber(h[5]) + ${LEGACY_HOLD_AGE_MS} > tonumber(now) then
    redis.call('ZADD', b .. 'holds', string.format('%d', tonumber(h[5]) + ${LEGACY_HOLD_AGE_MS}), id)
  else
    release(b, id, hk, h[1], h[2])
    n = n + 1
  end
end
return {n, #ids}
`;

/** ARGV: base, wallet, now. Releases the wallet's expired holds; returns its account hash as a flat list. */
export const ACCOUNT = `${LIB}
expire(ARGV[1], ARGV[2], ARGV[3])
return redis.call('HGETALL', ARGV[1] .. 'w:' .. ARGV[2])
`;

/**
 * ARGV: base, wallet, refund id, now. Releases the wallet's expired holds; then returns {0, open refund
 * hash} when one is open, {-1} when the balance is 0, else moves the balance into a new `preparing` refund
 * and returns {1, its hash}. The amount leaves `balance` for `refunded` and `refund_pending`; `totals`
 * keep it outstanding until the refund is confirmed.
 */
export const START_REFUND = `${LIB}
local b, w, id, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
expire(b, w, now)
local ok = b .. 'rfw:' .. w
local open = redis.call('GET', ok)
if open then
  local h = redis.call('HGETALL', b .. 'rf:' .. open)
  if #h > 0 then return {0, h} end
  redis.call('DEL', ok)
end
local wk = b .. 'w:' .. w
local bal = redis.call('HGET', wk, 'balance')
if not bal or tonumber(bal) <= 0 then return {-1} end
redis.call('HSET', wk, 'balance', '0')
redis.call('HINCRBY', wk, 'refunded', bal)
redis.call('HINCRBY', wk, 'refund_pending', bal)
local rk = b .. 'rf:' .. id
redis.call('HSET', rk, 'id', id, 'wallet', w, 'amount', bal, 'status', 'preparing', 'at', now, 'upd', now)
redis.call('SET', ok, id)
redis.call('SET', b .. 'rfl:' .. w, id)
redis.call('ZADD', b .. 'rfopen', now, id)
return {1, redis.call('HGETALL', rk)}
`;

/**
 * ARGV: base, refund id, expected tx hash ('' = none: the refund must be `preparing`), nonce, tx hash, raw
 * tx, now. Compare-and-set: records the transfer and makes the refund `pending`. Returns 1, or 0 when the
 * refund is not in the expected state.
 */
export const RECORD_REFUND_TX = `
local rk = ARGV[1] .. 'rf:' .. ARGV[2]
local h = redis.call('HMGET', rk, 'status', 'tx')
if (h[1] == 'preparing' and ARGV[3] == '') or (h[1] == 'pending' and h[2] == ARGV[3]) then
  redis.call('HSET', rk, 'status', 'pending', 'nonce', ARGV[4], 'tx', ARGV[5], 'raw', ARGV[6], 'upd', ARGV[7])
  return 1
end
return 0
`;

/**
 * ARGV: base, refund id, outcome ('confirmed' | 'restored'), reason ('' = none), now. Ends an open refund
 * once: restored puts the amount back in the balance; confirmed takes it out of `totals.outstanding`.
 * The record (without its signed transaction) and the wallet's latest-refund pointer are kept
 * {@link REFUND_RECORD_TTL_MS}. Returns 1, or 0 when the refund was not open.
 */
export const FINISH_REFUND = `${LIB}
local b, id, outcome = ARGV[1], ARGV[2], ARGV[3]
local rk = b .. 'rf:' .. id
local h = redis.call('HMGET', rk, 'wallet', 'amount', 'status')
if h[3] ~= 'preparing' and h[3] ~= 'pending' then return 0 end
local w, a = h[1], h[2]
local wk = b .. 'w:' .. w
redis.call('HINCRBY', wk, 'refund_pending', neg(a))
if outcome == 'restored' then
  redis.call('HINCRBY', wk, 'balance', a)
  redis.call('HINCRBY', wk, 'refunded', neg(a))
else
  redis.call('HINCRBY', b .. 'totals', 'outstanding', neg(a))
end
redis.call('HSET', rk, 'status', outcome, 'upd', ARGV[5])
if ARGV[4] ~= '' then redis.call('HSET', rk, 'reason', ARGV[4]) end
redis.call('HDEL', rk, 'raw')
if redis.call('GET', b .. 'rfw:' .. w) == id then redis.call('DEL', b .. 'rfw:' .. w) end
redis.call('ZREM', b .. 'rfopen', id)
redis.call('PEXPIRE', rk, ${REFUND_RECORD_TTL_MS})
redis.call('PEXPIRE', b .. 'rfl:' .. w, ${REFUND_RECORD_TTL_MS})
return 1
`;
