import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientKey } from "../../src/lib/client-key.js";
import { FreeRateLimiter, MissRateLimiter } from "../../src/lib/rate-limit.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { AppError } from "../../src/errors.js";
import { logger } from "../../src/lib/log.js";
import { RedisHandle } from "../../src/state/redis.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { redisAvailable, TEST_REDIS_URL } from "../helpers/redis-available.js";

/** The `trust proxy` value `TRUST_PROXY=raw` configures. */
const trustProxy = (raw: string) => loadConfig({ TRUST_PROXY: raw }).trustProxy;

describe("TRUST_PROXY", () => {
  it("refuses true, naming the safe alternatives", () => {
    let err: unknown;
    try {
      trustProxy("true");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems[0]).toMatch(/^TRUST_PROXY=true .*number of proxy hops.*subnets/);
  });

  it("accepts false, a hop count and lists of IPs, subnets and express range names", () => {
    expect(trustProxy("false")).toBe(false);
    expect(trustProxy("0")).toBe(false);
    expect(trustProxy("2")).toBe(2);
    expect(trustProxy("loopback, 10.0.0.0/8 ,fd00::/8,192.0.2.7,172.16.0.0/255.240.0.0")).toEqual(["loopback", "10.0.0.0/8", "fd00::/8", "192.0.2.7", "172.16.0.0/255.240.0.0"]);
    expect(trustProxy("linklocal,uniquelocal")).toEqual(["linklocal", "uniquelocal"]);
  });

  it.each(["yes", "0.0.0.0/0", "::/0", "10.0.0.0/33", "10.0.0.0/255.0.255.0", "loopback,", "10.0.0.300", "proxy.example", "*"])("refuses %s", (raw) => {
    expect(() => trustProxy(raw)).toThrow(ConfigError);
  });

  it("gives express the client address as the proxies report it", async () => {
    const ipUnder = async (raw: string, headers: Record<string, string>) => {
      const app = express();
      app.set("trust proxy", trustProxy(raw));
      app.get("/", (req, res) => res.send(req.ip));
      const server = app.listen(0, "127.0.0.1");
      await new Promise((r) => server.once("listening", r));
      try {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers });
        return await res.text();
      } finally {
        server.close();
      }
    };
    // The client wrote "6.6.6.6"; the proxy at 127.0.0.1 appended the address it saw, 198.51.100.7.
    const forged = { "X-Forwarded-For": "6.6.6.6, 198.51.100.7" };
    expect(await ipUnder("false", forged)).toBe("127.0.0.1");
    expect(await ipUnder("1", forged)).toBe("198.51.100.7");
    expect(await ipUnder("loopback", forged)).toBe("198.51.100.7");
    expect(await ipUnder("127.0.0.1/8,10.0.0.0/8", forged)).toBe("198.51.100.7");
  });
});

describe("clientKey", () => {
  it.each([
    ["198.51.100.7", "198.51.100.7"],
    ["::ffff:198.51.100.7", "198.51.100.7"],
    ["::ffff:c633:6407", "198.51.100.7"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002::1", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8::/64"],
    ["::1", "::/64"],
    ["fe80::1%eth0", "fe80::/64"],
    ["unknown", "unknown"],
    [undefined, "unknown"],
    ["", "unknown"],
  ])("%s -> %s", (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });
});

describe("per-client limiters", () => {
  const refused = (p: Promise<void>) =>
    p.then(
      () => false,
      (e: unknown) => e instanceof AppError && e.code === "RATE_LIMITED",
    );

  it("count two IPv6 addresses of one /64 as one client, and another /64 apart", async () => {
    const limiter = new MissRateLimiter(2);
    await limiter.consume("2001:db8:1:2::1");
    await limiter.consume("2001:db8:1:2:ffff:ffff:ffff:fffe");
    expect(await refused(limiter.consume("2001:db8:1:2::99"))).toBe(true);
    expect(await refused(limiter.consume("2001:db8:1:3::1"))).toBe(false);
  });

  it("count an IPv4 address and its IPv4-mapped IPv6 form as one client", async () => {
    const limiter = new MissRateLimiter(1);
    await limiter.consume("203.0.113.9");
    expect(await refused(limiter.consume("::ffff:203.0.113.9"))).toBe(true);
  });

  it("keep the miss and free budgets apart, and say which was exceeded", async () => {
    const miss = new MissRateLimiter(1);
    const free = new FreeRateLimiter(1);
    await miss.consume("192.0.2.1");
    await free.consume("192.0.2.1");
    const err = await free.consume("192.0.2.1").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "RATE_LIMITED", message: "rate limit of 1 free requests per minute exceeded" });
    expect((err as AppError).retryAfterSec).toBeGreaterThan(0);
  });
});

