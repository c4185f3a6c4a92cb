import { randomUUID } from "node:crypto";
import { AppError, toAppError } from "../errors.js";
import type { RedisHandle } from "./redis.js";

/** How long a flight may run before its lock lapses (a crashed runner does not block others longer). */
const LOCK_MS = 15_000;
/** How long a finished flight's result stays readable for the replicas that waited on it. */
const RESULT_MS = 5_000;
const POLL_MS = 20;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Single-flight across replicas: of concurrent identical misses on several replicas, one runs the work
 * (it holds `<prefix>flight:<key>` = a fresh token, `SET NX`) and publishes its result (or its error) under
 * `<prefix>flight:<key>:<token>`; the others poll for that result and return it, so a burst makes one
 * upstream call. The result is not the paid cache entry: each request still pays (or hits the cache) on
 * its own. If Redis is unreachable, or the runner vanishes without a result, the work runs locally.
 */
export class RedisSingleFlight {
  constructor(private readonly redis: RedisHandle) {}

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const c = this.redis.client;
    const lockKey = this.redis.key(`flight:${key}`);
    const token = randomUUID();
    let acquired: boolean;
    try {
      acquired = (await c.set(lockKey, token, { condition: "NX", expiration: { type: "PX", value: LOCK_MS } })) === "OK";
    } catch {
      return fn();
    }
    if (acquired) return this.lead(lockKey, token, fn);
    const result = await this.follow(lockKey).catch(() => undefined);
    if (!result) return fn();
    if (result.ok) return result.value as T;
    throw new AppError(result.error.code, result.error.message, { details: result.error.details });
  }

  private async lead<T>(lockKey: string, token: string, fn: () => Promise<T>): Promise<T> {
    const c = this.redis.client;
    const publish = (r: FlightResult) => c.set(`${lockKey}:${token}`, JSON.stringify(r), { expiration: { type: "PX", value: RESULT_MS } }).catch(() => undefined);
    try {
      const value = await fn();
      await publish({ ok: true, value });
      return value;
    } catch (err) {
      const e = toAppError(err);
      await publish({ ok: false, error: { code: e.code, message: e.message, details: e.details } });
      throw err;
    } finally {
      await c.del(lockKey).catch(() => undefined);
    }
  }

  /** Waits for the running flight's result; undefined when the runner vanished without one. */
  private async follow(lockKey: string): Promise<FlightResult | undefined> {
    const c = this.redis.client;
    const deadline = Date.now() + LOCK_MS;
    let token = await c.get(lockKey);
    while (token && Date.now() < deadline) {
      const raw = await c.get(`${lockKey}:${token}`);
      if (raw) return JSON.parse(raw) as FlightResult;
      await sleep(POLL_MS);
      const now = await c.get(lockKey);
      if (now !== token) {
        // Finished (or replaced): its result, if any, is readable for a while longer.
        const last = await c.get(`${lockKey}:${token}`);
        if (last) return JSON.parse(last) as FlightResult;
        token = now;
      }
    }
    return undefined;
  }
}

type FlightResult = { ok: true; value: unknown } | { ok: false; error: { code: ReturnType<typeof toAppError>["code"]; message: string; details?: unknown } };
