/**
 * The simulator's websocket endpoints: one `ws` WebSocketServer (`noServer`) attached to the simulator's HTTP server;
 * `upgrade` requests are routed by path prefix to the per-venue protocol sessions.
 *
 * Bases (`wsUrls.<venue>` = `ws://<host>:<port><prefix>`) stand in for the real hosts, and clients append the real
 * paths: `/binance-ws` ↔ `wss://fstream.binance.com` (`/market/stream?streams=…`, `/market/ws/…`), `/bybit-ws` ↔
 * `wss://stream.bybit.com` (`/v5/public/linear`), `/okx-ws` ↔ `wss://ws.okx.com:8443` (`/ws/v5/public`), `/gate-ws` ↔ `wss://fx-ws.gateio.ws` (`/v4/ws/usdt`),
 * `/hyperliquid-ws` ↔ `wss://api.hyperliquid.xyz` (`/ws`), `/bitget-ws` ↔ `wss://ws.bitget.com` (`/v2/ws/public`), `/deribit-ws` ↔ `wss://www.deribit.com` (`/ws/api/v2`; its `public/set_heartbeat` test requests run in the session), `/aster-ws` ↔ `wss://fstream.asterdex.com` (`/stream?streams=…`, `/ws/…`). Unknown paths get HTTP 404 before the handshake.
 *
 * One timer (every `pushIntervalMs`, default 200 ms) runs only while connections are open: each subscription pushes
 * what the deterministic tape (`tape.ts`) scheduled since its last push, by the SIMULATOR clock (so a manual clock
 * advanced by 60 s pushes 60 s of trades at once); keepalive rules run on wall time: OKX closes after 30 s without
 * traffic, Hyperliquid after 60 s without a client message, Binance pings every 3 min, closes after 10 min without a
 * pong and after 24 h; Aster pings every 5 min, closes after 15 min without a pong and after 24 h. Protocol pings from clients are answered by hand (so `late_pong` can delay them).
 */
