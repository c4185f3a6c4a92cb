import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Metrics } from "../../src/core/metrics.js";
import { AppError } from "../../src/errors.js";
import { BitgetPerpClient } from "../../src/venues/bitget/client.js";
import { fixtureText } from "../helpers/fixtures.js";

const CONTRACTS = fixtureText("bitget/contracts_USDT-FUTURES_BTCUSDT_docs_example.json");
const RATIO = fixtureText("bitget/account_long_short_BTCUSDT_docs_example.json");

/** Bitget allows `account-long-short` 1 request/s: a second ratio within the second is refused at once, not awaited. */
describe("Bitget: the long/short budget fails fast", () => {
  let server: Server;
  let url = "";
  let ratioRequests = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const ratio = req.url?.startsWith("/api/v2/mix/market/account-long-short") ?? false;
      if (ratio) ratioRequests++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(ratio ? RATIO : CONTRACTS);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("answers the first ratio, and refuses a second within the second with 503 and Retry-After in well under a second", async () => {
    const c = new BitgetPerpClient(url, { timeoutMs: 2000, metrics: new Metrics({ defaultMetrics: false }) });
    expect((await c.longShort("BTC"))?.lsRatio).toBeGreaterThan(0);
    const t0 = Date.now();
    const err = await c.longShort("BTC").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(Date.now() - t0).toBeLessThan(300);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining("budget") });
    expect(ratioRequests).toBe(1);
  });
});
