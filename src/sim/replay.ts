/**
 * Replay mode of the venue simulator: selected endpoints answer with REAL recorded payloads instead of simulated
 * ones, everything else stays simulated. The recordings live in `src/sim/recordings/<venue>/<file>` (copied from the
 * shared real-data folder; provenance and licences in `recordings/README.md`); `MARKETGATE_SIM_REPLAY_DIR` points the
 * simulator at another folder of the same layout.
 *
 * Every replayed answer carries `X-Sim-Source: replay` (`replay-instruments` for the recorded instrument lists) and
 * `X-Sim-Recording: <venue>/<file>` (see {@link createReplayLayer}); the service reads them to label its answers
 * `X-Data-Source: replay`. Replayed bodies
 * are served as recorded, with their recorded timestamps (2021 for the Binance XRPUSDT series): nothing is shifted
 * to "now", so an answer built from a recording shows when it was recorded. The service never combines a recording
 * with other venue data in one answer: it refuses such an answer (409, `src/core/replay-epochs.ts`), since the
 * recordings' epochs (2020-2026) differ from each other and from the model's present.
 *
 * Replayed endpoints:
 * - binance (fapi): `GET /fapi/v1/premiumIndex` (all 379 symbols of 2024-11-27, or `?symbol=` from that file;
 *   unknown → -1121), `GET /fapi/v1/exchangeInfo` (2021-07-22 recording, older schema),
 *   `GET /fapi/v1/fundingRate?symbol=XRPUSDT` (91 settlements 2021-11-18 → 2021-12-18, DERIVED wire shape without
 *   `markPrice`; `limit` default 100, `startTime`/`endTime` select like Binance) and
 *   `GET /fapi/v1/klines?symbol=XRPUSDT&interval=1h` (100 hourly candles 2021-11-17 → 21, DERIVED wire shape: 8 columns,
 *   quote volume estimated; see the recordings README).
 * - bybit: `GET /v5/market/instruments-info?category=linear` (800 instruments of 2026-08-09, paged with
 *   `limit`/`cursor`, filtered by `symbol`/`baseCoin`/`status`).
 * - okx: `GET /api/v5/public/instruments?instType=SWAP` (166 swaps of 2022-05-13; `instId`/`instFamily`/`uly` filters).
 * - hyperliquid: `POST /info` types `meta` (28 perps, 2023-07-17), `allMids` (2023-07-17) and `fundingHistory` for
 *   coin `BTC` (2023-05-12 → 2023-07-17, 8-hourly then hourly; ≤ 500 rows from `startTime`).
 * - dexscreener: `GET /latest/dex/search?q=LUNA` (15 Avalanche pairs, 2022-08, older schema) and `?q=babyDOJO`
 *   (2 Injective pairs, 2024-03), matched case-insensitively; `GET /latest/dex/pairs/{avalanche|injective}/{pair}`
 *   for any pair of those two recordings.
 * - geckoterminal: `GET /networks/eth/tokens/0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2/pools` page 1 (20 WETH
 *   pools, ≈2024-05, served verbatim: no `included` even when `include` is asked, as recorded; page > 1 → no data),
 *   `GET /networks/eth/pools` page 1 (top pools with `included` tokens, ≈2024-05), and the CBRL/SOL PumpSwap pool
 *   `solana/7bqJG2ZdMKbEkgSmfuqNVBvqEvWavgL8UEo33ZqdL3NP` OHLCV `minute?aggregate=15` (35 bars, 2025-08-20/21) and
 *   `hour` (235 bars, 2025-08-20 → 30); `before_timestamp`/`limit` filter the recorded rows when given.
 * - coingecko: `GET /coins/bitcoin/market_chart?vs_currency=usd` with daily granularity (`interval=daily`, or
 *   `days` > 90 / `max`): 5 daily points of 2023-12-17 → 21 (trimmed by its source), whatever `days` asks.
 *
 * The first endpoints of each venue above are answered by the venue routers (`venues/*.ts`, from {@link venueRecordings});
 * the Binance fundingRate/klines and CoinGecko market_chart replays by {@link createReplayLayer}, mounted in front of
 * the venue router. The layer also marks every answer whose body carries recorded data, whoever built it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Router, type NextFunction, type Request, type Response } from "express";

/** Venues with replayable recordings. */
export type ReplayVenue = "binance" | "bybit" | "okx" | "hyperliquid" | "dexscreener" | "geckoterminal" | "coingecko";
export const REPLAY_VENUES: readonly ReplayVenue[] = ["binance", "bybit", "okx", "hyperliquid", "dexscreener", "geckoterminal", "coingecko"];

