/**
 * Websocket replay: REAL recorded frames pushed by the simulated websockets when `replay` is on for the venue.
 *
 * A recorded topic (Binance stream name, Bybit topic, OKX `channel:instId`, Hyperliquid `trades:COIN`) is served
 * from the recording instead of the tape; other topics stay simulated. Frames are pushed verbatim (their recorded
 * timestamps and ids), with their recorded spacing, starting at the connection's first subscription, to the
 * connections subscribed to their topic; each recording plays once per connection (no loop).
 * - binance: cryptofeed USDⓈ-M combined-stream `aggTrade` frames of 2021-04-05 (streams `sandusdt@aggTrade`,
 *   `chrusdt@aggTrade`, `neousdt@aggTrade`, `ctkusdt@aggTrade`, `batusdt@aggTrade`; 574 frames over ≈ 2 min);
 *   combined connections get the `{"stream","data"}` frame, raw ones its `data`.
 * - bybit: cryptofeed v5 frames of 2026-08-09: `/v5/public/linear` gets the linear connection's `publicTrade`,
 *   `tickers` and `kline.1` frames of BTC/ETH/SOL/DOGE USDT, `/v5/public/spot` the spot connection's (≈ 43 s).
 * - okx: cryptofeed v5 `trades`/`tickers` frames of 2022-05-13 (BTC-USD-220527, UNI-USD-SWAP, BTC-USDT; ≈ 10 s).
 * - hyperliquid: tardis-node sampled `trades` frames (BTC, FXS), 100 ms apart.
 * Files are read from the replay directory (default the shared real-data folder), never copied into the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { WsVenue } from "./faults.js";

/** Recording file per venue (relative to the replay directory). */
export const REPLAY_WS_FILES: Readonly<Record<WsVenue, string>> = {
  binance: "binance/cryptofeed_usdm_ws_aggTrade_5symbols_2021-04-05.ndjson",
  bybit: "bybit/cryptofeed_v5_ws_linear_spot_publicTrade_tickers_kline_2026-08-09.ndjson",
  okx: "okx/cryptofeed_v5_ws_trades_tickers_2022-05-13.ndjson",
  hyperliquid: "hyperliquid/tardis_node_hyperliquid_ws_messages.ndjson",
};

/** One recorded frame: `text` as received, `inner` the Binance raw-stream payload (= `text` elsewhere). */
export interface WsReplayFrame {
  readonly offsetMs: number;
  readonly key: string;
  readonly text: string;
  readonly inner: string;
}

/** The frames one path serves. */
export interface WsReplayTrack {
  readonly frames: readonly WsReplayFrame[];
  readonly keys: ReadonlySet<string>;
}

/** Tracks of one venue by route (`"market"` for Binance, `"linear"`/`"spot"` for Bybit, `"public"`, `"ws"`). */
export type WsReplayTracks = ReadonlyMap<string, WsReplayTrack>;

/** True when every websocket recording exists under `dir`. */
export function replayWsAvailable(dir: string): boolean {
  return Object.values(REPLAY_WS_FILES).every((f) => existsSync(join(dir, f)));
}

interface CryptofeedLine {
  recv_ts?: number;
  dir?: string;
  conn?: string;
  data?: unknown;
}

/** The payload of a cryptofeed line exactly as received (`"data":` to the closing brace), else re-serialised. */
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
  return { frames, keys: new Set(frames.map((f) => f.key)) };
}

const cache = new Map<string, WsReplayTracks>();

/** Loads (once per path) the recorded frames of `venue`. Throws an Error naming the file when it is missing. */
export function loadWsReplay(dir: string, venue: WsVenue): WsReplayTracks {
  const path = join(dir, REPLAY_WS_FILES[venue]);
  const hit = cache.get(path);
  if (hit) return hit;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`simulator ws replay: cannot load ${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
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

  for (const line of lines) {
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
    const r = row as CryptofeedLine;
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
  const tracks = new Map<string, WsReplayTrack>([...byRoute].map(([k, v]) => [k, track(v)]));
  cache.set(path, tracks);
  return tracks;
}
