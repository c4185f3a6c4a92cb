import type { AnyTool } from "../registry/tool.js";

/** Sets the `cached` flag of an answer (top-level `cached` or `meta.cached`; docs/decisions.md, "Cached answers"). */
function markCached(value: unknown): unknown {
  if (!value || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  if (typeof o.cached === "boolean") return { ...o, cached: true };
  const meta = o.meta as Record<string, unknown> | undefined;
  if (meta && typeof meta.cached === "boolean") return { ...o, meta: { ...meta, cached: true } };
  return value;
}

/**
 * A cached answer as its hits send it: the answer with its `cached` flag set, and that form as JSON and as
 * UTF-8 bytes, each computed on first use and then shared by every later hit of the same cache entry (an
 * entry never changes during its TTL). Transports key their own derived forms on this object (see
 * {@link hitAnswerOf}), so they too are built once per entry.
 */
export class HitAnswer {
  /** The answer with `cached: true` (a copy; the stored answer is not changed). */
  readonly value: unknown;
  #json?: string;
  #bytes?: Buffer;

  constructor(stored: unknown) {
    this.value = markCached(stored);
  }

  /** {@link value} as JSON text, as `res.json` would send it. */
  get json(): string {
    return (this.#json ??= JSON.stringify(this.value));
  }

  /** {@link json} encoded as UTF-8. */
  get bytes(): Buffer {
    return (this.#bytes ??= Buffer.from(this.json, "utf8"));
  }
}

/** One {@link HitAnswer} per stored answer object, dropped with the entry when the cache lets it go. */
const answers = new WeakMap<object, HitAnswer>();

/**
 * The {@link HitAnswer} of a stored cache value: the same object for every hit of one entry. The response
 * caches hand out the same value object for the whole life of an entry (the Redis cache's first level keeps
 * the one it parsed), which is what makes the sharing work; a non-object value gets a fresh form.
 */
export function hitAnswerOf(stored: unknown): HitAnswer {
  if (!stored || typeof stored !== "object") return new HitAnswer(stored);
  let a = answers.get(stored);
  if (!a) answers.set(stored, (a = new HitAnswer(stored)));
  return a;
}

/**
 * Whether the mounts' cache-hit fast paths (http/cache-hits.ts, mcp/cached-call.ts) may answer a tool's hits:
 * cached tools whose answers do not depend on the caller (no credentials, no signed-in wallet). The full
 * pipelines answer the same hits the same way; the fast paths only skip the work of getting there.
 */
export function hasSharedHits(tool: AnyTool): boolean {
  return tool.cacheTtlSec > 0 && !tool.acceptsCredentials && tool.auth === undefined;
}
