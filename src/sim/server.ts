/**
 * The venue simulator's HTTP server: every venue router from `venues/index.ts` mounted at its real
 * base path under one local origin, each behind its own fault middleware.
 *
 * Production adapters run unchanged against it by base-URL configuration, e.g. CoinGecko's
 * `https://api.coingecko.com/api/v3` becomes `urls.coingecko` (`http://127.0.0.1:<port>/coingecko/api/v3`) and
 * `https://fapi.binance.com` becomes `urls.binance` (`http://127.0.0.1:<port>/binance`); see `venues/index.ts`.
 * Every response carries `X-Simulated: true` (replayed recordings too); unknown paths answer 404 JSON.
 * `replay` switches selected endpoints to real recorded payloads (see `replay.ts`): each replaying venue gets a replay
 * layer between its fault middleware and its router, which serves the recordings no router serves and marks every
 * answer carrying recorded data with `X-Sim-Source: replay` and `X-Sim-Recording: <venue>/<file>`.
 *
 * The same server carries the perp venues' websockets (`ws/hub.ts`): `wsUrls.<venue>` replaces the real websocket
 * host and clients append the real path — `${wsUrls.binance}/market/stream?streams=btcusdt@aggTrade/!forceOrder@arr`
 * (`wss://fstream.binance.com`; the retired `/stream` and `/ws` paths handshake and stay silent),
 * `${wsUrls.bybit}/v5/public/linear` (`wss://stream.bybit.com`), `${wsUrls.okx}/ws/v5/public`
 * (`wss://ws.okx.com:8443`), `${wsUrls.hyperliquid}/ws` (`wss://api.hyperliquid.xyz`). Trades and liquidations come
 * from the deterministic tape (`tape.ts`, `sim.tape`), which the REST trade endpoints serve too; websocket faults
 * are injected through `sim.wsFaults` (`ws/faults.ts`).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { systemClock, type Clock } from "./clock.js";
import { FaultController, faultMiddleware } from "./faults.js";
import { createMarketModel, type MarketModel } from "./market.js";
import { perpModelFor, type PerpModel } from "./perp-model.js";
import { createReplayLayer, resolveReplay, type ReplayOption, type ReplaySettings } from "./replay.js";
import { tapeFor, type SimTape } from "./tape.js";
import { SIM_VENUES, type SimVenueName } from "./venues/index.js";
import { WsFaultController, type WsVenue } from "./ws/faults.js";
import { SimWsHub, WS_MOUNTS, type SimWsOptions } from "./ws/hub.js";

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

/**
 * Websocket base of each perp venue on a running simulator (no trailing slash): `ws://<host>:<port>/<venue>-ws`.
 * Clients append the real paths (`/market/stream?streams=…`, `/v5/public/linear`, `/ws/v5/public`, `/ws`).
 */
export type SimulatorWsUrls = Record<WsVenue, string>;

/** Options of {@link startSimulator}: `port` 0 (default) picks a free port; `host` defaults to 127.0.0.1. */
export interface StartSimulatorOptions {
  port?: number;
  host?: string;
  seed?: number;
  clock?: Clock;
  /**
   * See {@link SimulatorAppOptions.replay}; for binance/bybit/okx/hyperliquid it also makes the websockets push real
   * recorded frames on the recorded topics (`ws/replay.ts`). Throws at start when a needed recording is missing.
   */
  replay?: ReplayOption;
  /** Websocket timing knobs (push cadence, keepalive rules); defaults are the real venues' rules. */
  ws?: SimWsOptions;
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
  /** Websocket bases of the perp venues (see {@link SimulatorWsUrls}). */
  wsUrls: SimulatorWsUrls;
  /** Websocket fault injection (drop, silence, late_pong, malformed, refuse). */
  wsFaults: WsFaultController;
  /** The deterministic trade/liquidation tape behind the websockets and the REST trade endpoints. */
  tape: SimTape;
  /** What is replayed from recordings (`replay.ts`); undefined when everything is simulated. */
  replay: ReplaySettings | undefined;
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
    const replayLayer = createReplayLayer(venue.name, replay);
    const fault = faultMiddleware(faults, venue.name, venue.faultResponses);
    if (replayLayer) app.use(venue.mountPath, fault, replayLayer, venue.createRouter({ market, clock, replay }));
    else app.use(venue.mountPath, fault, venue.createRouter({ market, clock, replay }));
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
  const wsFaults = new WsFaultController();
  const replay = resolveReplay(opts.replay);
  const app = createSimulatorApp({ market, faults, replay: opts.replay });
  const hub = new SimWsHub({ market, clock, faults: wsFaults, replay, options: opts.ws });

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(opts.port ?? 0, host, (err?: Error) => (err ? reject(err) : resolve(s)));
    s.once("error", reject);
  }).catch(async (err: unknown) => {
    await hub.close();
    throw err;
  });
  server.on("upgrade", (req, socket, head: Buffer) => hub.handleUpgrade(req, socket, head));
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const baseUrl = `http://${urlHost}:${port}`;
  const urls = Object.fromEntries(SIM_VENUES.map((v) => [v.name, baseUrl + v.mountPath])) as SimulatorUrls;
  const wsBase = `ws://${urlHost}:${port}`;
  const wsUrls = Object.fromEntries(Object.entries(WS_MOUNTS).map(([v, mount]) => [v, wsBase + mount])) as SimulatorWsUrls;

  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    urls,
    faults,
    market,
    perp: perpModelFor(market),
    wsUrls,
    wsFaults,
    tape: tapeFor(market),
    replay,
    close() {
      closing ??= hub.close().then(
        () =>
          new Promise<void>((resolve, reject) => {
            server.close((err) => (err ? reject(err) : resolve()));
            server.closeAllConnections();
          }),
      );
      return closing;
    },
  };
}
