import { AppError } from "../errors.js";
import type { Redis, RedisHandle } from "../state/redis.js";
import { evalScript, isTransientRedisError, luaScript, type LuaScript } from "../state/lua.js";
import { lastEvaluation, readingPartJson, storedEvaluation, type StoredReading, type SymbolReading } from "./last-evaluation.js";
import type { AlertRepository, Evaluation, EvaluationTarget, NewAlert } from "./repository.js";
import type { AlertKind, AlertRecord, AlertStatus, AttemptRecord, DeliveryRecord, DeliveryStatus } from "./types.js";

/** Start of every message of a Redis alert-storage failure (what callers see with the 503). */
export const ALERT_STORAGE_UNREACHABLE = "alert storage (Redis) is unreachable";

/** Seconds a caller is asked to wait after an alert-storage failure (`Retry-After`). */
export const ALERT_STORAGE_RETRY_SEC = 5;

/** Deliveries kept per alert (newest first); older ones are dropped once settled. */
export const DELIVERIES_KEPT = 50;

/** Lifetime of an id sequence counter (`<prefix>_<second>`), ms: long past its second (ids are also checked for collisions). */
const SEQ_TTL_MS = 3_600_000;

/** Hashes read per MULTI. */
const CHUNK = 1000;

/** Alerts expired per script call (the call is repeated until none are left). */
const EXPIRE_BATCH = 1000;

/** Evaluations written per script call (each alert's evaluation, trigger and delivery stay in one call). */
const EVALUATION_BATCH = 500;

/**
 * Lua shared by the scripts: takes alert `id` (hash `ak`) out of the active indexes and ends it with
 * `status` at `endedAt`, keeping the last evaluation it had (its symbol's reading when newer than its
 * own; see last-evaluation.ts). The alert must be active.
 */
const DEACTIVATE = `
local function deactivate(base, id, ak, status, endedAt)
  local kind = redis.call('HGET', ak, 'kind')
  local owner = redis.call('HGET', ak, 'owner')
  local at = redis.call('HGET', ak, 'last_evaluated_at')
  if at then
    local rk = base .. 'reading:' .. redis.call('HGET', ak, 'symbol')
    local rat, part = unpack(redis.call('HMGET', rk, 'at', kind))
    if rat and part and tonumber(rat) > tonumber(at) then redis.call('HSET', ak, 'last_evaluated_at', rat, 'last_evaluation', part) end
  end
  redis.call('HSET', ak, 'status', status, 'ended_at', endedAt)
  redis.call('ZREM', base .. 'active:' .. kind, id)
  if owner then redis.call('ZREM', base .. 'owner:' .. kind .. ':' .. owner, id) end
  redis.call('ZREM', base .. 'expiry', id)
end
`;

/** ARGV: base, idPrefix, second, kind, owner ('' = none), createdAt, expiresAt, then field/value pairs. Returns the id. */
const INSERT = `
local base, idp, sec, kind, owner, created, expires = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local seqKey = base .. 'seq:' .. idp .. '_' .. sec
local id
repeat
  local n = redis.call('INCR', seqKey)
  if n == 1 then redis.call('PEXPIRE', seqKey, ${SEQ_TTL_MS}) end
  id = idp .. '_' .. sec .. '_' .. n
until redis.call('EXISTS', base .. 'a:' .. id) == 0
local ak = base .. 'a:' .. id
redis.call('HSET', ak, 'id', id, 'status', 'active', 'trigger_count', '0', 'created_at', created, 'expires_at', expires, unpack(ARGV, 8))
redis.call('ZADD', base .. 'active:' .. kind, created, id)
if owner ~= '' then
  redis.call('HSET', ak, 'owner', owner)
  redis.call('ZADD', base .. 'owner:' .. kind .. ':' .. owner, created, id)
end
redis.call('ZADD', base .. 'expiry', expires, id)
return id
`;

