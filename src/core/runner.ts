import { LRUCache } from "lru-cache";
import { ANONYMOUS, type AnyTool, type CallerInfo, type InterimAnswer, type UnpaidCaller } from "../registry/tool.js";
import { SingleFlight } from "../lib/single-flight.js";
import type { RedisSingleFlight } from "../state/flight.js";
import { hitAnswerOf, type HitAnswer } from "./hit-answer.js";
import type { CachedAnswer, ResponseCache } from "./response-cache.js";
import type { ToolContext } from "./context.js";
import type { Metrics } from "./metrics.js";
import { assertSingleEpoch } from "./replay-epochs.js";
import { completenessOf, currentScope, runInScope } from "./request-scope.js";

/** Result of a cache lookup. */
export interface CacheHit {
  /** The answer with its `cached` flag set (`answer.value`). */
  value: unknown;
  /** The same answer with its JSON and bytes, built once per cache entry and shared by all its hits. */
  answer: HitAnswer;
  /** Seconds the entry has left. */
  ttlRemainingSec: number;
}

/** Sorts object keys recursively so that equal inputs give equal cache keys. */
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.keys(v as object)
        .sort()
        .map((k) => [k, stable((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

/** Most answers {@link ToolRunner} holds for requests still on their way to execution (least recently used go first). */
const MAX_HELD_ANSWERS = 1000;

/** Options of a {@link ToolRunner}. */
export interface RunnerOptions {
  /** Venue time allowed to one check before payment, and to one handler run, in ms (`REQUEST_DEADLINE_MS`; default 10 000). */
  deadlineMs?: number;
}

/**
 * Runs tools for every mount: response cache keyed by tool + canonical input (per-tool TTL; in process,
 * or shared by the replicas through Redis), single-flight of concurrent identical misses (in process, and
 * across replicas when `flights` is given). An answer enters the cache only through
 * {@link ToolRunner.commit}, which the mounts call once the request is paid (or free), so a failed
 * settlement never leaves data behind for a free hit.
 *
 * Checks before payment and handlers run in a request scope (src/core/request-scope.ts): a deadline every venue call
 * honours, and the completeness the input asks for with `require` (read by `fanOut`).
 */
export class ToolRunner {
  private readonly flights = new SingleFlight<unknown>();
  /**
   * The latest answer of each cacheable read, for the tool's TTL. An answer enters the response cache only
   * once its request is paid ({@link commit}), seconds after the execution when a settlement is on chain;
   * requests that missed the cache meanwhile (or looked it up just before the commit) would run the handler
   * again, and call every venue again, after the single-flight ended. They get this answer instead: like a
   * single-flight follower, each has passed its own payment check first, and the answer is as fresh as a
   * cache hit. Never served as a free hit: only {@link execute} reads it.
   */
  private readonly held = new LRUCache<string, { value: unknown }>({ max: MAX_HELD_ANSWERS });
  private readonly deadlineMs: number;

  constructor(
    private readonly ctx: ToolContext,
    private readonly metrics: Metrics,
    private readonly cache: ResponseCache,
    private readonly shared?: RedisSingleFlight,
    opts: RunnerOptions = {},
  ) {
    this.deadlineMs = opts.deadlineMs ?? 10_000;
  }

  /** Runs `fn` in a fresh request scope for `input` (deadline from now, completeness from `input.require`). */
  private scoped<T>(input: unknown, fn: () => Promise<T>): Promise<T> {
    return runInScope({ deadlineMs: this.deadlineMs, require: completenessOf(input) }, fn);
  }

  /** Canonical cache key of a validated input. */
  key(tool: AnyTool, input: unknown): string {
    return `${tool.name}:${JSON.stringify(stable(input))}`;
  }

  /** Looks the answer up; counts hit/miss. Tools with TTL 0 never hit. */
  lookup(tool: AnyTool, input: unknown): Promise<CacheHit | undefined> {
    return this.lookupKey(tool, this.key(tool, input));
  }

  /** {@link lookup} by the input's cache key ({@link key}), when the caller has it already. */
  async lookupKey(tool: AnyTool, key: string): Promise<CacheHit | undefined> {
    if (tool.cacheTtlSec <= 0) return undefined;
    return this.counted(tool, await this.cache.get(key));
  }

  /**
   * The answer under `key` if this process holds it now, with no I/O (the cache-hit fast paths): counts a
   * hit; a miss is not counted, since the caller then falls back to {@link lookupKey}, which counts it.
   */
  peek(tool: AnyTool, key: string): CacheHit | undefined {
    if (tool.cacheTtlSec <= 0) return undefined;
    const e = this.cache.peek(key);
    return e && this.counted(tool, e);
  }

  private counted(tool: AnyTool, e: CachedAnswer | undefined): CacheHit | undefined {
    this.metrics.cache.inc({ tool: tool.name, result: e ? "hit" : "miss" });
    if (!e) return undefined;
    const answer = hitAnswerOf(e.value);
    return { value: answer.value, answer, ttlRemainingSec: Math.max(0, Math.ceil(e.ttlRemainingMs / 1000)) };
  }

  /** Whether an answer is cached, without counting a lookup (for quotes). */
  async has(tool: AnyTool, input: unknown): Promise<boolean> {
    return tool.cacheTtlSec > 0 && (await this.cache.has(this.key(tool, input)));
  }

  /** Runs the tool's `checkBeforePayment`, if any, for `caller` in its own request scope. Throws its `AppError`. */
  async checkBeforePayment(tool: AnyTool, input: unknown, caller: UnpaidCaller = {}): Promise<void> {
    if (tool.checkBeforePayment) await this.scoped(input, () => tool.checkBeforePayment!(input, this.ctx, caller));
  }

  /** Runs the tool's `interimAnswer`, if any, for `caller`: an answer to send free instead of the paid one. */
  interimAnswer(tool: AnyTool, input: unknown, caller: UnpaidCaller = {}): Promise<InterimAnswer<unknown> | undefined> {
    return tool.interimAnswer ? tool.interimAnswer(input, this.ctx, caller) : Promise.resolve(undefined);
  }

  /**
   * Runs the handler in a request scope (deadline, completeness). Concurrent identical reads share one
   * execution, under the scope of the caller that started it, and a cacheable answer stays shared for
   * the tool's TTL (see {@link held}); calls that change state (POST, DELETE) or act for the caller
   * (credentials, a signed-in wallet) always run on their own. Throws what the handler throws, and AppError
   * CONFLICT when, in sandbox replay, the answer's venue data mixes epochs (`replay-epochs.ts`).
   */
  execute(tool: AnyTool, input: unknown, caller: CallerInfo = ANONYMOUS): Promise<unknown> {
    const run = () =>
      this.scoped(input, async () => {
        const value = await tool.handler(input, this.ctx, caller);
        // Sandbox replay: an answer mixing a recording with other venue data is refused (src/core/replay-epochs.ts).
        assertSingleEpoch(currentScope()?.venueLog);
        return value;
      });
    if (tool.method !== "GET" || tool.acceptsCredentials || tool.auth !== undefined) return run();
    const key = this.key(tool, input);
    // A status describes this replica at this moment: shared by concurrent callers only.
    if (tool.cacheTtlSec <= 0) return this.flights.run(key, run);
    const held = this.held.get(key);
    if (held) return Promise.resolve(held.value);
    const shared = this.shared;
    return this.flights.run(key, async () => {
      const value = await (shared ? shared.run(key, run) : run());
      this.held.set(key, { value }, { ttl: tool.cacheTtlSec * 1000 });
      return value;
    });
  }

  /** Stores an answer that has been paid for (or is free) for the tool's TTL. Never rejects. */
  async commit(tool: AnyTool, input: unknown, value: unknown): Promise<void> {
    if (tool.cacheTtlSec <= 0) return;
    await this.cache.set(this.key(tool, input), value, tool.cacheTtlSec * 1000);
  }
}
