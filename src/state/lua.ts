import { createHash } from "node:crypto";
import { ErrorReply } from "redis";
import type { Redis } from "./redis.js";

/** A Lua script and its SHA-1, for EVALSHA. */
export interface LuaScript {
  lua: string;
  sha: string;
}

/** A {@link LuaScript} from its source. */
export function luaScript(lua: string): LuaScript {
  return { lua, sha: createHash("sha1").update(lua).digest("hex") };
}

/**
 * Runs `s` with `args` by EVALSHA, loading it with EVAL on NOSCRIPT (first use, or after a Redis restart
 * emptied the script cache). Other errors (connection, script errors) propagate.
 */
export async function evalScript(client: Redis, s: LuaScript, args: readonly string[]): Promise<unknown> {
  const options = { arguments: [...args] };
  try {
    return await client.evalSha(s.sha, options);
  } catch (err) {
    if (err instanceof ErrorReply && err.message.startsWith("NOSCRIPT")) return client.eval(s.lua, options);
    throw err;
  }
}

/** Reply prefixes of a Redis that is there but cannot serve now (treated like an unreachable one). */
const TRANSIENT_REPLY = /^(READONLY|LOADING|OOM|MASTERDOWN|BUSY|TRYAGAIN|CLUSTERDOWN|MISCONF|NOREPLICAS)\b/;

/**
 * Whether a Redis failure means "Redis is unavailable now" (connection errors, and replies such as
 * READONLY or LOADING) rather than a bug (any other error reply, e.g. a Lua error), so that stores answer
 * 503 for the first and let the second surface as a 500.
 */
export function isTransientRedisError(err: unknown): boolean {
  return !(err instanceof ErrorReply) || TRANSIENT_REPLY.test(err.message);
}