/** ARGV: base, id, now. Returns 1 when cancelled, 0 when the alert was not active. */
const CANCEL = `${DEACTIVATE}
local base, id, now = ARGV[1], ARGV[2], ARGV[3]
local ak = base .. 'a:' .. id
if redis.call('HGET', ak, 'status') ~= 'active' then return 0 end
deactivate(base, id, ak, 'cancelled', now)
local pk = ak .. ':pending'
for _, did in ipairs(redis.call('SMEMBERS', pk)) do
  local dk = base .. 'd:' .. did
  if redis.call('HGET', dk, 'status') == 'pending' then
    if redis.call('HGET', dk, 'trimmed') == '1' then redis.call('DEL', dk) else redis.call('HSET', dk, 'status', 'cancelled') end
  end
  redis.call('ZREM', base .. 'outbox', did)
end
redis.call('DEL', pk)
return 1
`;

/** ARGV: base, id, expiresAt. Returns 1 when set, 0 when the alert was not active. */
const SET_EXPIRY = `
local base, id, expires = ARGV[1], ARGV[2], ARGV[3]
local ak = base .. 'a:' .. id
if redis.call('HGET', ak, 'status') ~= 'active' then return 0 end
redis.call('HSET', ak, 'expires_at', expires)
redis.call('ZADD', base .. 'expiry', expires, id)
return 1
`;

/** ARGV: base, now, batch. Returns {expired, examined}. */
const EXPIRE_DUE = `${DEACTIVATE}
local base, now, batch = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ids = redis.call('ZRANGEBYSCORE', base .. 'expiry', '-inf', now, 'LIMIT', 0, batch)
local n = 0
for _, id in ipairs(ids) do
  local ak = base .. 'a:' .. id
  if redis.call('HGET', ak, 'status') == 'active' then
    deactivate(base, id, ak, 'expired', redis.call('HGET', ak, 'expires_at'))
    n = n + 1
  else
    redis.call('ZREM', base .. 'expiry', id)
  end
end
return {n, #ids}
`;

/**
 * ARGV: base, now, kept, number of readings, then per reading 3 values: symbol, liquidation part JSON,
 * price part JSON ('' = none); then per evaluation 8 values: alertId, evaluation part JSON,
 * condition_met ('1', '0', '' = none), '1' when it fired, deliveryId, event, body, previous
 * last_triggered_at ('*' = unchecked, '' = never). Returns how many fired.
 */
const RECORD_EVALUATIONS = `
local base, now, kept, readings = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local first = 5 + 3 * readings
for i = 5, first - 1, 3 do
  local rk = base .. 'reading:' .. ARGV[i]
  redis.call('DEL', rk)
  redis.call('HSET', rk, 'at', now)
  if ARGV[i + 1] ~= '' then redis.call('HSET', rk, 'liquidation', ARGV[i + 1]) end
  if ARGV[i + 2] ~= '' then redis.call('HSET', rk, 'price', ARGV[i + 2]) end
end
local fired = 0
for i = first, #ARGV, 8 do
  local id = ARGV[i]
  local ak = base .. 'a:' .. id
  if redis.call('HGET', ak, 'status') == 'active' then
    redis.call('HSET', ak, 'last_evaluated_at', now, 'last_evaluation', ARGV[i + 1])
    if ARGV[i + 2] == '' then redis.call('HDEL', ak, 'condition_met') else redis.call('HSET', ak, 'condition_met', ARGV[i + 2]) end
    local prev = ARGV[i + 7]
    if ARGV[i + 3] == '1' and (prev == '*' or prev == (redis.call('HGET', ak, 'last_triggered_at') or '')) then
      redis.call('HSET', ak, 'last_triggered_at', now)
      redis.call('HINCRBY', ak, 'trigger_count', 1)
      local did = ARGV[i + 4]
      redis.call('HSET', base .. 'd:' .. did, 'id', did, 'alert_id', id, 'event', ARGV[i + 5], 'body', ARGV[i + 6], 'status', 'pending', 'created_at', now, 'next_attempt_at', now, 'attempts', '[]')
      redis.call('ZADD', base .. 'outbox', now, did)
      redis.call('SADD', ak .. ':pending', did)
      local lk = ak .. ':dl'
      redis.call('LPUSH', lk, did)
      for _, old in ipairs(redis.call('LRANGE', lk, kept, -1)) do
        local ok = base .. 'd:' .. old
        if redis.call('HGET', ok, 'status') == 'pending' then redis.call('HSET', ok, 'trimmed', '1') else redis.call('DEL', ok) end
      end
      redis.call('LTRIM', lk, 0, kept - 1)
      fired = fired + 1
    end
  end
end
return fired
`;

