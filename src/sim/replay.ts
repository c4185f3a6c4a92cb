/**
 * Replay mode of the venue simulator: selected endpoints answer with REAL recorded payloads instead of simulated
 * ones. The recordings are read from a directory laid out like the shared real-data folder (`<venue>/<file>`);
 * nothing is copied into the repository (some recordings carry no licence and are for internal tests only).
 *
 * Replayed endpoints (everything else stays simulated, and replayed bodies keep their recorded timestamps):
 * - binance (fapi): `GET /fapi/v1/premiumIndex` (all 379 symbols of 2024-11-27, or `?symbol=` from that file;
 *   unknown → -1121) and `GET /fapi/v1/exchangeInfo` (2021-07-22 recording, older schema).
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
 *   `hour` (235 bars, 2025-08-20 → 30); `before_timestamp`/`limit` filter the recorded rows when given. The pool
 *   address comes from the recording repository's own watchlist (the file itself does not name it). The 15-minute
 *   stablecoin-pool recording names no pool and is not served.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Venues with replayable recordings. */
export type ReplayVenue = "binance" | "bybit" | "okx" | "hyperliquid" | "dexscreener" | "geckoterminal";
export const REPLAY_VENUES: readonly ReplayVenue[] = ["binance", "bybit", "okx", "hyperliquid", "dexscreener", "geckoterminal"];

/** Default recordings directory: `$MARKETGATE_SIM_REPLAY_DIR`, else the shared real-data folder. */
export const DEFAULT_REPLAY_DIR = process.env.MARKETGATE_SIM_REPLAY_DIR ?? "/work/shared/data/real";

/** Recording files (relative to the replay directory) per venue and endpoint. */
export const REPLAY_FILES = {
  binance: {
    premiumIndex: "binance/usdm_premiumIndex_all_symbols_2024-11-27.json",
    exchangeInfo: "binance/cryptofeed_usdm_exchangeInfo_2021-07-22.json",
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
} as const satisfies Record<ReplayVenue, Record<string, string>>;

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
export function venueRecordings<V extends ReplayVenue>(
  replay: ReplaySettings | undefined,
  venue: V,
): Record<keyof (typeof REPLAY_FILES)[V], unknown> | undefined {
  if (!replay?.venues.has(venue)) return undefined;
  const files = REPLAY_FILES[venue] as Record<string, string>;
  return Object.fromEntries(Object.entries(files).map(([k, f]) => [k, loadRecording(replay.dir, f)])) as Record<
    keyof (typeof REPLAY_FILES)[V],
    unknown
  >;
}