import { randomBytes } from "node:crypto";
import { STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { performance } from "node:perf_hooks";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import type { Clock } from "../clock.js";
import type { MarketModel } from "../market.js";
import { perpModelFor } from "../perp-model.js";
import type { ReplaySettings } from "../replay.js";
import { tapeFor } from "../tape.js";
import { AsterSession, asterRoute } from "./aster.js";
import { BinanceSession, binanceRoute } from "./binance.js";
import { BitgetSession, bitgetRoute } from "./bitget.js";
import { BybitSession, bybitRoute } from "./bybit.js";
import { DeribitSession } from "./deribit.js";
import { DydxSession, dydxRoute } from "./dydx.js";
import { WS_VENUES, type WsFaultController, type WsFaultTarget, type WsVenue } from "./faults.js";
import { GateSession, gateRoute } from "./gate.js";
import { HtxSession, htxEncode, htxRoute } from "./htx.js";
import { HyperliquidSession } from "./hyperliquid.js";
import { KrakenSession, krakenRoute } from "./kraken.js";
import { LighterSession, lighterRoute } from "./lighter.js";
import { OkxSession, okxRoute } from "./okx.js";
import { loadWsReplay, type WsReplayTracks } from "./replay.js";
import type { ConnIO, Session, SessionEnv } from "./session.js";

/** Path prefix of each venue's websocket base on the simulator: `/<venue>-ws`. */
export const WS_MOUNTS: Readonly<Record<WsVenue, string>> = Object.fromEntries(WS_VENUES.map((v) => [v, `/${v}-ws`])) as Record<WsVenue, string>;

/** Venues whose every frame goes on the wire encoded (HTX: gzip-compressed binary frames); the others send text. */
const WS_ENCODERS: Readonly<Partial<Record<WsVenue, (text: string) => Buffer>>> = { htx: htxEncode };

/** Timing knobs (wall-clock ms); the defaults are the real venues' rules. Tests shorten them. */
export interface SimWsOptions {
  /** Push cadence (default 200). */
  pushIntervalMs?: number;
  /** OKX: close after this long without traffic in either direction (default 30 000). */
  okxIdleMs?: number;
  /** Hyperliquid: close after this long without a client message (default 60 000). */
  hyperliquidIdleMs?: number;
  /** Bitget: close after this long without a client message (default 120 000: the docs' 2 min without a `ping`). */
  bitgetIdleMs?: number;
  /** Binance: server protocol-ping interval (default 180 000). */
  binancePingIntervalMs?: number;
  /** Binance: close when no pong arrived for this long (default 600 000). */
  binancePongTimeoutMs?: number;
  /** Binance: forced close after this connection age (default 24 h). */
  binanceMaxLifetimeMs?: number;
  /** Aster: server protocol-ping interval (default 300 000), close without a pong for this long (default 900 000), forced close after this age (default 24 h). */
  asterPingIntervalMs?: number;
  asterPongTimeoutMs?: number;
  asterMaxLifetimeMs?: number;
  /** Deribit: wall ms per second of a `public/set_heartbeat` interval (default 1000; tests shorten it). */
  deribitHeartbeatUnitMs?: number;
}

const DEFAULTS: Required<SimWsOptions> = {
  deribitHeartbeatUnitMs: 1000,
  pushIntervalMs: 200,
  okxIdleMs: 30_000,
  hyperliquidIdleMs: 60_000,
  bitgetIdleMs: 120_000,
  binancePingIntervalMs: 180_000,
  binancePongTimeoutMs: 600_000,
  binanceMaxLifetimeMs: 86_400_000,
  asterPingIntervalMs: 300_000,
  asterPongTimeoutMs: 900_000,
  asterMaxLifetimeMs: 86_400_000,
};

const MALFORMED_FALLBACK = '{"truncated":';

/** Options of {@link SimWsHub}. */
export interface SimWsHubOptions {
  market: MarketModel;
  clock: Clock;
  faults: WsFaultController;
  replay?: ReplaySettings;
  options?: SimWsOptions;
}

function connIdFor(venue: WsVenue): string {
  if (venue === "okx") return randomBytes(4).toString("hex");
  const alphabet = "0123456789abcdefghijklmnopqrstuv";
  const bytes = randomBytes(25);
  let s = "";
  for (let i = 0; i < 20; i++) s += alphabet[(bytes[i] as number) & 31];
  s += "-";
  for (let i = 20; i < 25; i++) s += alphabet[(bytes[i] as number) & 31];
  return s;
}

/** One open connection: socket I/O under the venue's faults, keepalive state, and its protocol session. */
class SimConnection implements ConnIO, WsFaultTarget {
  readonly connId: string;
  readonly openedAt = performance.now();
  lastClientAt = this.openedAt;
  lastServerAt = this.openedAt;
  lastPongAt = this.openedAt;
  lastPingSentAt = this.openedAt;
  session: Session | undefined;
  /** Binance server pings / pong timeout / 24 h lifetime apply (not on the silent legacy paths). */
  binanceKeepalive = false;
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;

  constructor(
    readonly venue: WsVenue,
    readonly ws: WebSocket,
    private readonly faults: WsFaultController,
  ) {
    this.connId = connIdFor(venue);
  }

  get closed(): boolean {
    return this.#closed || this.ws.readyState !== WebSocket.OPEN;
  }

  elapsed(): number {
    return performance.now() - this.openedAt;
  }

  #raw(text: string): void {
    if (this.closed) return;
    this.lastServerAt = performance.now();
    const encode = WS_ENCODERS[this.venue];
    this.ws.send(encode ? encode(text) : text);
  }

  sendData(text: string): void {
    if (!this.faults.isSilenced(this.venue)) this.#raw(text);
  }

  sendReply(text: string): void {
    if (!this.faults.isSilenced(this.venue)) this.#raw(text);
  }

  /** Runs `fn` after the venue's pong delay (now when none), unless silenced or closed by then. */
  #later(fn: () => void): void {
    const delay = this.faults.pongDelay(this.venue);
    const run = () => {
      if (!this.closed && !this.faults.isSilenced(this.venue)) fn();
    };
    if (delay <= 0) return run();
    const t = setTimeout(() => {
      this.#timers.delete(t);
      run();
    }, delay);
    this.#timers.add(t);
  }

  sendPong(text: string): void {
    this.#later(() => this.#raw(text));
  }

  protocolPong(data: Buffer): void {
    this.#later(() => {
      this.lastServerAt = performance.now();
      this.ws.pong(data);
    });
  }

  protocolPing(): void {
    if (this.closed || this.faults.isSilenced(this.venue)) return;
    this.lastPingSentAt = performance.now();
    this.ws.ping();
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.#closed = true;
    this.ws.close(code, reason);
  }

  terminate(): void {
    this.#closed = true;
    this.ws.terminate();
  }

  sendMalformed(count: number): void {
    const sample = this.session?.malformedSample() ?? MALFORMED_FALLBACK;
    for (let i = 0; i < count; i++) this.#raw(sample);
  }

  dispose(): void {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }
}