/** ARGV: base, id, status, nextAttemptAt, attempts JSON, deliveredAt ('' = null). Returns 1 when written, 0 when no longer pending. */
const RECORD_ATTEMPT = `
local base, id, status, nextAt, attempts, deliveredAt = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local dk = base .. 'd:' .. id
if redis.call('HGET', dk, 'status') ~= 'pending' then return 0 end
redis.call('HSET', dk, 'status', status, 'next_attempt_at', nextAt, 'attempts', attempts)
if deliveredAt ~= '' then redis.call('HSET', dk, 'delivered_at', deliveredAt) end
if status == 'pending' then
  redis.call('ZADD', base .. 'outbox', nextAt, id)
else
  redis.call('ZREM', base .. 'outbox', id)
  redis.call('SREM', base .. 'a:' .. redis.call('HGET', dk, 'alert_id') .. ':pending', id)
  if redis.call('HGET', dk, 'trimmed') == '1' then redis.call('DEL', dk) end
end
return 1
`;

const SCRIPTS = {
  insert: luaScript(INSERT),
  cancel: luaScript(CANCEL),
  setExpiry: luaScript(SET_EXPIRY),
  expireDue: luaScript(EXPIRE_DUE),
  recordEvaluations: luaScript(RECORD_EVALUATIONS),
  recordAttempt: luaScript(RECORD_ATTEMPT),
};

type Hash = Record<string, string>;

const num = (v: string | undefined): number | null => (v === undefined || v === "" ? null : Number(v));

/** `condition_met` as stored ('1', '0', absent). */
const conditionOf = (h: Hash): boolean | null => (h.condition_met === undefined ? null : h.condition_met === "1");

/** An alert hash with the newest reading of its symbol (absent when there is none or the alert was never evaluated). */
function toAlert(h: Hash, reading?: StoredReading): AlertRecord {
  return {
    id: h.id!,
    kind: h.kind as AlertKind,
    symbol: h.symbol!,
    params: JSON.parse(h.params!) as AlertRecord["params"],
    webhookUrl: h.webhook_url!,
    webhookSecret: h.webhook_secret!,
    manageTokenHash: h.manage_token_hash!,
    owner: h.owner ?? null,
    status: h.status as AlertStatus,
    createdAt: Number(h.created_at),
    expiresAt: Number(h.expires_at),
    endedAt: num(h.ended_at),
    ...lastEvaluation(
      { status: h.status as AlertStatus, kind: h.kind as AlertKind, at: num(h.last_evaluated_at), json: h.last_evaluation || null, conditionMet: conditionOf(h) },
      reading,
    ),
    lastTriggeredAt: num(h.last_triggered_at),
    triggerCount: Number(h.trigger_count ?? 0),
  };
}

function toDelivery(h: Hash): DeliveryRecord {
  return {
    id: h.id!,
    alertId: h.alert_id!,
    event: h.event!,
    body: h.body!,
    status: h.status as DeliveryStatus,
    createdAt: Number(h.created_at),
    nextAttemptAt: Number(h.next_attempt_at),
    attempts: JSON.parse(h.attempts ?? "[]") as AttemptRecord[],
    deliveredAt: num(h.delivered_at),
  };
}

/** True for a hash that exists (HGETALL of a missing key is empty). */
const exists = (h: Hash): boolean => h.id !== undefined;

/**
 * Maps a failure of a Redis call to AppError UPSTREAM_UNAVAILABLE (503, `Retry-After: 5`): connection
 * errors (closed, offline, reset, timeout) and replies of a Redis that cannot serve now (READONLY,
 * LOADING, OOM…). Other error replies are bugs and are rethrown as they are (500).
 */
