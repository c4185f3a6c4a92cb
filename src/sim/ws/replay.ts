/**
 * Websocket replay: REAL recorded frames pushed by the simulated websockets when `replay` is on for the venue.
 *
 * A recorded topic (Binance stream name, Bybit topic, OKX `channel:instId`, Hyperliquid `trades:COIN`) is served
 * from the recording only when the model does not serve it (a symbol the model does not list, Bybit's spot path):
 * a recording never silences, nor adds to, the simulated present, so that no stream mixes epochs (the 2026-08-09
 * Bybit BTC/ETH/SOL/DOGE trades, Hyperliquid's BTC trades and the Binance liquidation of 2020 stay unplayed while the
 * model serves those topics). Frames are pushed verbatim (their recorded
 * timestamps and ids: 2021 for the Binance aggTrades, 2020 for the Binance liquidation), with their recorded spacing,
 * starting at the connection's first subscription, to the connections subscribed to their topic; each recording plays
 * once per connection (no loop).
 * - binance: cryptofeed USDⓈ-M combined-stream `aggTrade` frames of 2021-04-05 (streams `sandusdt@aggTrade`,
 *   `chrusdt@aggTrade`, `neousdt@aggTrade`, `ctkusdt@aggTrade`, `batusdt@aggTrade`; 574 frames over ≈ 2 min);
 *   combined connections get the `{"stream","data"}` frame, raw ones its `data`. Plus one real `forceOrder`
 *   (BTCUSDT, 2020-03-13, tardis-node sample) 1 s after the start, on `btcusdt@forceOrder` as recorded and on
 *   `!forceOrder@arr` (the same event, re-wrapped under the all-market stream name the service subscribes to).
 * - bybit: cryptofeed v5 `publicTrade` frames of 2026-08-09 (the recording's tickers/kline frames are not copied):
 *   `/v5/public/linear` gets the linear connection's BTC/ETH/SOL/DOGE USDT trades, `/v5/public/spot` the spot
 *   connection's (≈ 43 s); plus one real `allLiquidation.PIPPINUSDT` frame (2025-02-25, tardis-node sample) 1 s after
 *   the start on the linear path.
 * - okx: cryptofeed v5 `trades`/`tickers` frames of 2022-05-13 (BTC-USD-220527, UNI-USD-SWAP, BTC-USDT; ≈ 10 s).
 * - hyperliquid: tardis-node sampled `trades` frames (BTC, FXS), 100 ms apart.
 * Files are read from the replay directory (default `src/sim/recordings`, see `../replay.ts`).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { WsVenue } from "./faults.js";

/** Recording files per venue (relative to the replay directory): the venue's stream recording, then its liquidations (a venue without any: none). */
export const REPLAY_WS_FILES: Readonly<Partial<Record<WsVenue, readonly string[]>>> = {
  binance: ["binance/cryptofeed_usdm_ws_aggTrade_5symbols_2021-04-05.ndjson", "binance/tardis_node_usdm_ws_forceOrder_BTCUSDT_2020-03-13.ndjson"],
  bybit: ["bybit/cryptofeed_v5_ws_linear_spot_publicTrade_2026-08-09.ndjson", "bybit/tardis_node_bybit_v5_allLiquidation_ws_message.ndjson"],
  okx: ["okx/cryptofeed_v5_ws_trades_tickers_2022-05-13.ndjson"],
  gate: [],
  hyperliquid: ["hyperliquid/tardis_node_hyperliquid_ws_messages.ndjson"],
  bitget: [],
  deribit: [],
  aster: [],
};

/** Where a recorded liquidation frame plays, after the connection's first subscription. */
const LIQUIDATION_OFFSET_MS = 1000;

/** One recorded frame: `text` as received, `inner` the Binance raw-stream payload (= `text` elsewhere). */
export interface WsReplayFrame {
  readonly offsetMs: number;
  readonly key: string;
  readonly text: string;
  readonly inner: string;
}

/** The frames one path serves; `keys` are the topics the recording holds (served where the model serves nothing). */
export interface WsReplayTrack {
  readonly frames: readonly WsReplayFrame[];
  readonly keys: ReadonlySet<string>;
}

/** Tracks of one venue by route (`"market"` for Binance, `"linear"`/`"spot"` for Bybit, `"public"`, `"ws"`). */
export type WsReplayTracks = ReadonlyMap<string, WsReplayTrack>;

/** True when every websocket recording exists under `dir`. */
export function replayWsAvailable(dir: string): boolean {
  return Object.values(REPLAY_WS_FILES).every((files) => (files ?? []).every((f) => existsSync(join(dir, f))));
}

interface CryptofeedLine {
  recv_ts?: number;
  dir?: string;
  conn?: string;
  data?: unknown;
}