/** Websocket side of the simulator. Create it, route the HTTP server's `upgrade` events to it, `close()` it last. */
export class SimWsHub {
  readonly #wss = new WebSocketServer({ noServer: true, autoPong: false, perMessageDeflate: false, clientTracking: false, maxPayload: 1 << 20 });
  readonly #conns = new Set<SimConnection>();
  readonly #pending = new Set<Duplex>();
  readonly #opts: Required<SimWsOptions>;
  readonly #env: Omit<SessionEnv, "replay">;
  readonly #replay = new Map<WsVenue, WsReplayTracks>();
  readonly #faults: WsFaultController;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(opts: SimWsHubOptions) {
    this.#faults = opts.faults;
    this.#opts = { ...DEFAULTS, ...(opts.options ?? {}) };
    for (const [k, v] of Object.entries(this.#opts)) {
      if (!(typeof v === "number" && v > 0 && Number.isFinite(v))) throw new RangeError(`ws option ${k} must be a positive number, got ${v}`);
    }
    const perp = perpModelFor(opts.market);
    this.#env = { perp, tape: tapeFor(opts.market), clock: opts.clock };
    // Replay recordings load now, so a misconfigured replay fails at start.
    for (const v of WS_VENUES) {
      // Venues without recordings (aster) are not replay venues: widen the set to ask.
      if ((opts.replay?.venues as ReadonlySet<string> | undefined)?.has(v)) this.#replay.set(v, loadWsReplay(opts.replay!.dir, v));
    }
  }