export function alertStorageError(err: unknown, write: boolean): unknown {
  if (err instanceof AppError) return err;
  if (!isTransientRedisError(err)) return err;
  const what = write ? "nothing was stored or changed" : "alerts cannot be read right now";
  return new AppError("UPSTREAM_UNAVAILABLE", `${ALERT_STORAGE_UNREACHABLE}; ${what}, try again in a few seconds`, { retryAfterSec: ALERT_STORAGE_RETRY_SEC, cause: err });
}

/** True for the error {@link alertStorageError} makes. */
export function isAlertStorageError(err: unknown): err is AppError {
  return err instanceof AppError && err.code === "UPSTREAM_UNAVAILABLE" && err.message.startsWith(ALERT_STORAGE_UNREACHABLE);
}

/**
 * Alerts and deliveries in the Redis shared by the replicas of a multi-replica deployment (`REDIS_URL`),
 * with the semantics of the SQLite {@link AlertRepository}. Every state change is one Lua script, so it is
 * atomic and two replicas never apply it twice (an alert is expired or cancelled once; a trigger, its
 * trigger count and its outbox delivery are written together). Keys, under `<REDIS_PREFIX>alerts:`:
 *
 * - `a:<id>` hash: the alert (fields named as the SQLite columns); `a:<id>:dl` list: its delivery ids,
 *   newest first, trimmed to {@link DELIVERIES_KEPT}; `a:<id>:pending` set: its pending delivery ids;
 * - `active:<kind>` and `owner:<kind>:<wallet>` sorted sets: active alert ids by created_at;
 *   `expiry` sorted set: active alert ids by expires_at (what `expireDue` reads);
 * - `reading:<symbol>` hash: the symbol's newest round reading (`at`, and the `liquidation` and `price`
 *   parts as JSON; see last-evaluation.ts);
 * - `d:<delivery id>` hash: the delivery; `outbox` sorted set: pending delivery ids by next_attempt_at;
 * - `seq:<id prefix>_<second>`: id sequence counter (INCR, expires after an hour).
 *
 * Scripts name their keys from the prefix (single Redis or a primary with replicas; not Redis Cluster).
 * While Redis is unreachable every method rejects at once with AppError UPSTREAM_UNAVAILABLE (the
 * handle's client fails fast); nothing is half-written. Alerts are kept after they end, as in SQLite.
 */
export class RedisAlertStore implements AlertRepository {
  private readonly client: Redis;
  private readonly base: string;

  constructor(redis: RedisHandle) {
    this.client = redis.client;
    this.base = redis.key("alerts:");
  }

  private k(name: string): string {
    return this.base + name;
  }

