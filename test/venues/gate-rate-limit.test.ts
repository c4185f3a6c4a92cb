import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Metrics } from "../../src/core/metrics.js";
import { AppError } from "../../src/errors.js";
import { GatePerpClient } from "../../src/venues/gate/client.js";
import { fixtureText } from "../helpers/fixtures.js";

/** The contracts list (Gate's docs example: BTC_USDT), then the settled funding of its first contract. */
const CONTRACTS = fixtureText("gate/contracts_usdt_docs_example.json");
const FUNDING = fixtureText("gate/funding_rate_BTC_USDT_docs_example.json");

/**
 * Gate's answers carry `X-Gate-RateLimit-Requests-Remain`, `-Limit` and `-Reset-Timestamp` (seconds): when none is
 * left, the client sends nothing more until the reset (docs/methods/venues/gate.md, "Budgets and rate limits").
 */
describe("Gate: the rate-limit headers pause the client", () => {
  let server: Server;
  let url = "";
  let requests = 0;
  let remain = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests++;
      res.writeHead(200, {
        "content-type": "application/json",
        "x-gate-ratelimit-requests-remain": String(remain),
        "x-gate-ratelimit-limit": "200",
        "x-gate-ratelimit-reset-timestamp": String(Math.ceil(Date.now() / 1000) + 3),
      });
      res.end(req.url?.startsWith("/futures/usdt/contracts") ? CONTRACTS : FUNDING);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const client = () => new GatePerpClient(url, { timeoutMs: 2000, maxWaitMs: 200, metrics: new Metrics({ defaultMetrics: false }) });

  it("keeps sending while the venue says requests remain", async () => {
    remain = 150;
    requests = 0;
    const c = client();
    await c.instruments();
    expect((await c.fundingHistory("BTC", 5)).length).toBeGreaterThan(0);
    expect(requests).toBe(2);
  });

  it("after an answer saying none remain, refuses with 503 and Retry-After instead of sending", async () => {
    remain = 0;
    requests = 0;
    const c = client();
    await c.instruments(); // one request: its answer says the budget is used up until the reset, about 3 s away
    expect(requests).toBe(1);
    const err = await c.fundingHistory("BTC", 5).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining("rate limit used up") });
    expect((err as AppError).retryAfterSec).toBeGreaterThanOrEqual(1);
    expect(requests).toBe(1);
  });
});
