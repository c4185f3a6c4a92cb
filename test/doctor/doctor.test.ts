import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { DOCTOR_CHECKS } from "../../src/doctor/checks.js";
import { doctorMain } from "../../src/doctor/cli.js";
import { formatReport, runDoctor } from "../../src/doctor/run.js";
import { readSummary } from "../../src/doctor/summary.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { createService } from "../../src/service.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { PERP_VENUES } from "../../src/venues/perp/types.js";
import { json } from "../helpers/json.js";

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const s = express().listen(0, "127.0.0.1");
  await new Promise((r) => s.once("listening", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** A tiny venue that forwards to `upstream` but renames `openInterest` to `openInterestQty` in `/fapi/v1/openInterest`. */
async function changedShapeBinance(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(async (req, res) => {
    const r = await fetch(`${upstream}${req.originalUrl}`);
    const body = (await r.json()) as Record<string, unknown>;
    if (req.path === "/fapi/v1/openInterest" && r.ok) {
      const { openInterest, ...rest } = body;
      res.status(r.status).json({ ...rest, openInterestQty: openInterest });
      return;
    }
    res.status(r.status).json(body);
  });
  const server: Server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

describe("marketgate doctor", () => {
  let sim: RunningSimulator;
  let dir: string;
  const env = (extra: Record<string, string> = {}) => ({ ...simEnv(sim), DATA_DIR: dir, ...extra });

  beforeAll(async () => {
    sim = await startSimulator({ seed: 5 });
    dir = mkdtempSync(join(tmpdir(), "marketgate-doctor-"));
  });
  afterAll(async () => {
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("checks every endpoint of the registry once: all ok against the simulator", async () => {
    const report = await runDoctor(loadConfig(env()));
    const bad = report.results.filter((r) => r.status !== "ok");
    expect(bad).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.results.map((r) => r.id)).toEqual(DOCTOR_CHECKS.map((c) => c.id));
    expect(new Set(report.results.map((r) => r.venue))).toEqual(new Set([...PERP_VENUES, "coingecko", "dexscreener", "geckoterminal"]));
    const text = formatReport(report);
    expect(text).toMatch(/^binance\s+GET \/fapi\/v1\/exchangeInfo, \/fapi\/v1\/fundingInfo\s+ok\s+\d+ ms$/m);
    expect(text).toContain(`all ${DOCTOR_CHECKS.length} checks ok (sim data mode)`);
  });

  it("reports an unreachable venue (dead port), skips what needs its instruments, and exits 1", async () => {
    const port = await deadPort();
    let out = "";
    const code = await doctorMain([], env({ BYBIT_BASE_URL: `http://127.0.0.1:${port}` }), (s) => (out += s));
    expect(code).toBe(1);
    expect(out).toMatch(/^bybit\s+GET \/v5\/market\/instruments-info\s+FAIL\s+unreachable: GET \/v5\/market\/instruments-info: ECONNREFUSED$/m);
    expect(out).toMatch(/^bybit\s+GET \/v5\/market\/tickers\s+skip\s+needs GET \/v5\/market\/instruments-info$/m);
    expect(out).toMatch(/^binance\s+GET \/fapi\/v1\/openInterest\s+ok/m);
    expect(out).toContain(`6 of ${DOCTOR_CHECKS.length} checks not ok (sim data mode); summary saved to ${join(dir, "doctor.json")}`);
    const summary = readSummary(dir)!;
    expect(summary.ok).toBe(false);
    expect(summary.failed[0]).toEqual({
      venue: "bybit",
      endpoint: "GET /v5/market/instruments-info",
      status: "fail",
      kind: "unreachable",
      message: "unreachable: GET /v5/market/instruments-info: ECONNREFUSED",
      field: null,
    });
  });

  it("reports a changed shape with the field the parser's zod path names", async () => {
    const proxy = await changedShapeBinance(sim.urls.binance);
    try {
      const report = await runDoctor(loadConfig(env({ BINANCE_FAPI_BASE_URL: proxy.url })));
      const failed = report.results.filter((r) => r.status !== "ok");
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ venue: "binance", endpoint: "GET /fapi/v1/openInterest", status: "fail", failure: { kind: "shape", field: "openInterest" } });
      expect(formatReport(report)).toMatch(
        /^binance\s+GET \/fapi\/v1\/openInterest\s+FAIL\s+shape change at "openInterest": .*binance \/fapi\/v1\/openInterest returned an unexpected shape/m,
      );
    } finally {
      await proxy.close();
    }
  });

  it("reports HTTP errors with their status", async () => {
    sim.faults.inject("coingecko", { kind: "server_error", status: 502 }, 3);
    try {
      const report = await runDoctor(loadConfig(env()), { checks: DOCTOR_CHECKS.filter((c) => c.venue === "coingecko") });
      expect(report.results[0]).toMatchObject({
        id: "coingecko.simplePrice",
        status: "fail",
        failure: { kind: "http", httpStatus: 502, message: "HTTP 502 from GET /simple/price" },
      });
      expect(report.results.slice(1).map((r) => r.status)).toEqual(["ok", "ok"]);
    } finally {
      sim.faults.clear();
    }
  });

  it("status shows the last saved run", async () => {
    await doctorMain([], env(), () => undefined);
    const service = await createService({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0", STREAMS: "off", ALERTS: "off", ...env() }) });
    const l = await service.listen();
    try {
      const status = await json(await fetch(`${l.url}/api/v1/status`));
      expect(status.doctor).toMatchObject({ ok: true, data_mode: "sim", checks: DOCTOR_CHECKS.length, failed: [] });
      expect(Date.parse(status.doctor.ran_at)).toBeGreaterThan(Date.now() - 60_000);
    } finally {
      await l.close();
    }
  });
});
