import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";

describe("IETF RateLimit headers", () => {
  let stack: FreeStack;
  beforeAll(async () => {
    stack = await startFreeStack({ RATE_LIMIT_PER_MIN: "50" });
  });
  afterAll(() => stack?.close());

  it("a cache miss carries RateLimit and RateLimit-Policy; a hit only the static policy; the 429 says r=0", async () => {
    const miss = await stack.get("/api/v1/prices?symbols=btc");
    expect(miss.status).toBe(200);
    expect(miss.headers.get("x-cache")).toBe("MISS");
    expect(miss.headers.get("ratelimit-policy")).toBe('"misses";q=50;w=60');
    expect(miss.headers.get("ratelimit")).toMatch(/^"misses";r=49;t=\d+$/);
    const hit = await stack.get("/api/v1/prices?symbols=btc");
    expect(hit.headers.get("x-cache")).toBe("HIT");
    expect(hit.headers.get("ratelimit-policy")).toBe('"misses";q=50;w=60');
    expect(hit.headers.get("ratelimit")).toBeNull();
    let last = miss;
    for (let i = 0; i < 60 && last.status !== 429; i++) last = await stack.get(`/api/v1/status?n=${i}`);
    expect(last.status).toBe(429);
    expect(last.headers.get("ratelimit")).toMatch(/^"misses";r=0;t=\d+$/);
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
