/**
 * One readiness component's answer and the bounded, timed run that produces it (`GET /ready`, `readiness.ts`).
 */
import { AppError } from "../errors.js";
import { scrubUrls } from "../lib/redact.js";

/** One component's state in the `/ready` answer. */
export interface ComponentReadiness {
  status: "ok" | "fail" | "not_configured";
  /** Time the check took (probes only). */
  latency_ms?: number;
  /** Why it failed (caller-safe: URLs redacted). */
  error?: string;
  [detail: string]: unknown;
}

class Timeout extends Error {}

/** `p`, or a {@link Timeout} rejection after `ms` (the call itself is not cancelled; its own timeout applies). */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** A caller-safe reason: an AppError's code and message, else the message; URLs redacted, at most 300 characters. */
function reason(err: unknown): string {
  const message = err instanceof AppError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
  return scrubUrls(message).slice(0, 300);
}

/**
 * Runs `check` for at most `timeoutMs`: `ok` with its latency and the details it resolved with, or `fail` with its
 * latency and a caller-safe reason (never rejects).
 */
export async function timed(check: () => Promise<Record<string, unknown> | void>, timeoutMs: number): Promise<ComponentReadiness> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const details = (await within(check(), timeoutMs)) ?? {};
    return { status: "ok", latency_ms: ms(), ...details };
  } catch (err) {
    return { status: "fail", latency_ms: ms(), error: reason(err) };
  }
}