/** The recordings copied into the project (`src/sim/recordings`). */
export const PROJECT_RECORDINGS_DIR = fileURLToPath(new URL("./recordings", import.meta.url));

/** Default recordings directory: `$MARKETGATE_SIM_REPLAY_DIR`, else {@link PROJECT_RECORDINGS_DIR}. */
export const DEFAULT_REPLAY_DIR = process.env.MARKETGATE_SIM_REPLAY_DIR ?? PROJECT_RECORDINGS_DIR;

/**
 * Response header marking a replayed answer: `replay` (recorded data), or `replay-instruments` (a recorded instrument
 * list: it decides which symbols are listed, not the numbers of an answer).
 */
export const SIM_SOURCE_HEADER = "X-Sim-Source";
/** Response header naming the recording a replayed answer comes from (`<venue>/<file>`). */
export const SIM_RECORDING_HEADER = "X-Sim-Recording";

/** Recording files (relative to the replay directory) per venue and endpoint. */
export const REPLAY_FILES = {
  binance: {
    premiumIndex: "binance/usdm_premiumIndex_all_symbols_2024-11-27.json",
    exchangeInfo: "binance/cryptofeed_usdm_exchangeInfo_2021-07-22.json",
    fundingRateXRPUSDT: "binance/freqtrade_usdm_XRPUSDT_fundingRate_history_2021-11_DERIVED_wire_shape.json",
    klinesXRPUSDT1h: "binance/freqtrade_usdm_XRPUSDT_klines_1h_2021-11-17_to_2021-11-21_DERIVED_wire_shape.json",
  },
  bybit: { instrumentsInfo: "bybit/cryptofeed_v5_instruments_info_linear_2026-08-09.json" },
  okx: { instruments: "okx/cryptofeed_v5_public_instruments_SWAP_2022-05-13.json" },
  hyperliquid: {
    meta: "hyperliquid/sdk_cassette_meta_2023-07-17.json",
    allMids: "hyperliquid/sdk_cassette_allMids_2023-07-17.json",
    fundingHistoryBTC: "hyperliquid/sdk_cassette_fundingHistory_BTC_2023-05-12_to_2023-07-17.json",
  },
  dexscreener: {
    searchLuna: "dexscreener/search_pairs_LUNA_avalanche_2022-08.json",
    searchBabyDojo: "dexscreener/search_pairs_babyDOJO_injective_2024-03.json",
  },
  geckoterminal: {
    tokenPoolsEthWeth: "geckoterminal/token_pools_eth_WETH_2024-05.json",
    topPoolsEth: "geckoterminal/top_pools_eth_2024-05.json",
    ohlcvCbrlMinute15: "geckoterminal/ohlcv_15m_solana_CBRL_SOL_pool_2025-08-20_to_2025-08-21.json",
    ohlcvCbrlHour1: "geckoterminal/ohlcv_1h_solana_CBRL_SOL_pool_2025-08-20_to_2025-08-30.json",
  },
  coingecko: { marketChartBitcoinDaily: "coingecko/pycgapi_market_chart_bitcoin_usd_daily_2023-12-17_to_2023-12-21_trimmed.json" },
} as const satisfies Record<ReplayVenue, Record<string, string>>;

/** The recorded instrument lists (reference data, marked `replay-instruments`). */
const INSTRUMENT_RECORDINGS: ReadonlySet<string> = new Set([
  REPLAY_FILES.binance.exchangeInfo,
  REPLAY_FILES.bybit.instrumentsInfo,
  REPLAY_FILES.okx.instruments,
  REPLAY_FILES.hyperliquid.meta,
]);

