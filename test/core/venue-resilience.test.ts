import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { VenueCircuit } from "../../src/core/circuit.js";
import { Metrics } from "../../src/core/metrics.js";
import { runInScope } from "../../src/core/request-scope.js";
import { VenueHealth } from "../../src/core/venue-health.js";
import { AppError } from "../../src/errors.js";
import { VenueHttpClient, VenueHttpError, type VenueHttpOptions } from "../../src/lib/venue-http.js";
import { startStub, type RunningStub, type StubAnswer } from "../venues/perp-server.js";

/** A TCP server that accepts connections and never answers: the worst kind of venue. */
async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const client = (baseUrl: string, over: Partial<VenueHttpOptions> = {}) =>
  new VenueHttpClient({ venue: "stubvenue", baseUrl, timeoutMs: 8000, callsPerMin: 6000, metrics: new Metrics({ defaultMetrics: false }), ...over });

/** Runs `p` and returns how long it took to settle (ms) with its rejection, if any. */
async function timed(p: () => Promise<unknown>): Promise<{ ms: number; err: unknown }> {
  const t0 = Date.now();
  const err = await p().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { ms: Date.now() - t0, err };
}

describe("request deadline in the venue client", () => {
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  beforeAll(async () => {
    silent = await startSilentServer();
  });
  afterAll(() => silent.close());

  it("aborts a hanging venue at the request deadline instead of 3 attempts x the per-attempt timeout", async () => {
    const { ms, err } = await timed(() => runInScope({ deadlineMs: 400 }, () => client(silent.url).getJson("/hang")));
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "UPSTREAM_TIMEOUT", message: expect.stringContaining("request deadline") });
    expect(ms).toBeGreaterThanOrEqual(380);
    expect(ms).toBeLessThan(1500);
  });

  it("keeps the per-attempt behaviour outside any request (background jobs)", async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const { ms, err } = await timed(() => client(silent.url, { timeoutMs: 150, retries: 1, metrics }).getJson("/background"));
    expect(err).toMatchObject({ code: "UPSTREAM_TIMEOUT", message: expect.stringContaining("150 ms") });
    expect(ms).toBeGreaterThanOrEqual(300);
    const timeouts = (await metrics.upstreamCalls.get()).values.find((v) => v.labels.outcome === "timeout");
    expect(timeouts?.value).toBe(2);
  });

  describe("never waits past the deadline", () => {
    let stub: RunningStub;
    let answer: () => StubAnswer;
    beforeAll(async () => {
      stub = await startStub({ "GET /x": () => answer() });
    });
    afterAll(() => stub.close());
    beforeEach(() => {
      stub.calls.length = 0;
    });

    it("gives up at once when a Retry-After would outlive the deadline", async () => {
      answer = () => ({ status: 503, body: {}, headers: { "retry-after": "2" } });
      const { ms, err } = await timed(() => runInScope({ deadlineMs: 1000 }, () => client(stub.url).getJson("/x")));
      expect(err).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: "stubvenue answered HTTP 503" });
      expect(ms).toBeLessThan(500);
      expect(stub.calls).toHaveLength(1);
    });

    it("refuses a budget wait that would outlive the deadline", async () => {
      answer = () => ({ body: { ok: true } });
      const c = client(stub.url, { callsPerMin: 1, maxWaitMs: 60_000 });
      await c.getJson("/x");
      const { ms, err } = await timed(() => runInScope({ deadlineMs: 300 }, () => c.getJson("/x", { again: 1 })));
      expect(err).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining("budget exhausted") });
      expect(ms).toBeLessThan(200);
      expect(stub.calls).toHaveLength(1);
    });
  });
});

