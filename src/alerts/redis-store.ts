import { createHash } from "node:crypto";
import { ErrorReply } from "redis";
import { AppError } from "../errors.js";
import type { Redis, RedisHandle } from "../state/redis.js";
import type { AlertRepository, Evaluation, NewAlert } from "./repository.js";
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

/** Reply prefixes of a Redis that is there but cannot serve now (treated like an unreachable one). */
const TRANSIENT_REPLY = /^(READONLY|LOADING|OOM|MASTERDOWN|BUSY|TRYAGAIN|CLUSTERDOWN|MISCONF|NOREPLICAS)\b/;

/**
 * Lua shared by the scripts: takes alert `id` (hash `ak`) out of the active indexes and ends it with
 * `status` at `endedAt`. The alert must be active.
 */
const DEACTIVATE = `
local function deactivate(base, id, ak, status, endedAt)
  local kind = redis.call('HGET', ak, 'kind')
  local owner = redis.call('HGET', ak, 'owner')
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
 * ARGV: base, now, kept, then per evaluation 7 values: alertId, evaluation JSON, '1' when it fired,
 * deliveryId, event, body, previous last_triggered_at ('*' = unchecked, '' = never). Returns how many fired.
 */
const RECORD_EVALUATIONS = `
local base, now, kept = ARGV[1], ARGV[2], tonumber(ARGV[3])
local fired = 0
for i = 4, #ARGV, 7 do
  local id = ARGV[i]
  local ak = base .. 'a:' .. id
  if redis.call('HGET', ak, 'status') == 'active' then
    redis.call('HSET', ak, 'last_evaluated_at', now, 'last_evaluation', ARGV[i + 1])
    local prev = ARGV[i + 6]
    if ARGV[i + 2] == '1' and (prev == '*' or prev == (redis.call('HGET', ak, 'last_triggered_at') or '')) then
      redis.call('HSET', ak, 'last_triggered_at', now)
      redis.call('HINCRBY', ak, 'trigger_count', 1)
      local did = ARGV[i + 3]
      redis.call('HSET', base .. 'd:' .. did, 'id', did, 'alert_id', id, 'event', ARGV[i + 4], 'body', ARGV[i + 5], 'status', 'pending', 'created_at', now, 'next_attempt_at', now, 'attempts', '[]')
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

interface Script {
  lua: string;
  sha: string;
}

const script = (lua: string): Script => ({ lua, sha: createHash("sha1").update(lua).digest("hex") });
const SCRIPTS = {
  insert: script(INSERT),
  cancel: script(CANCEL),
  setExpiry: script(SET_EXPIRY),
  expireDue: script(EXPIRE_DUE),
  recordEvaluations: script(RECORD_EVALUATIONS),
  recordAttempt: script(RECORD_ATTEMPT),
};

type Hash = Record<string, string>;

const num = (v: string | undefined): number | null => (v === undefined || v === "" ? null : Number(v));

function toAlert(h: Hash): AlertRecord {
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
    lastEvaluatedAt: num(h.last_evaluated_at),
    lastEvaluation: h.last_evaluation ? (JSON.parse(h.last_evaluation) as AlertRecord["lastEvaluation"]) : null,
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
  if (err instanceof ErrorReply && !TRANSIENT_REPLY.test(err.message)) return err;
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

  /** EVALSHA, loading the script on NOSCRIPT (first use, or after a Redis restart). */
  private async eval(s: Script, args: readonly string[]): Promise<unknown> {
    const options = { arguments: [this.base, ...args] };
    try {
      return await this.client.evalSha(s.sha, options);
    } catch (err) {
      if (err instanceof ErrorReply && err.message.startsWith("NOSCRIPT")) return this.client.eval(s.lua, options);
      throw err;
    }
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
    return (await this.hashes(ids.map((id) => this.k(`a:${id}`)))).filter(exists).map(toAlert);
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
    return this.guard(false, async () => {
      const h = (await this.client.hGetAll(this.k(`a:${id}`))) as Hash;
      return exists(h) ? toAlert(h) : undefined;
    });
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

  recordEvaluations(now: number, evaluations: readonly Evaluation[]): Promise<void> {
    return this.guard(true, async () => {
      for (let i = 0; i < evaluations.length; i += EVALUATION_BATCH) {
        const args = [String(now), String(DELIVERIES_KEPT)];
        for (const e of evaluations.slice(i, i + EVALUATION_BATCH)) {
          const t = e.trigger;
          const prev = t?.previousTriggeredAt === undefined ? "*" : t.previousTriggeredAt === null ? "" : String(t.previousTriggeredAt);
          args.push(e.alertId, JSON.stringify(e.evaluation), t ? "1" : "0", t?.deliveryId ?? "", t?.event ?? "", t?.body ?? "", prev);
        }
        await this.eval(SCRIPTS.recordEvaluations, args);
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
      await this.eval(SCRIPTS.recordAttempt, [id, outcome.status, String(outcome.nextAttemptAt), JSON.stringify(attempts), outcome.deliveredAt === null ? "" : String(outcome.deliveredAt)]);
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