/** Replay switch as passed to the simulator: `true` = every venue from the default directory. */
export type ReplayOption = boolean | { dir?: string; venues?: readonly ReplayVenue[] };

/** Resolved replay settings handed to venue routers. */
export interface ReplaySettings {
  readonly dir: string;
  readonly venues: ReadonlySet<ReplayVenue>;
}

/** Normalises a {@link ReplayOption}; undefined when replay is off. */
export function resolveReplay(opt: ReplayOption | undefined): ReplaySettings | undefined {
  if (opt === undefined || opt === false) return undefined;
  if (opt === true) return { dir: DEFAULT_REPLAY_DIR, venues: new Set(REPLAY_VENUES) };
  const venues = new Set(opt.venues ?? REPLAY_VENUES);
  if (venues.size === 0) return undefined;
  return { dir: opt.dir ?? DEFAULT_REPLAY_DIR, venues };
}

/** True when every recording of `venues` exists under `dir` (tests use it to skip replay checks). */
export function replayAvailable(dir: string = DEFAULT_REPLAY_DIR, venues: readonly ReplayVenue[] = REPLAY_VENUES): boolean {
  return venues.every((v) => Object.values(REPLAY_FILES[v]).every((f) => existsSync(join(dir, f))));
}

const cache = new Map<string, unknown>();

/**
 * Reads and parses one recording (cached per path). Throws an Error naming the path when it is missing or not JSON,
 * so a misconfigured replay fails when the simulator starts, not on the first request.
 */
