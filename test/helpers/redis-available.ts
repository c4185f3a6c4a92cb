/**
 * The Redis the multi-replica tests use, and whether one answers.
 *
 * `TEST_REDIS_URL` (default `redis://127.0.0.1:6379`) names it. Files that need it import
 * {@link redisAvailable} and wrap their Redis suites in `describe.skipIf(!redisAvailable)`. Locally, when
 * nothing accepts a TCP connection there within 500 ms, those suites are skipped with a loud notice; with
 * `CI=true` (set by `.ci/run`) importing this module throws instead, so the file fails: CI never skips them.
 * The probe runs once per test file (module), at import.
 */
import { connect } from "node:net";

/** The Redis of the tests: `TEST_REDIS_URL`, default `redis://127.0.0.1:6379`. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

const PROBE_TIMEOUT_MS = 500;

/** True when a TCP connection to `url`'s host and port opens within `timeoutMs`. */
export function tcpReachable(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  let host: string;
  let port: number;
  try {
    const u = new URL(url);
    host = u.hostname.replace(/^\[(.*)\]$/, "$1");
    port = Number(u.port || 6379);
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

const redactedUrl = TEST_REDIS_URL.replace(/\/\/[^@/]*@/, "//[redacted]@");

/** Whether the test Redis answers (probed once, at import). */
export const redisAvailable: boolean = await tcpReachable(TEST_REDIS_URL);

if (!redisAvailable) {
  if (process.env.CI === "true") {
    throw new Error(`CI=true: no Redis answers at ${redactedUrl} (TEST_REDIS_URL); the Redis tests must run in CI, so this file fails instead of skipping`);
  }
  console.warn(
    [
      "",
      "!".repeat(100),
      `!! NO REDIS at ${redactedUrl}: SKIPPING the Redis-dependent tests of this file.`,
      "!! Start one (redis-server --port 6379) or point TEST_REDIS_URL at one; CI=true makes this a failure.",
      "!".repeat(100),
      "",
    ].join("\n"),
  );
}
