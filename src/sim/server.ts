/**
 * The venue simulator's HTTP server: every venue router from `venues/index.ts` mounted at its real
 * base path under one local origin, each behind its own fault middleware.
 *
 * Production adapters run unchanged against it by base-URL configuration, e.g. CoinGecko's
 * `https://api.coingecko.com/api/v3` becomes `urls.coingecko` (`http://127.0.0.1:<port>/coingecko/api/v3`) and
 * `https://fapi.binance.com` becomes `urls.binance` (`http://127.0.0.1:<port>/binance`); see `venues/index.ts`.
 * Every response carries `X-Simulated: true` (replayed recordings too); unknown paths answer 404 JSON.
 * `replay` switches selected endpoints to real recorded payloads (see `replay.ts`).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { systemClock, type Clock } from "./clock.js";
import { FaultController, faultMiddleware } from "./faults.js";
import { createMarketModel, type MarketModel } from "./market.js";
import { perpModelFor, type PerpModel } from "./perp-model.js";
import { resolveReplay, type ReplayOption } from "./replay.js";
import { SIM_VENUES, type SimVenueName } from "./venues/index.js";

/** Default market seed. */
export const DEFAULT_SIM_SEED = 42;

/**
 * Options of {@link createSimulatorApp}. Pass `market`/`faults` to share them with the caller; otherwise they are
 * created from `seed` (default 42) and `clock` (default the system clock). `market` wins over `seed`/`clock`.
 */
export interface SimulatorAppOptions {
  seed?: number;
  clock?: Clock;
  market?: MarketModel;
  faults?: FaultController;
  /** Serve real recordings on the endpoints listed in `replay.ts` (`true` = all venues, default directory). */
  replay?: ReplayOption;
}

/** Base URL of each venue on a running simulator (no trailing slash). */
export type SimulatorUrls = Record<SimVenueName, string>;

/** Options of {@link startSimulator}: `port` 0 (default) picks a free port; `host` defaults to 127.0.0.1. */
export interface StartSimulatorOptions {
  port?: number;
  host?: string;
  seed?: number;
  clock?: Clock;
  /** See {@link SimulatorAppOptions.replay}. Throws at start when a needed recording is missing. */
  replay?: ReplayOption;
}

/** A listening simulator. `close()` drops open connections (including held "timeout" requests) and stops listening. */
export interface RunningSimulator {
  /** `http://<host>:<port>`, no trailing slash. */
  baseUrl: string;
  urls: SimulatorUrls;
  faults: FaultController;
  market: MarketModel;
  /** The perp layer the derivatives venues serve from (same seed and clock as `market`). */
  perp: PerpModel;
  close(): Promise<void>;
}

/** Builds the express app (all venues mounted) without listening. Throws RangeError on a non-finite seed. */
export function createSimulatorApp(opts: SimulatorAppOptions = {}): Express {
  const clock = opts.market?.clock ?? opts.clock ?? systemClock;
  const market = opts.market ?? createMarketModel({ seed: opts.seed ?? DEFAULT_SIM_SEED, clock });
  const faults = opts.faults ?? new FaultController();
  const replay = resolveReplay(opts.replay);

  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader("X-Simulated", "true");
    next();
  });
  for (const venue of SIM_VENUES) {
    app.use(venue.mountPath, faultMiddleware(faults, venue.name, venue.faultResponses), venue.createRouter({ market, clock, replay }));
  }
  app.use((req: Request, res: Response) => {
    res.status(404).json({ error: "not found", path: req.path, simulated: true });
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    res.status(500).json({ error: "simulator internal error", message, simulated: true });
  });
  return app;
}

/** Starts the simulator and resolves once it listens. Rejects if the port cannot be bound. */
export async function startSimulator(opts: StartSimulatorOptions = {}): Promise<RunningSimulator> {
  const host = opts.host ?? "127.0.0.1";
  const clock = opts.clock ?? systemClock;
  const market = createMarketModel({ seed: opts.seed ?? DEFAULT_SIM_SEED, clock });
  const faults = new FaultController();
  const app = createSimulatorApp({ market, faults, replay: opts.replay });

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(opts.port ?? 0, host, (err?: Error) => (err ? reject(err) : resolve(s)));
    s.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const baseUrl = `http://${urlHost}:${port}`;
  const urls = Object.fromEntries(SIM_VENUES.map((v) => [v.name, baseUrl + v.mountPath])) as SimulatorUrls;

  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    urls,
    faults,
    market,
    perp: perpModelFor(market),
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