export function loadRecording(dir: string, file: string): unknown {
  const path = join(dir, file);
  const hit = cache.get(path);
  if (hit !== undefined) return hit;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch (err) {
    throw new Error(`simulator replay: cannot load ${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  cache.set(path, parsed);
  return parsed;
}

/** Loads every recording of `venue` when `replay` enables it; undefined otherwise. */
export function venueRecordings<V extends ReplayVenue>(replay: ReplaySettings | undefined, venue: V): Record<keyof (typeof REPLAY_FILES)[V], unknown> | undefined {
  if (!replay?.venues.has(venue)) return undefined;
  const files = REPLAY_FILES[venue] as Record<string, string>;
  return Object.fromEntries(Object.entries(files).map(([k, f]) => [k, loadRecording(replay.dir, f)])) as Record<keyof (typeof REPLAY_FILES)[V], unknown>;
}

/** Every object and array inside the recordings of one venue → the recording it belongs to. */
function indexRecordings(replay: ReplaySettings, venue: ReplayVenue): WeakMap<object, string> {
  const index = new WeakMap<object, string>();
  for (const file of Object.values(REPLAY_FILES[venue] as Record<string, string>)) {
    const stack: unknown[] = [loadRecording(replay.dir, file)];
    while (stack.length > 0) {
      const v = stack.pop();
      if (typeof v !== "object" || v === null || index.has(v)) continue;
      index.set(v, file);
      for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === "object" && child !== null) stack.push(child);
    }
  }
  return index;
}

/** Nodes looked at per answer before giving up (simulated answers are walked whole). */
const MAX_SCAN_NODES = 200_000;

/** The recording `body` carries data of (the body itself, or any object or array inside it), if any. */
function recordingIn(body: unknown, index: WeakMap<object, string>): string | undefined {
  const stack: unknown[] = [body];
  for (let seen = 0; stack.length > 0 && seen < MAX_SCAN_NODES; seen++) {
    const v = stack.pop();
    if (typeof v !== "object" || v === null) continue;
    const file = index.get(v);
    if (file !== undefined) return file;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === "object" && child !== null) stack.push(child);
  }
  return undefined;
}

const qp = (req: Request, name: string): string | undefined => {
  const v = req.query[name];
  return typeof v === "string" ? v : undefined;
};

/** An optional non-negative integer query parameter: undefined when absent, null when malformed. */
function intQuery(req: Request, name: string): number | undefined | null {
  const raw = qp(req, name);
  if (raw === undefined || raw === "") return undefined;
  return /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : null;
}

/**
 * Binance paging over recorded rows (oldest first, time `timeOf(row)`): `limit` (default `def`, capped at `max`),
 * `startTime` → the first `limit` rows at or after it, else the last `limit` rows; `endTime` bounds both.
 * Null when a parameter is malformed (the venue router then answers with its own error).
 */
function binancePage<T>(req: Request, rows: readonly T[], timeOf: (row: T) => number, def: number, max: number): T[] | null {
  const limit = intQuery(req, "limit");
  const startTime = intQuery(req, "startTime");
  const endTime = intQuery(req, "endTime");
  if (limit === null || startTime === null || endTime === null || limit === 0) return null;
  const n = Math.min(limit ?? def, max);
  const inRange = rows.filter((r) => (startTime === undefined || timeOf(r) >= startTime) && (endTime === undefined || timeOf(r) <= endTime));
  return startTime !== undefined ? inRange.slice(0, n) : inRange.slice(-n);
}

/** The replayed endpoints that no venue router serves: Binance XRPUSDT funding history and 1h klines. */
function binanceRoutes(router: Router, rec: Record<keyof typeof REPLAY_FILES.binance, unknown>): void {
  router.get("/fapi/v1/fundingRate", (req, res, next) => {
    if (qp(req, "symbol") !== "XRPUSDT") return next();
    const page = binancePage(req, rec.fundingRateXRPUSDT as Array<{ fundingTime: number }>, (r) => r.fundingTime, 100, 1000);
    if (page === null) return next();
    res.json(page);
  });
  router.get("/fapi/v1/klines", (req, res, next) => {
    if (qp(req, "symbol") !== "XRPUSDT" || qp(req, "interval") !== "1h") return next();
    const page = binancePage(req, rec.klinesXRPUSDT1h as Array<[number, ...unknown[]]>, (r) => r[0], 500, 1500);
    if (page === null) return next();
    res.json(page);
  });
}

/** Replayed CoinGecko market chart: bitcoin in USD at daily granularity. */
function coingeckoRoutes(router: Router, rec: Record<keyof typeof REPLAY_FILES.coingecko, unknown>): void {
  router.get("/coins/bitcoin/market_chart", (req, res, next) => {
    const vs = (qp(req, "vs_currency") ?? "").trim().toLowerCase();
    const daysRaw = (qp(req, "days") ?? "").trim().toLowerCase();
    const days = daysRaw === "max" ? Infinity : Number(daysRaw);
    const interval = (qp(req, "interval") ?? "").trim().toLowerCase();
    const daily = interval === "daily" || (interval === "" && days > 90);
    if (vs !== "usd" || daysRaw === "" || !(days > 0) || !daily || qp(req, "precision") !== undefined) return next();
    res.json(rec.marketChartBitcoinDaily);
  });
}

/**
 * The replay layer of one simulated venue, mounted in front of its router (after its fault middleware), or undefined
 * when replay is off for it. It answers the replayed endpoints no venue router serves, and marks every answer whose
 * JSON body carries recorded data (the recording itself, or rows taken from it, whoever built the answer) with
 * `X-Sim-Source: replay` (`replay-instruments` for an instrument list) and `X-Sim-Recording: <venue>/<file>`.
 * Recordings load now: a missing file throws.
 */
export function createReplayLayer(venue: string, replay: ReplaySettings | undefined): Router | undefined {
  if (!replay || !(REPLAY_VENUES as readonly string[]).includes(venue) || !replay.venues.has(venue as ReplayVenue)) return undefined;
  const v = venue as ReplayVenue;
  const index = indexRecordings(replay, v);
  const router = Router();
  router.use((_req: Request, res: Response, next: NextFunction) => {
    const json = res.json.bind(res);
    res.json = ((body?: unknown) => {
      const file = res.headersSent ? undefined : recordingIn(body, index);
      if (file !== undefined) {
        res.setHeader(SIM_SOURCE_HEADER, INSTRUMENT_RECORDINGS.has(file) ? "replay-instruments" : "replay");
        res.setHeader(SIM_RECORDING_HEADER, file);
      }
      return json(body);
    }) as Response["json"];
    next();
  });
  if (v === "binance") binanceRoutes(router, venueRecordings(replay, "binance")!);
  if (v === "coingecko") coingeckoRoutes(router, venueRecordings(replay, "coingecko")!);
  return router;
}
