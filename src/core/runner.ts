import { ANONYMOUS, type AnyTool, type CallerInfo, type InterimAnswer } from "../registry/tool.js";
import { SingleFlight } from "../lib/single-flight.js";
import type { RedisSingleFlight } from "../state/flight.js";
import type { ResponseCache } from "./response-cache.js";
import type { ToolContext } from "./context.js";
import type { Metrics } from "./metrics.js";

/** Result of a cache lookup. */
export interface CacheHit {
  value: unknown;
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

/** Sets the `cached` flag of an answer (top-level `cached` or `meta.cached`, the spec's two places). */
function markCached(value: unknown): unknown {
  if (!value || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  if (typeof o.cached === "boolean") return { ...o, cached: true };
  const meta = o.meta as Record<string, unknown> | undefined;
  if (meta && typeof meta.cached === "boolean") return { ...o, meta: { ...meta, cached: true } };
  return value;
}

/**
 * Runs tools for every mount: response cache keyed by tool + canonical input (per-tool TTL; in process,
 * or shared by the replicas through Redis), single-flight of concurrent identical misses (in process, and
 * across replicas when `flights` is given). An answer enters the cache only through
 * {@link ToolRunner.commit}, which the mounts call once the request is paid (or free), so a failed
 * settlement never leaves data behind for a free hit.
 */
export class ToolRunner {
  private readonly flights = new SingleFlight<unknown>();

  constructor(
    private readonly ctx: ToolContext,
    private readonly metrics: Metrics,
    private readonly cache: ResponseCache,
    private readonly shared?: RedisSingleFlight,
  ) {}

  /** Canonical cache key of a validated input. */
  key(tool: AnyTool, input: unknown): string {
    return `${tool.name}:${JSON.stringify(stable(input))}`;
  }

  /** Looks the answer up; counts hit/miss. Tools with TTL 0 never hit. */
  async lookup(tool: AnyTool, input: unknown): Promise<CacheHit | undefined> {
    if (tool.cacheTtlSec <= 0) return undefined;
    const e = await this.cache.get(this.key(tool, input));
    this.metrics.cache.inc({ tool: tool.name, result: e ? "hit" : "miss" });
    if (!e) return undefined;
    return { value: markCached(e.value), ttlRemainingSec: Math.max(0, Math.ceil(e.ttlRemainingMs / 1000)) };
  }

  /** Whether an answer is cached, without counting a lookup (for quotes). */
  async has(tool: AnyTool, input: unknown): Promise<boolean> {
    return tool.cacheTtlSec > 0 && (await this.cache.has(this.key(tool, input)));
  }

  /** Runs the tool's precheck, if any (before payment). Throws its `AppError`. */
  async precheck(tool: AnyTool, input: unknown): Promise<void> {
    if (tool.precheck) await tool.precheck(input, this.ctx);
  }

  /** Runs the tool's preflight, if any: an interim answer to send free instead of the paid one. */
  preflight(tool: AnyTool, input: unknown): Promise<InterimAnswer<unknown> | undefined> {
    return tool.preflight ? tool.preflight(input, this.ctx) : Promise.resolve(undefined);
  }

  /**
   * Runs the handler. Concurrent identical reads share one execution; calls that change state (POST,
   * DELETE) or read credentials always run on their own. Throws what the handler throws.
   */
  execute(tool: AnyTool, input: unknown, caller: CallerInfo = ANONYMOUS): Promise<unknown> {
    if (tool.method !== "GET" || tool.acceptsCredentials) return tool.handler(input, this.ctx, caller);
    const key = this.key(tool, input);
    const run = () => tool.handler(input, this.ctx, caller);
    // Only answers the cache may share are shared across replicas (a status describes its own replica).
    const shared = this.shared && tool.cacheTtlSec > 0 ? this.shared : undefined;
    return this.flights.run(key, shared ? () => shared.run(key, run) : run);
  }

  /** Stores an answer that has been paid for (or is free) for the tool's TTL. Never rejects. */
  async commit(tool: AnyTool, input: unknown, value: unknown): Promise<void> {
    if (tool.cacheTtlSec <= 0) return;
    await this.cache.set(this.key(tool, input), value, tool.cacheTtlSec * 1000);
  }
}