  /** Handles one HTTP `upgrade` request (any path; non-websocket paths get 404). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => socket.destroy());
    const url = new URL(req.url ?? "/", "http://sim.invalid");
    const venue = WS_VENUES.find((v) => url.pathname === WS_MOUNTS[v] || url.pathname.startsWith(`${WS_MOUNTS[v]}/`));
    if (!venue) return reject(socket, 404);
    this.#faults.countUpgrade(venue);
    if (this.#closed) return reject(socket, 503);
    const refused = this.#faults.refusal(venue);
    if (refused !== undefined) return reject(socket, refused);
    const rest = url.pathname.slice(WS_MOUNTS[venue].length);
    const make = this.#sessionFactory(venue, rest, url.searchParams);
    if (!make) return reject(socket, 404);
    this.#pending.add(socket);
    socket.once("close", () => this.#pending.delete(socket));
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      this.#pending.delete(socket);
      if (this.#closed) {
        ws.terminate();
        return;
      }
      this.#accept(venue, ws, make);
    });
  }

  #sessionFactory(venue: WsVenue, rest: string, query: URLSearchParams): ((io: ConnIO) => Session) | undefined {
    const tracks = this.#replay.get(venue);
    const env = (route: string): SessionEnv => {
      const replay = tracks?.get(route);
      return replay ? { ...this.#env, replay } : this.#env;
    };
    switch (venue) {
      case "binance": {
        const route = binanceRoute(rest, query);
        return route ? (io) => new BinanceSession(io, env("market"), route) : undefined;
      }
      case "bybit": {
        const cat = bybitRoute(rest);
        return cat ? (io) => new BybitSession(io, env(cat), cat) : undefined;
      }
      case "okx": {
        const path = okxRoute(rest);
        return path ? (io) => new OkxSession(io, env(path), path) : undefined;
      }
      case "aster": {
        const route = asterRoute(rest, query);
        return route ? (io) => new AsterSession(io, env("stream"), route) : undefined;
      }
      case "gate":
        return gateRoute(rest) ? (io) => new GateSession(io, env("usdt")) : undefined;
      case "hyperliquid":
        return rest === "/ws" || rest === "/ws/" ? (io) => new HyperliquidSession(io, env("ws")) : undefined;
      case "bitget":
        return bitgetRoute(rest) ? (io) => new BitgetSession(io, env("public")) : undefined;
      case "deribit":
        return rest === "/ws/api/v2" ? (io) => new DeribitSession(io, env("ws"), this.#opts.deribitHeartbeatUnitMs) : undefined;
      case "htx": {
        const route = htxRoute(rest);
        return route ? (io) => new HtxSession(io, env(route), route) : undefined;
      }
      case "kraken":
        return krakenRoute(rest) ? (io) => new KrakenSession(io, env("v1")) : undefined;
      case "dydx":
        return dydxRoute(rest) ? (io) => new DydxSession(io, env("v4")) : undefined;
      case "lighter":
        return lighterRoute(rest) ? (io) => new LighterSession(io, env("stream")) : undefined;
    }
  }

  #accept(venue: WsVenue, ws: WebSocket, make: (io: ConnIO) => Session): void {
    const conn = new SimConnection(venue, ws, this.#faults);
    conn.session = make(conn);
    conn.binanceKeepalive = conn.session instanceof BinanceSession && !conn.session.legacy;
    this.#conns.add(conn);
    this.#faults.register(conn);
    ws.on("message", (data: RawData) => {
      conn.lastClientAt = performance.now();
      const text = Buffer.isBuffer(data) ? data.toString("utf8") : Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data).toString("utf8");
      try {
        conn.session?.onMessage(text);
      } catch {
        // a session bug must not kill the server
      }
    });
    ws.on("ping", (data: Buffer) => conn.protocolPong(data));
    ws.on("pong", () => {
      conn.lastPongAt = performance.now();
    });
    ws.on("error", () => {
      // socket errors end in "close"
    });
    ws.on("close", () => {
      conn.dispose();
      this.#conns.delete(conn);
      this.#faults.unregister(conn);
      if (this.#conns.size === 0) this.#stopTimer();
    });
    this.#startTimer();
  }

  #startTimer(): void {
    if (this.#timer || this.#closed) return;
    this.#timer = setInterval(() => this.#tick(), this.#opts.pushIntervalMs);
  }

  #stopTimer(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const now = this.#env.clock.now();
    const wall = performance.now();
    const o = this.#opts;
    for (const c of [...this.#conns]) {
      if (c.closed) continue;
      if (c.venue === "okx" && wall - Math.max(c.lastClientAt, c.lastServerAt) >= o.okxIdleMs) {
        c.close(4004, "No data received in 30s.");
        continue;
      }
      if (c.venue === "hyperliquid" && wall - c.lastClientAt >= o.hyperliquidIdleMs) {
        c.close(1000, "Inactive connection");
        continue;
      }
      if (c.venue === "bitget" && wall - c.lastClientAt >= o.bitgetIdleMs) {
        c.close(1000, "No ping received");
        continue;
      }
      if (c.binanceKeepalive) {
        if (wall - c.openedAt >= o.binanceMaxLifetimeMs) {
          c.close(1000, "Connection lifetime exceeded");
          continue;
        }
        if (wall - c.lastPongAt >= o.binancePongTimeoutMs) {
          c.terminate();
          continue;
        }
        if (wall - c.lastPingSentAt >= o.binancePingIntervalMs) c.protocolPing();
      }
      if (c.venue === "aster") {
        if (wall - c.openedAt >= o.asterMaxLifetimeMs) {
          c.close(1000, "Connection lifetime exceeded");
          continue;
        }
        if (wall - c.lastPongAt >= o.asterPongTimeoutMs) {
          c.terminate();
          continue;
        }
        if (wall - c.lastPingSentAt >= o.asterPingIntervalMs) c.protocolPing();
      }
      try {
        c.session?.tick(now, wall - c.openedAt);
      } catch {
        // keep pushing to the other connections
      }
    }
  }

  /** Open connections (all venues). */
  get size(): number {
    return this.#conns.size;
  }

  /** Stops the timer and terminates every connection (and handshakes in flight). Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopTimer();
    const waits: Array<Promise<void>> = [];
    for (const c of this.#conns) {
      waits.push(
        new Promise<void>((resolve) => {
          if (c.ws.readyState === WebSocket.CLOSED) return resolve();
          c.ws.once("close", () => resolve());
          c.terminate();
        }),
      );
    }
    for (const s of this.#pending) s.destroy();
    this.#pending.clear();
    await Promise.all(waits);
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }
}

/** Answers an upgrade request with a plain HTTP error and closes the socket. */
function reject(socket: Duplex, status: number): void {
  const reason = STATUS_CODES[status] ?? "Error";
  const body = JSON.stringify({ error: reason, status, simulated: true });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Simulated: true\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}