/** The value of a line's first `"data"` member exactly as written (`"data":` to the closing brace), else re-serialised. */
function rawPayload(line: string, parsed: unknown): string {
  const i = line.indexOf(',"data":');
  if (i >= 0 && line.endsWith("}")) {
    const s = line.slice(i + 8, -1);
    try {
      JSON.parse(s);
      return s;
    } catch {
      // fall through
    }
  }
  return JSON.stringify(parsed);
}

function track(frames: WsReplayFrame[]): WsReplayTrack {
  const sorted = frames
    .map((f, i) => ({ f, i }))
    .sort((a, b) => a.f.offsetMs - b.f.offsetMs || a.i - b.i)
    .map((x) => x.f);
  return { frames: sorted, keys: new Set(sorted.map((f) => f.key)) };
}

/** Reads one recording file; throws an Error naming it when it is missing. */
function readLines(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`simulator ws replay: cannot load ${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

const cache = new Map<string, WsReplayTracks>();

/** Loads (once per directory and venue) the recorded frames of `venue`. Throws an Error naming a missing file. */
export function loadWsReplay(dir: string, venue: WsVenue): WsReplayTracks {
  const cacheKey = `${dir}\0${venue}`;
  const hit = cache.get(cacheKey);
  if (hit) return hit;
  const byRoute = new Map<string, WsReplayFrame[]>();
  const add = (route: string, f: WsReplayFrame) => {
    const list = byRoute.get(route) ?? [];
    list.push(f);
    byRoute.set(route, list);
  };
  const firstTs = new Map<string, number>();
  const offset = (route: string, ts: number): number => {
    const t0 = firstTs.get(route) ?? ts;
    firstTs.set(route, t0);
    return Math.max(0, Math.round((ts - t0) * 1000));
  };

  for (const file of REPLAY_WS_FILES[venue] ?? []) {
    for (const line of readLines(join(dir, file))) {
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch {
        continue;
      }
      if (venue === "hyperliquid") {
        const m = row as { channel?: string; data?: Array<{ coin?: string }> };
        const coin = m.channel === "trades" && Array.isArray(m.data) ? m.data[0]?.coin : undefined;
        if (typeof coin === "string") add("ws", { offsetMs: (byRoute.get("ws")?.length ?? 0) * 100, key: `trades:${coin}`, text: line, inner: line });
        continue;
      }
      const r = row as CryptofeedLine & { stream?: string; topic?: string };
      if (r.recv_ts === undefined) {
        // A tardis-node sample (one raw frame, no receive time): a liquidation, played LIQUIDATION_OFFSET_MS in.
        if (venue === "binance" && typeof r.stream === "string" && r.data !== undefined) {
          const inner = rawPayload(line, r.data);
          add("market", { offsetMs: LIQUIDATION_OFFSET_MS, key: r.stream, text: line, inner });
          if (r.stream.endsWith("@forceOrder")) {
            add("market", { offsetMs: LIQUIDATION_OFFSET_MS, key: "!forceOrder@arr", text: `{"stream":"!forceOrder@arr","data":${inner}}`, inner });
          }
        } else if (venue === "bybit" && typeof r.topic === "string") {
          add("linear", { offsetMs: LIQUIDATION_OFFSET_MS, key: r.topic, text: line, inner: line });
        }
        continue;
      }
      if (r.dir !== "recv" || typeof r.recv_ts !== "number" || typeof r.data !== "object" || r.data === null) continue;
      const payload = rawPayload(line, r.data);
      if (venue === "binance") {
        const d = r.data as { stream?: string; data?: unknown };
        if (typeof d.stream !== "string" || d.data === undefined) continue;
        add("market", { offsetMs: offset("market", r.recv_ts), key: d.stream, text: payload, inner: JSON.stringify(d.data) });
      } else if (venue === "bybit") {
        const d = r.data as { topic?: string };
        const route = r.conn === "BYBIT.ws.2" ? "linear" : r.conn === "BYBIT.ws.3" ? "spot" : undefined;
        if (typeof d.topic !== "string" || route === undefined) continue;
        add(route, { offsetMs: offset(route, r.recv_ts), key: d.topic, text: payload, inner: payload });
      } else {
        const d = r.data as { arg?: { channel?: string; instId?: string }; data?: unknown };
        if (!d.arg || typeof d.arg.channel !== "string" || typeof d.arg.instId !== "string" || !Array.isArray(d.data)) continue;
        add("public", { offsetMs: offset("public", r.recv_ts), key: `${d.arg.channel}:${d.arg.instId}`, text: payload, inner: payload });
      }
    }
  }
  const tracks = new Map<string, WsReplayTrack>([...byRoute].map(([k, v]) => [k, track(v)]));
  cache.set(cacheKey, tracks);
  return tracks;
}