  /** Runs `fn`, mapping Redis failures with {@link alertStorageError}. */
  private async guard<T>(write: boolean, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw alertStorageError(err, write);
    }
  }

  /** Runs `s` with `[base, ...args]` (see {@link evalScript}). */
  private eval(s: LuaScript, args: readonly string[]): Promise<unknown> {
    return evalScript(this.client, s, [this.base, ...args]);
  }

  /** HGETALL of every key (in MULTI chunks), in order; missing keys give empty hashes. */
  private async hashes(keys: readonly string[]): Promise<Hash[]> {
    const out: Hash[] = [];
    for (let i = 0; i < keys.length; i += CHUNK) {
      const multi = this.client.multi();
      for (const key of keys.slice(i, i + CHUNK)) multi.hGetAll(key);
      out.push(...((await multi.exec()) as unknown as Hash[]));
    }
    return out;
  }

  private async alerts(ids: readonly string[]): Promise<AlertRecord[]> {
    return this.withReadings((await this.hashes(ids.map((id) => this.k(`a:${id}`)))).filter(exists));
  }

  /** Alert hashes as records, each with the newest reading of its symbol when it is active and was evaluated. */
  private async withReadings(hs: readonly Hash[]): Promise<AlertRecord[]> {
    const symbols = [...new Set(hs.filter((h) => h.status === "active" && h.last_evaluated_at).map((h) => h.symbol!))];
    const readings = new Map<string, StoredReading>();
    if (symbols.length) {
      const multi = this.client.multi();
      for (const sym of symbols) multi.hmGet(this.k(`reading:${sym}`), ["at", "liquidation", "price"]);
      const rows = (await multi.exec()) as unknown as Array<Array<string | null>>;
      rows.forEach(([at, liquidation, price], i) => {
        if (at) readings.set(symbols[i]!, { at: Number(at), liquidation: liquidation ?? null, price: price ?? null });
      });
    }
    return hs.map((h) => toAlert(h, readings.get(h.symbol!)));
  }

  private async deliveryRecords(ids: readonly string[]): Promise<DeliveryRecord[]> {
    return (await this.hashes(ids.map((id) => this.k(`d:${id}`)))).filter(exists).map(toDelivery);
  }

  insert(prefix: string, a: NewAlert): Promise<AlertRecord> {
    return this.guard(true, async () => {
      const second = Math.floor(a.createdAt / 1000);
      const owner = a.owner ?? "";
      const params = JSON.stringify(a.params);
      const fields = ["kind", a.kind, "symbol", a.symbol, "params", params, "webhook_url", a.webhookUrl, "webhook_secret", a.webhookSecret, "manage_token_hash", a.manageTokenHash];
      const id = String(await this.eval(SCRIPTS.insert, [prefix, String(second), a.kind, owner, String(a.createdAt), String(a.expiresAt), ...fields]));
      return {
        ...a,
        id,
        params: JSON.parse(params) as AlertRecord["params"],
        owner: a.owner ?? null,
        status: "active",
        endedAt: null,
        lastEvaluatedAt: null,
        lastEvaluation: null,
        lastTriggeredAt: null,
        triggerCount: 0,
      };
    });
  }

  get(id: string): Promise<AlertRecord | undefined> {
    return this.guard(false, async () => (await this.alerts([id]))[0]);
  }

  active(kind?: AlertKind, owner?: string): Promise<AlertRecord[]> {
    return this.guard(false, async () => {
      const keys = kind === undefined ? ["active:liquidation", "active:price"] : owner !== undefined ? [`owner:${kind}:${owner.toLowerCase()}`] : [`active:${kind}`];
      const ids = (await Promise.all(keys.map((key) => this.client.zRange(this.k(key), 0, -1)))).flat();
      const alerts = (await this.alerts(ids)).filter((a) => a.status === "active");
      if (keys.length > 1) alerts.sort((x, y) => x.createdAt - y.createdAt || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
      return alerts;
    });
  }

  activeForEvaluation(): Promise<EvaluationTarget[]> {
    return this.guard(false, async () => {
      const ids = (await Promise.all(["active:liquidation", "active:price"].map((key) => this.client.zRange(this.k(key), 0, -1)))).flat();
      const fields = ["status", "kind", "symbol", "params", "last_triggered_at", "last_evaluated_at", "condition_met"];
      const out: EvaluationTarget[] = [];
      for (let i = 0; i < ids.length; i += CHUNK) {
        const chunk = ids.slice(i, i + CHUNK);
        const multi = this.client.multi();
        for (const id of chunk) multi.hmGet(this.k(`a:${id}`), fields);
        const rows = (await multi.exec()) as unknown as Array<Array<string | null>>;
        rows.forEach(([status, kind, symbol, params, lastTriggeredAt, lastEvaluatedAt, conditionMet], j) => {
          if (status !== "active") return;
          out.push({
            id: chunk[j]!,
            kind: kind as AlertKind,
            symbol: symbol!,
            params: JSON.parse(params!) as AlertRecord["params"],
            lastTriggeredAt: num(lastTriggeredAt ?? undefined),
            evaluated: !!lastEvaluatedAt,
            conditionMet: conditionMet === null || conditionMet === undefined ? null : conditionMet === "1",
          });
        });
      }
      return out;
    });
  }

  countActive(): Promise<number> {
    return this.guard(false, () => this.client.zCard(this.k("expiry")));
  }

  cancel(id: string, now: number): Promise<boolean> {
    return this.guard(true, async () => Number(await this.eval(SCRIPTS.cancel, [id, String(now)])) === 1);
  }

  setExpiry(id: string, expiresAt: number): Promise<boolean> {
    return this.guard(true, async () => Number(await this.eval(SCRIPTS.setExpiry, [id, String(expiresAt)])) === 1);
  }

  expireDue(now: number): Promise<number> {
    return this.guard(true, async () => {
      let expired = 0;
      for (;;) {
        const [n, examined] = (await this.eval(SCRIPTS.expireDue, [String(now), String(EXPIRE_BATCH)])) as [number, number];
        expired += n;
        if (examined < EXPIRE_BATCH) return expired;
      }
    });
  }

  /**
   * In script calls of {@link EVALUATION_BATCH} evaluations (each alert's evaluation, trigger and delivery
   * in one call); the readings go with the last call, so that a round cut off half-way leaves no reading
   * newer than the evaluations it depends on.
   */
  recordEvaluations(now: number, evaluations: readonly Evaluation[], readings: readonly SymbolReading[] = []): Promise<void> {
    return this.guard(true, async () => {
      for (let i = 0; i === 0 || i < evaluations.length; i += EVALUATION_BATCH) {
        const last = i + EVALUATION_BATCH >= evaluations.length;
        const batchReadings = last ? readings : [];
        const args = [String(now), String(DELIVERIES_KEPT), String(batchReadings.length)];
        for (const r of batchReadings) args.push(r.symbol, readingPartJson(r, "liquidation") ?? "", readingPartJson(r, "price") ?? "");
        for (const e of evaluations.slice(i, i + EVALUATION_BATCH)) {
          const t = e.trigger;
          const prev = t?.previousTriggeredAt === undefined ? "*" : t.previousTriggeredAt === null ? "" : String(t.previousTriggeredAt);
          const { json, conditionMet } = storedEvaluation(e.evaluation);
          args.push(e.alertId, json, conditionMet === null ? "" : conditionMet ? "1" : "0", t ? "1" : "0", t?.deliveryId ?? "", t?.event ?? "", t?.body ?? "", prev);
        }
        if (batchReadings.length || i < evaluations.length) await this.eval(SCRIPTS.recordEvaluations, args);
      }
    });
  }

  due(now: number, limit: number): Promise<DeliveryRecord[]> {
    return this.guard(false, async () => {
      const ids = await this.client.zRangeByScore(this.k("outbox"), "-inf", now, { LIMIT: { offset: 0, count: limit } });
      return (await this.deliveryRecords(ids)).filter((d) => d.status === "pending");
    });
  }

  recordAttempt(id: string, attempts: readonly AttemptRecord[], outcome: { status: DeliveryStatus; nextAttemptAt: number; deliveredAt: number | null }): Promise<void> {
    return this.guard(true, async () => {
      await this.eval(SCRIPTS.recordAttempt, [
        id,
        outcome.status,
        String(outcome.nextAttemptAt),
        JSON.stringify(attempts),
        outcome.deliveredAt === null ? "" : String(outcome.deliveredAt),
      ]);
    });
  }

  deliveries(alertId: string, limit: number): Promise<DeliveryRecord[]> {
    return this.guard(false, async () => {
      if (limit <= 0) return [];
      return this.deliveryRecords(await this.client.lRange(this.k(`a:${alertId}:dl`), 0, limit - 1));
    });
  }

  delivery(id: string): Promise<DeliveryRecord | undefined> {
    return this.guard(false, async () => {
      const h = (await this.client.hGetAll(this.k(`d:${id}`))) as Hash;
      return exists(h) ? toDelivery(h) : undefined;
    });
  }

  /** Nothing to release: the Redis connection belongs to the {@link RedisHandle} (closed by the service). */
  close(): void {}
}