describe.skipIf(!redisAvailable)("per-client limiters on Redis (replicas)", () => {
  const REDIS_URL = TEST_REDIS_URL;
  let a: RedisHandle;
  let b: RedisHandle;
  const prefix = `mgtest:rl:${randomUUID().slice(0, 8)}:`;

  beforeAll(async () => {
    [a, b] = [new RedisHandle({ url: REDIS_URL, prefix, log: logger }), new RedisHandle({ url: REDIS_URL, prefix, log: logger })];
    a.start();
    b.start();
    await Promise.all([a.waitReady(), b.waitReady()]);
  });
  afterAll(async () => {
    for await (const keys of a.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await a.client.del(keys);
    await Promise.all([a?.close(), b?.close()]);
  });

  it("count one client in total across replicas, per /64, with the miss and free budgets in separate keys", async () => {
    const [missA, missB, freeA] = [new MissRateLimiter(2, a), new MissRateLimiter(2, b), new FreeRateLimiter(3, a)];
    await missA.consume("2001:db8:5:6::1");
    await missB.consume("2001:db8:5:6::2");
    await expect(missA.consume("2001:db8:5:6::3")).rejects.toMatchObject({ code: "RATE_LIMITED" });
    await freeA.consume("2001:db8:5:6::1");
    const keys: string[] = [];
    for await (const batch of a.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) keys.push(...batch);
    expect(keys.sort()).toEqual([`${prefix}rl-free:2001:db8:5:6::/64`, `${prefix}rl:2001:db8:5:6::/64`]);
  });
});

describe("HTTP limits behind one proxy hop (TRUST_PROXY=1)", () => {
  let s: FreeStack;
  /**
   * Headers as the proxy forwards them: whatever the client wrote in X-Forwarded-For (`forged`), then the
   * address the proxy saw (`client`). With TRUST_PROXY=1 the service believes the last entry only.
   */
  const viaProxy = (client: string, forged?: string) => ({ "X-Forwarded-For": forged ? `${forged}, ${client}` : client });
  const status = (path: string, headers: Record<string, string>) => fetch(`${s.url}${path}`, { headers }).then((r) => r.status);

  beforeAll(async () => {
    s = await startFreeStack({ TRUST_PROXY: "1", RATE_LIMIT_PER_MIN: "5", FREE_RATE_LIMIT_PER_MIN: "3", STREAMS: "off", ALERTS: "off" });
  });
  afterAll(() => s?.close());

  it("does not let a client escape the limit by rotating its own X-Forwarded-For entries", async () => {
    const statuses: number[] = [];
    // `/api/v1/status` is never cached: every call counts. One client, 40 forged addresses.
    for (let i = 0; i < 40; i++) statuses.push(await status("/api/v1/status", viaProxy("198.51.100.7", `203.0.113.${i}, 10.${i}.0.1`)));
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5).every((x) => x === 429)).toBe(true);
    // Another client behind the same proxy has its own budget, even when it forges the first one's address.
    expect(await status("/api/v1/status", viaProxy("198.51.100.8", "198.51.100.7"))).toBe(200);
  });

  it("counts IPv6 clients per /64", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 6; i++) statuses.push(await status("/api/v1/status", viaProxy(`2001:db8:aa:bb:${i}::${i}`)));
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(await status("/api/v1/status", viaProxy("2001:db8:aa:bc::1"))).toBe(200);
  });

  it("counts free tools without a cache (status) against the miss budget on every call", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push(await status("/api/v1/status", viaProxy("198.51.100.20")));
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it("answers 429 on the quote endpoint beyond FREE_RATE_LIMIT_PER_MIN, apart from the miss budget", async () => {
    const quote = () => fetch(`${s.url}/api/v1/quote?path=${encodeURIComponent("/api/v1/market/bitcoin")}`, { headers: viaProxy("198.51.100.30", "192.0.2.1") });
    const answers = [await quote(), await quote(), await quote(), await quote()];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    const refused = answers[3]!;
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error: { code: "RATE_LIMITED", message: "rate limit of 3 free requests per minute exceeded" } });
    // The miss budget of that client is untouched.
    expect(await status("/api/v1/status", viaProxy("198.51.100.30"))).toBe(200);
  });
});