describe("per-venue circuit breaker", () => {
  let stub: RunningStub;
  let answer: () => StubAnswer;
  let health: VenueHealth;
  const c = (over: Partial<VenueHttpOptions> = {}) => client(stub.url, { health, retries: 0, ...over });

  beforeAll(async () => {
    stub = await startStub({ "GET /x": () => answer() });
  });
  afterAll(() => stub.close());
  beforeEach(() => {
    stub.calls.length = 0;
    health = new VenueHealth(["stubvenue"]);
    health.configureCircuits({ failures: 3, halfOpenAfterMs: 200 });
  });

  it("opens after N unhealthy calls, skips the venue without calling it, and closes after a healthy probe", async () => {
    answer = () => ({ status: 500, body: {} });
    for (let i = 0; i < 3; i++) await expect(c().getJson("/x", { i })).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: "stubvenue answered HTTP 500" });
    expect(health.snapshot()[0]).toMatchObject({ venue: "stubvenue", circuit: "open" });
    const err = await c()
      .getJson("/x", { i: 3 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining("stubvenue circuit open") });
    expect((err as AppError).retryAfterSec).toBeGreaterThanOrEqual(1);
    expect(stub.calls).toHaveLength(3);

    answer = () => ({ body: { ok: true } });
    await new Promise((r) => setTimeout(r, 250));
    await expect(c().getJson("/x", { i: 4 })).resolves.toEqual({ ok: true });
    expect(health.snapshot()[0]!.circuit).toBe("closed");
    expect(stub.calls).toHaveLength(4);
  });

  it("one breaker per venue key: every client of the venue shares it", async () => {
    answer = () => ({ status: 502, body: {} });
    const spot = c();
    const futures = c();
    for (let i = 0; i < 3; i++) await expect((i % 2 ? spot : futures).getJson("/x", { i })).rejects.toBeInstanceOf(AppError);
    await expect(spot.getJson("/x", { i: 9 })).rejects.toMatchObject({ message: expect.stringContaining("circuit open") });
    await expect(futures.getJson("/x", { i: 9 })).rejects.toMatchObject({ message: expect.stringContaining("circuit open") });
    expect(stub.calls).toHaveLength(3);
  });

  it("does not count a venue's 4xx, nor a 429, nor our own budget", async () => {
    answer = () => ({ status: 404, body: { error: "unknown symbol" } });
    for (let i = 0; i < 4; i++) await expect(c().getJson("/x", { i })).rejects.toBeInstanceOf(VenueHttpError);
    answer = () => ({ status: 429, body: {}, headers: { "retry-after": "60" } });
    for (let i = 0; i < 4; i++) await expect(c().getJson("/x", { i })).rejects.toMatchObject({ message: "stubvenue rate limit reached" });
    const tight = c({ callsPerMin: 1, maxWaitMs: 10 });
    answer = () => ({ body: { ok: true } });
    await tight.getJson("/x");
    for (let i = 0; i < 4; i++) await expect(tight.getJson("/x", { i })).rejects.toMatchObject({ message: expect.stringContaining("budget exhausted") });
    expect(health.snapshot()[0]!.circuit).toBe("closed");
  });

  it("counts malformed JSON and a venue cut by the deadline after half its timeout; a short cut says nothing", async () => {
    answer = () => ({ text: "{not json" });
    await expect(c().getJson("/x", { i: 1 })).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
    await expect(c().getJson("/x", { i: 2 })).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
    const silent = await startSilentServer();
    try {
      const hang = client(silent.url, { health, retries: 0, timeoutMs: 400 });
      // 100 ms of a 400 ms timeout: inconclusive, the circuit stays closed.
      await expect(runInScope({ deadlineMs: 100 }, () => hang.getJson("/short"))).rejects.toMatchObject({ code: "UPSTREAM_TIMEOUT" });
      expect(health.snapshot()[0]!.circuit).toBe("closed");
      // 300 ms of a 400 ms timeout: the venue had its chance; third unhealthy call in a row.
      await expect(runInScope({ deadlineMs: 300 }, () => hang.getJson("/long"))).rejects.toMatchObject({ code: "UPSTREAM_TIMEOUT" });
      expect(health.snapshot()[0]!.circuit).toBe("open");
    } finally {
      await silent.close();
    }
  });

  it("fails fast while a half-open probe is in flight, and a probe that taught nothing reopens the circuit", async () => {
    const silent = await startSilentServer();
    try {
      const hang = client(silent.url, { health, retries: 0, timeoutMs: 1000 });
      for (let i = 0; i < 3; i++) {
        await expect(runInScope({ deadlineMs: 600 }, () => hang.getJson("/x", { i }))).rejects.toMatchObject({ code: "UPSTREAM_TIMEOUT" });
      }
      expect(health.snapshot()[0]!.circuit).toBe("open");
      await new Promise((r) => setTimeout(r, 250));
      const probe = runInScope({ deadlineMs: 100 }, () => hang.getJson("/probe")).catch((e: unknown) => e);
      expect(health.snapshot()[0]!.circuit).toBe("half_open");
      const { ms, err } = await timed(() => hang.getJson("/other"));
      expect(err).toMatchObject({ message: expect.stringContaining("circuit open") });
      expect(ms).toBeLessThan(50);
      expect(await probe).toMatchObject({ code: "UPSTREAM_TIMEOUT" });
      expect(health.snapshot()[0]!.circuit).toBe("open");
    } finally {
      await silent.close();
    }
  });
});

describe("VenueCircuit", () => {
  it("passes values and errors through and reports its state names", async () => {
    const circuit = new VenueCircuit("v", { failures: 1, halfOpenAfterMs: 10_000 });
    expect(circuit.state).toBe("closed");
    await expect(circuit.run(async () => ({ ok: true as const, value: 42 }))).resolves.toBe(42);
    const boom = new AppError("UPSTREAM_ERROR", "boom");
    await expect(circuit.run(async () => ({ ok: false as const, error: boom, evidence: "healthy" as const }))).rejects.toBe(boom);
    expect(circuit.state).toBe("closed");
    await expect(circuit.run(async () => ({ ok: false as const, error: boom, evidence: "unhealthy" as const }))).rejects.toBe(boom);
    expect(circuit.state).toBe("open");
    await expect(circuit.run(async () => ({ ok: true as const, value: 1 }))).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 10 });
  });
});
