/**
 * Polls `fn` every `pollMs` until it returns a value other than undefined, null or false (errors count
 * as "not yet"), or throws after `timeoutMs` naming `what` and the last error.
 */
export async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 20_000, pollMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== null && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
