import { request } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";

/** Status, headers (without `Date`) and body bytes of a response, for exact comparisons. */
async function snapshot(res: Response): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const headers = Object.fromEntries([...res.headers].filter(([k]) => k !== "date"));
  return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()).toString("utf8") };
}

/** A GET carrying a body, which fetch cannot send. */
function getWithBody(url: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "GET", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("cache-hit fast path (http/cache-hits.ts)", () => {
  let s: FreeStack;
  const get = (path: string, init?: RequestInit) => fetch(`${s.url}${path}`, init);
  const counter = async (name: string, labels: Record<string, string>) => {
    const metric = await s.service.metrics.registry.getSingleMetric(name)!.get();
    return metric.values.find((v) => Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l))?.value ?? 0;
  };

  beforeAll(async () => {
    s = await startFreeStack();
  });
  afterAll(() => s?.close());
  afterEach(() => vi.restoreAllMocks());

  it("answers a URL the tool route has parsed with the full route's exact hit, counted the same way", async () => {
    const peek = vi.spyOn(s.service.runner, "peek");
    await get("/api/v1/prices?symbols=doge,shib"); // miss: parsed and remembered
    const hitsBefore = await counter("marketgate_tool_cache_total", { tool: "cex_prices", result: "hit" });
    const requestsBefore = await counter("marketgate_http_requests_total", { route: "/api/v1/prices", method: "GET", status: "200" });

    const full = await snapshot(await get("/api/v1/prices?symbols=shib,doge")); // same entry, a URL not seen yet: full route
    expect(peek).not.toHaveBeenCalled();
    const fast = await snapshot(await get("/api/v1/prices?symbols=shib,doge"));
    expect(peek).toHaveBeenCalledTimes(1);
    expect(peek.mock.results[0]!.value).toBeDefined();

    expect(fast.headers["x-cache"]).toBe("HIT");
    expect(JSON.parse(fast.body).meta.cached).toBe(true);
    // The remaining TTL may cross a second between the two answers; everything else is byte for byte the same.
    for (const r of [full, fast]) {
      expect(r.headers["cache-control"]).toMatch(/^public, max-age=(10|[0-9])$/);
      delete r.headers["cache-control"];
    }
    expect(fast).toEqual(full);
    expect(Object.keys(fast.headers)).toEqual(Object.keys(full.headers));

    expect(await counter("marketgate_tool_cache_total", { tool: "cex_prices", result: "hit" })).toBe(hitsBefore + 2);
    expect(await counter("marketgate_http_requests_total", { route: "/api/v1/prices", method: "GET", status: "200" })).toBe(requestsBefore + 2);
  });

  it("leaves to the full route what it cannot answer: an entry it does not hold, a request with a body, HEAD", async () => {
    const path = "/api/v1/market/cardano";
    await get(path);
    expect((await get(path)).headers.get("x-cache")).toBe("HIT"); // remembered and answered fast

    // Not in this process's cache (as on a replica that has not read it yet): the full route looks it up.
    const lookup = vi.spyOn(s.service.runner, "lookupKey");
    vi.spyOn(s.service.runner, "peek").mockReturnValueOnce(undefined);
    const res = await get(path);
    expect(res.headers.get("x-cache")).toBe("HIT");
    expect(lookup).toHaveBeenCalledTimes(1);

    // A declared body goes to the body parser first, exactly as before the fast path existed.
    const withBody = await getWithBody(`${s.url}${path}`, "{not json");
    expect(withBody.status).toBe(400);
    expect(JSON.parse(withBody.body)).toMatchObject({ error: { code: "BAD_REQUEST" } });

    const head = await get(path, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("x-cache")).toBe("HIT");
    expect(await head.text()).toBe("");
  });

  it("sends the CORS headers the cors middleware sets, for each Origin (a configured origin list)", async () => {
    const listed = await startFreeStack({ CORS_ORIGINS: "https://app.example" });
    try {
      const path = "/api/v1/market/solana";
      const at = (origin?: string) => fetch(`${listed.url}${path}`, { headers: origin ? { origin } : {} });
      await at(); // miss: remembered
      for (const [i, origin] of ["https://app.example", "https://other.example", undefined].entries()) {
        const peek = vi.spyOn(listed.service.runner, "peek");
        // A URL not seen yet for the same entry (`?&`, `?&&`, ...: no query fields): the full route, after CORS.
        const full = await snapshot(await fetch(`${listed.url}${path}?${"&".repeat(i + 1)}`, { headers: origin ? { origin } : {} }));
        const fast = await snapshot(await at(origin));
        expect(peek).toHaveBeenCalledTimes(1);
        peek.mockRestore();
        delete full.headers["cache-control"];
        delete fast.headers["cache-control"];
        expect(fast).toEqual(full);
        expect(fast.headers["access-control-allow-origin"]).toBe(origin === "https://app.example" ? origin : undefined);
        expect(fast.headers.vary).toBe("Origin");
      }
    } finally {
      await listed.close();
    }
  });
});
