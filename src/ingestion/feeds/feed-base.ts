import WebSocket from "ws";
import { logger as rootLogger, type Logger } from "../../lib/log.js";
import type { FeedState, Liquidation, StreamGap, StreamVenue, Trade } from "../types.js";
import type { FeedMetrics } from "./metrics.js";
import { type FeedInstrument, frame, type InstrumentLookup, type InstrumentSource, type ParsedFrame } from "./normalise.js";

/** Events of a {@link VenueFeed}: normalised batches (one per venue message) and gaps after reconnects. */
export interface FeedEventMap {
  trades: Trade[];
  liquidations: Liquidation[];
  gap: StreamGap;
}

/** A tiny typed event emitter; a throwing listener is reported to `onError`, never to the emitter's caller. */
export class TypedEmitter<M> {
  private readonly sets: { [K in keyof M]?: Set<(value: M[K]) => void> } = {};

  constructor(private readonly onError: (err: unknown, event: keyof M) => void = () => {}) {}

  /** Adds a listener; returns the function that removes it. */
  on<K extends keyof M>(event: K, fn: (value: M[K]) => void): () => void {
    const set = (this.sets[event] ??= new Set());
    set.add(fn);
    return () => this.off(event, fn);
  }

  off<K extends keyof M>(event: K, fn: (value: M[K]) => void): void {
    this.sets[event]?.delete(fn);
  }

  emit<K extends keyof M>(event: K, value: M[K]): void {
    for (const fn of this.sets[event] ?? []) {
      try {
        fn(value);
      } catch (err) {
        this.onError(err, event);
      }
    }
  }
}

/** Options every venue feed takes. Times are milliseconds. */
export interface FeedOptions {
  /** Resolves bases to venue instruments (a `PerpVenueClient` fits); `instruments()` also admits all-market liquidations. */
  instruments: InstrumentSource;
  /** `ws(s)://host[:port]` without path (default: the venue's live host); the feed appends the venue path. */
  baseUrl?: string;
  /** Subscribe to the venue's liquidation channel (default true; Hyperliquid has none). */
  liquidations?: boolean;
  /** No message for this long → terminate and reconnect (default 60 000; also catches silent handshakes). */
  staleMs?: number;
  /** Client heartbeat period (default per venue: Bybit 20 000, OKX 20 000 idle, Hyperliquid 30 000; Binance has none, `ws` answers its pings); 0 disables. */
  heartbeatMs?: number;
  /** Reconnect backoff: exponential from `backoffMinMs` (default 1 000) to `backoffMaxMs` (default 30 000), jittered. */
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** Open a fresh connection this long after the current one opened, switch when it delivers, close the old one (Binance default 23 h); 0 disables. */
  rotateAfterMs?: number;
  /** WebSocket handshake timeout (default 10 000). */
  handshakeTimeoutMs?: number;
  /** After a connection's first message, trades at or before the latest trade already emitted for the base are dropped for this long (default 10 000): de-duplicates rotation overlap and replayed snapshots. Identical liquidations (same symbol, time, side, price, size) are always dropped. */
  replayGuardMs?: number;
  metrics?: FeedMetrics;
  logger?: Logger;
  /** Clock for event times (default `Date.now`). */
  now?: () => number;
  /** Jitter source in [0, 1) (default `Math.random`). */
  random?: () => number;
}

/** Fixed facts of one venue, given by its subclass. */
export interface VenueSpec {
  venue: StreamVenue;
  defaultBaseUrl: string;
  /** Client heartbeat: every `everyMs`, or only after `everyMs` without traffic when `idleOnly`. */
  heartbeat: { everyMs: number; idleOnly: boolean } | null;
  rotateAfterMs: number;
  /** Minimum spacing of client messages on one connection (venue incoming-message limits). */
  sendSpacingMs: number;
  /** Most symbols one connection may carry (venue stream/argument limits). */
  maxSymbols: number;
  /** True when the endpoint URL itself carries the subscriptions (Binance combined streams). */
  urlCarriesStreams: boolean;
}

/** Result of {@link VenueFeed.subscribe}: canonical bases now subscribed, not listed by the venue, or over the connection limit. */
export interface SubscribeResult {
  subscribed: string[];
  unknown: string[];
  rejected: string[];
}

interface Conn {
  id: number;
  ws: WebSocket;
  role: "primary" | "candidate" | "retired";
  openedAt: number | null;
  lastMessageAt: number | null;
  firstMessageAt: number | null;
  lastPingAt: number;
  lastSentAt: number;
  /** Bases subscribed on this connection. */
  covered: Map<string, FeedInstrument>;
  queue: string[];
  sendTimer: NodeJS.Timeout | null;
  timers: NodeJS.Timeout[];
}

const CATALOG_TTL_MS = 3_600_000;

function rawText(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
}

/**
 * One venue websocket (tardis-style lifecycle; venues subclass it once): many symbols on one connection
 * with batched (un)subscribes, resubscription after reconnects, the venue's client heartbeat, a stale timer
 * (no message for `staleMs` → terminate), reconnects with exponential backoff and jitter (reset after the
 * first good message), proactive make-before-break rotation, and typed events. After a reconnect the first
 * message emits `gap` {from: the newest trade's time, or the last message time if earlier (or disconnect time), to: first message time}.
 * It never throws to its owner: socket, venue and parse problems are logged and counted.
 */
export abstract class VenueFeed {
  readonly venue: StreamVenue;
  protected readonly baseUrl: string;
  protected readonly liquidations: boolean;
  protected readonly log: Logger;
  private readonly events: TypedEmitter<FeedEventMap>;
  private readonly source: InstrumentSource;
  private readonly metrics?: FeedMetrics;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly staleMs: number;
  private readonly heartbeatMs: number;
  private readonly backoffMinMs: number;
  private readonly backoffMaxMs: number;
  private readonly rotateAfterMs: number;
  private readonly handshakeTimeoutMs: number;
  private readonly replayGuardMs: number;
  private readonly subs = new Map<string, FeedInstrument>();
  private readonly bySymbol = new Map<string, FeedInstrument>();
  /**
   * Per base: the newest trade time emitted and the ids emitted at that time (see `replayGuardMs`): the
   * first id inline, a set only when several trades share that millisecond. Updated in place per trade.
   */
  private readonly watermarks = new Map<string, { time: number; id: string; more: Set<string> | null }>();
  private readonly warnedAt = new Map<string, number>();
  /** Keys of the latest liquidations (insertion-ordered, capped) to drop identical repeats. */
  private readonly recentLiqs = new Set<string>();
  private catalogAt = 0;
  private running = false;
  /** Counted since the metrics last read them (see {@link FeedMetrics.batch}); registered while running. */
  private readonly unreported = { messages: 0, trades: 0, liquidations: 0 };
  private unbatch: (() => void) | null = null;
  private primary: Conn | null = null;
  private candidate: Conn | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private reconnects = 0;
  private connSeq = 0;
  private lastMessageAt: number | null = null;
  private lastTradeTime: number | null = null;
  private gapFrom: number | null = null;
  private everReceived = false;
  /** Venue symbol → instrument for the parsers (subscribed symbols and, once loaded, the venue's whole list). */
  protected readonly lookup: InstrumentLookup = { get: (s) => this.bySymbol.get(s) };

  protected constructor(
    private readonly spec: VenueSpec,
    opts: FeedOptions,
  ) {
    this.venue = spec.venue;
    this.baseUrl = (opts.baseUrl ?? spec.defaultBaseUrl).replace(/\/+$/, "");
    this.liquidations = opts.liquidations ?? true;
    this.source = opts.instruments;
    this.metrics = opts.metrics;
    this.log = (opts.logger ?? rootLogger).child({ component: "feed", venue: spec.venue });
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.staleMs = opts.staleMs ?? 60_000;
    this.heartbeatMs = opts.heartbeatMs ?? spec.heartbeat?.everyMs ?? 0;
    this.backoffMinMs = opts.backoffMinMs ?? 1_000;
    this.backoffMaxMs = Math.max(this.backoffMinMs, opts.backoffMaxMs ?? 30_000);
    this.rotateAfterMs = opts.rotateAfterMs ?? spec.rotateAfterMs;
    this.handshakeTimeoutMs = opts.handshakeTimeoutMs ?? 10_000;
    this.replayGuardMs = opts.replayGuardMs ?? 10_000;
    this.events = new TypedEmitter<FeedEventMap>((err, event) => {
      this.metrics?.errors.inc({ venue: this.venue, kind: "listener" });
      this.log.error({ err, event }, "feed listener threw");
    });
  }

  /** The URL of a new connection carrying `insts` when the venue puts subscriptions in the URL. */
  protected abstract endpoint(insts: readonly FeedInstrument[]): string;
  /** Frames subscribing `insts`; `onOpen` adds connection-wide channels (all-market liquidations). */
  protected abstract subscribeFrames(insts: readonly FeedInstrument[], onOpen: boolean): string[];
  protected abstract unsubscribeFrames(insts: readonly FeedInstrument[]): string[];
  /** The client heartbeat frame, or null when the venue needs none. */
  protected abstract heartbeatFrame(): string | null;
  /** The venue parser (pure, never throws). */
  protected abstract parse(text: string, lookup: InstrumentLookup): ParsedFrame;
  /**
   * The text of one received message, which {@link parse} reads: UTF-8 here; a venue that compresses its frames (gzip)
   * inflates them in its override, which must not throw (an unreadable frame is text the parser rejects).
   */
  protected messageText(data: WebSocket.RawData): string {
    return rawText(data);
  }
  /** False while there is nothing to connect for (Binance without streams). */
  protected canConnect(): boolean {
    return true;
  }
  /** How many bases are subscribed. */
  protected get subscriptionCount(): number {
    return this.subs.size;
  }

  on<K extends keyof FeedEventMap>(event: K, fn: (value: FeedEventMap[K]) => void): () => void {
    return this.events.on(event, fn);
  }

  off<K extends keyof FeedEventMap>(event: K, fn: (value: FeedEventMap[K]) => void): void {
    this.events.off(event, fn);
  }

  /** Starts connecting (and reconnecting until {@link stop}). */
  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.metrics && !this.unbatch) this.unbatch = this.metrics.batch(() => this.report());
    this.connect();
  }

  /** Closes every connection and stops reconnecting. */
  async stop(): Promise<void> {
    this.running = false;
    this.report();
    this.unbatch?.();
    this.unbatch = null;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const conns = [this.primary, this.candidate].filter((c): c is Conn => c !== null);
    this.primary = this.candidate = null;
    await Promise.all(conns.map((c) => this.retire(c)));
  }

  /** Canonical bases currently subscribed. */
  subscriptions(): string[] {
    return [...this.subs.keys()];
  }

  /** Subscribes trades (and per-symbol liquidations) of `bases` on the live connection(s). Never throws. */
  async subscribe(bases: readonly string[]): Promise<SubscribeResult> {
    const out: SubscribeResult = { subscribed: [], unknown: [], rejected: [] };
    const wanted = [...new Set(bases.map((b) => b.trim().toUpperCase()).filter(Boolean))];
    const resolved = await Promise.all(
      wanted.map(async (base) => {
        if (this.subs.has(base)) return { base, inst: this.subs.get(base) };
        try {
          return { base, inst: await this.source.instrument(base) };
        } catch (err) {
          this.log.warn({ err, base }, "instrument lookup failed");
          return { base, inst: undefined };
        }
      }),
    );
    const added: FeedInstrument[] = [];
    for (const { base, inst } of resolved) {
      if (this.subs.has(base)) out.subscribed.push(base);
      else if (!inst) out.unknown.push(base);
      else if (this.subs.size >= this.spec.maxSymbols) out.rejected.push(base);
      else {
        this.subs.set(base, inst);
        this.bySymbol.set(inst.venueSymbol, inst);
        added.push(inst);
        out.subscribed.push(base);
      }
    }
    if (out.rejected.length) this.log.warn({ rejected: out.rejected, max: this.spec.maxSymbols }, "connection symbol limit reached");
    for (const c of this.openConns()) this.cover(c, added);
    if (this.running && !this.primary) this.connect();
    return out;
  }

  /** Unsubscribes `bases` (unknown ones are ignored). */
  unsubscribe(bases: readonly string[]): void {
    const removed: FeedInstrument[] = [];
    for (const b of bases) {
      const base = b.trim().toUpperCase();
      const inst = this.subs.get(base);
      if (!inst) continue;
      this.subs.delete(base);
      this.watermarks.delete(base);
      removed.push(inst);
    }
    for (const c of this.openConns()) this.uncover(c, removed);
  }

  /**
   * Sends the venue's client heartbeat on the live connection now, so that its reply (a message after
   * everything the venue sent before it) shows the stream is alive up to now. False when the venue has no
   * heartbeat frame or no connection is open.
   */
  probe(): boolean {
    const p = this.primary;
    const frame = this.heartbeatFrame();
    if (!p || p.ws.readyState !== WebSocket.OPEN || frame === null) return false;
    p.lastPingAt = this.now();
    this.send(p, [frame]);
    return true;
  }

  /** Live connection state for status and metrics. */
  state(): FeedState {
    const p = this.primary;
    const connected = p !== null && p.ws.readyState === WebSocket.OPEN;
    return {
      venue: this.venue,
      connected,
      connectedSince: connected ? p.openedAt : null,
      lastMessageAt: this.lastMessageAt,
      reconnects: this.reconnects,
      subscribedSymbols: this.subs.size,
      lagMs: this.lastTradeTime === null ? null : Math.max(0, this.now() - this.lastTradeTime),
    };
  }

  // ---- connections ----

  private openConns(): Conn[] {
    return [this.primary, this.candidate].filter((c): c is Conn => c !== null && c.ws.readyState === WebSocket.OPEN);
  }

  private connect(): void {
    if (!this.running || this.primary || this.reconnectTimer || !this.canConnect()) return;
    void this.refreshCatalog();
    this.primary = this.open("primary");
    if (!this.primary) this.scheduleReconnect();
  }

  private open(role: "primary" | "candidate"): Conn | null {
    const insts = [...this.subs.values()];
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.endpoint(insts), { handshakeTimeout: this.handshakeTimeoutMs, perMessageDeflate: false });
    } catch (err) {
      this.metrics?.errors.inc({ venue: this.venue, kind: "socket" });
      this.log.error({ err }, "cannot open websocket");
      return null;
    }
    const conn: Conn = {
      id: ++this.connSeq,
      ws,
      role,
      openedAt: null,
      lastMessageAt: null,
      firstMessageAt: null,
      lastPingAt: 0,
      lastSentAt: 0,
      covered: new Map(this.spec.urlCarriesStreams ? insts.map((i) => [i.base, i]) : []),
      queue: [],
      sendTimer: null,
      timers: [],
    };
    ws.on("open", () => this.onOpen(conn));
    ws.on("message", (data) => this.onMessage(conn, this.messageText(data)));
    ws.on("error", (err) => {
      this.metrics?.errors.inc({ venue: this.venue, kind: "socket" });
      this.warnThrottled("socket", { err: err.message, conn: conn.id }, "websocket error");
    });
    ws.on("close", (code, reason) => this.onClose(conn, code, reason.toString()));
    return conn;
  }

  private onOpen(conn: Conn): void {
    if (conn.role === "retired") return;
    const t = this.now();
    conn.openedAt = t;
    this.log.info({ conn: conn.id, role: conn.role, symbols: this.subs.size }, "connected");
    const stale = [...conn.covered.values()].filter((i) => !this.subs.has(i.base));
    this.uncover(conn, stale);
    this.cover(
      conn,
      [...this.subs.values()].filter((i) => !conn.covered.has(i.base)),
      true,
    );
    const tick = Math.max(10, Math.min(1_000, this.staleMs / 4));
    conn.timers.push(setInterval(() => this.checkStale(conn), tick).unref());
    if (this.spec.heartbeat && this.heartbeatMs > 0) {
      const period = this.spec.heartbeat.idleOnly ? Math.max(10, this.heartbeatMs / 4) : this.heartbeatMs;
      conn.timers.push(setInterval(() => this.beat(conn), period).unref());
    }
    if (conn.role === "primary") this.scheduleRotation(conn);
  }

  private cover(conn: Conn, insts: FeedInstrument[], onOpen = false): void {
    for (const i of insts) conn.covered.set(i.base, i);
    if (insts.length || onOpen) this.send(conn, this.subscribeFrames(insts, onOpen));
  }

  private uncover(conn: Conn, insts: FeedInstrument[]): void {
    const covered = insts.filter((i) => conn.covered.delete(i.base));
    if (covered.length) this.send(conn, this.unsubscribeFrames(covered));
  }

  private onMessage(conn: Conn, text: string): void {
    if (conn.role === "retired") return;
    const t = this.now();
    conn.lastMessageAt = t;
    this.unreported.messages++;
    let parsed: ParsedFrame;
    try {
      parsed = this.parse(text, this.lookup);
    } catch (err) {
      parsed = frame({ error: `parser threw: ${(err as Error).message}` });
    }
    if (parsed.error) {
      this.metrics?.errors.inc({ venue: this.venue, kind: "malformed" });
      this.warnThrottled("malformed", { error: parsed.error, sample: text.slice(0, 200) }, "malformed venue message");
    }
    if (conn.firstMessageAt === null) {
      const good = !parsed.error || parsed.trades.length > 0 || parsed.liquidations.length > 0 || parsed.control !== undefined;
      if (!good) return;
      conn.firstMessageAt = t;
      if (conn.role === "candidate") this.switchOver(conn);
      this.attempt = 0;
      this.everReceived = true;
      if (this.gapFrom !== null && conn === this.primary) {
        const gap: StreamGap = { venue: this.venue, from: this.gapFrom, to: t };
        this.gapFrom = null;
        this.metrics?.gaps.inc({ venue: this.venue });
        this.log.info({ from: gap.from, to: gap.to, ms: gap.to - gap.from }, "stream gap");
        this.events.emit("gap", gap);
      }
    }
    if (conn !== this.primary) return;
    this.lastMessageAt = t;
    if (parsed.control?.type === "venue_error") {
      this.metrics?.errors.inc({ venue: this.venue, kind: "venue_error" });
      this.warnThrottled("venue_error", { message: parsed.control.message }, "venue refused a request");
    } else if (parsed.control?.type === "reconnect") {
      this.log.info({ message: parsed.control.message }, "venue announced a disconnect; rotating");
      this.rotate();
    }
    const trades = this.admit(parsed.trades, conn, t);
    if (trades.length) {
      this.unreported.trades += trades.length;
      this.events.emit("trades", trades);
    }
    const liqs = this.liquidations ? parsed.liquidations.filter((l) => this.firstLiquidation(l)) : [];
    if (liqs.length) {
      this.unreported.liquidations += liqs.length;
      this.events.emit("liquidations", liqs);
    }
  }

  /** False for a liquidation identical to one of the last 500 (overlapping connections repeat snapshots). */
  private firstLiquidation(l: Liquidation): boolean {
    const key = `${l.venueSymbol}|${l.time}|${l.side}|${l.price}|${l.size}`;
    if (this.recentLiqs.has(key)) return false;
    this.recentLiqs.add(key);
    if (this.recentLiqs.size > 500) this.recentLiqs.delete(this.recentLiqs.values().next().value!);
    return true;
  }

  /**
   * Trades of subscribed bases, minus replays of what was already emitted (see `replayGuardMs`): `trades`
   * itself when none is dropped (the usual case: no copy), else a filtered copy. Each trade is judged against
   * the watermarks as they stood before this frame, and only then are they moved: a venue that lists a frame's
   * trades newest first (Bitget) must not have the newest shadow the older ones of the same frame.
   */
  private admit(trades: Trade[], conn: Conn, t: number): Trade[] {
    if (!trades.length) return trades;
    const guard = conn.firstMessageAt !== null && t - conn.firstMessageAt < this.replayGuardMs;
    let out: Trade[] | null = null;
    for (let i = 0; i < trades.length; i++) {
      const tr = trades[i]!;
      if (this.admissible(tr, guard)) out?.push(tr);
      else out ??= trades.slice(0, i);
    }
    const admitted = out ?? trades;
    for (const tr of admitted) this.raiseWatermark(tr);
    return admitted;
  }

  /** Whether trade `tr` is emitted (see {@link admit}): of a subscribed base and, under the guard, newer than its base's watermark. */
  private admissible(tr: Trade, guard: boolean): boolean {
    if (!this.subs.has(tr.base)) return false;
    if (!guard) return true;
    const w = this.watermarks.get(tr.base);
    return !(w && (tr.time < w.time || (tr.time === w.time && (tr.id === w.id || w.more?.has(tr.id) === true))));
  }

  /** Records emitted trade `tr` in its base's watermark (newest time and the ids at that time). */
  private raiseWatermark(tr: Trade): void {
    const w = this.watermarks.get(tr.base);
    if (!w) this.watermarks.set(tr.base, { time: tr.time, id: tr.id, more: null });
    else if (tr.time > w.time) {
      w.time = tr.time;
      w.id = tr.id;
      w.more = null;
    } else if (tr.time === w.time && tr.id !== w.id) (w.more ??= new Set()).add(tr.id);
    if (this.lastTradeTime === null || tr.time > this.lastTradeTime) this.lastTradeTime = tr.time;
  }

  private onClose(conn: Conn, code: number, reason: string): void {
    this.clearTimers(conn);
    if (conn.role === "retired") return;
    const role = conn.role;
    conn.role = "retired";
    this.log.warn({ conn: conn.id, role, code, reason }, "disconnected");
    if (role === "candidate") {
      this.candidate = null;
      const p = this.primary;
      if (this.running && p) p.timers.push(setTimeout(() => this.rotate(), this.backoffMaxMs).unref());
      return;
    }
    this.primary = null;
    // From the newest trade emitted, when it is older than the last message's arrival: a trade the venue made after
    // its last delivered frame but before that frame arrived here was never sent, and is older than the arrival.
    // The backfill's overlap is harmless (trades are counted once by id).
    if (this.everReceived && this.gapFrom === null) this.gapFrom = Math.min(this.lastMessageAt ?? this.now(), this.lastTradeTime ?? Infinity);
    if (!this.running) return;
    this.reconnects++;
    this.metrics?.reconnects.inc({ venue: this.venue });
    const c = this.candidate;
    if (c) {
      // a rotation was under way: its connection takes over (the gap is closed by its first message)
      this.candidate = null;
      c.role = "primary";
      this.primary = c;
      if (c.openedAt !== null) this.scheduleRotation(c);
      return;
    }
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || !this.running) return;
    const cap = Math.min(this.backoffMaxMs, this.backoffMinMs * 2 ** Math.min(this.attempt++, 30));
    const delay = Math.max(this.backoffMinMs, Math.round(cap * (0.5 + 0.5 * this.random())));
    this.log.info({ delayMs: delay, attempt: this.attempt }, "reconnecting");
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay).unref();
  }

  private checkStale(conn: Conn): void {
    const last = conn.lastMessageAt ?? conn.openedAt;
    if (last === null || this.now() - last <= this.staleMs) return;
    this.metrics?.errors.inc({ venue: this.venue, kind: "stale" });
    this.log.warn({ conn: conn.id, role: conn.role, silentMs: this.now() - last }, "connection stale; terminating");
    this.clearTimers(conn);
    conn.ws.terminate();
  }

  private beat(conn: Conn): void {
    const hb = this.spec.heartbeat;
    if (!hb || conn.ws.readyState !== WebSocket.OPEN) return;
    const t = this.now();
    if (hb.idleOnly && t - Math.max(conn.lastMessageAt ?? conn.openedAt ?? 0, conn.lastPingAt) < this.heartbeatMs) return;
    const f = this.heartbeatFrame();
    if (f === null) return;
    conn.lastPingAt = t;
    this.send(conn, [f]);
  }

  // ---- rotation (make-before-break) ----

  private scheduleRotation(conn: Conn): void {
    if (this.rotateAfterMs > 0) conn.timers.push(setTimeout(() => this.rotate(), this.rotateAfterMs).unref());
  }

  /** Opens a candidate connection; it replaces the primary on its first good message. */
  private rotate(): void {
    const p = this.primary;
    if (!this.running || !p || this.candidate || p.ws.readyState !== WebSocket.OPEN) return;
    this.log.info({ conn: p.id }, "rotating connection");
    this.candidate = this.open("candidate");
  }

  private switchOver(cand: Conn): void {
    const old = this.primary;
    cand.role = "primary";
    this.primary = cand;
    this.candidate = null;
    this.metrics?.rotations.inc({ venue: this.venue });
    this.log.info({ from: old?.id, to: cand.id }, "switched to the rotated connection");
    this.scheduleRotation(cand);
    if (old) void this.retire(old);
  }

  private retire(conn: Conn): Promise<void> {
    conn.role = "retired";
    this.clearTimers(conn);
    const ws = conn.ws;
    if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const kill = setTimeout(() => ws.terminate(), 1_000).unref();
      ws.once("close", () => {
        clearTimeout(kill);
        resolve();
      });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000, "bye");
    });
  }

  // ---- plumbing ----

  private send(conn: Conn, frames: string[]): void {
    if (!frames.length) return;
    conn.queue.push(...frames);
    this.drain(conn);
  }

  private drain(conn: Conn): void {
    if (conn.sendTimer) return;
    while (conn.queue.length) {
      if (conn.ws.readyState !== WebSocket.OPEN) {
        conn.queue.length = 0;
        return;
      }
      const wait = conn.lastSentAt + this.spec.sendSpacingMs - Date.now();
      if (this.spec.sendSpacingMs > 0 && wait > 0) {
        conn.sendTimer = setTimeout(() => {
          conn.sendTimer = null;
          this.drain(conn);
        }, wait).unref();
        return;
      }
      conn.ws.send(conn.queue.shift()!, (err) => {
        if (err) this.warnThrottled("send", { err: err.message }, "send failed");
      });
      conn.lastSentAt = Date.now();
    }
  }

  private clearTimers(conn: Conn): void {
    for (const t of conn.timers) clearTimeout(t);
    conn.timers = [];
    if (conn.sendTimer) clearTimeout(conn.sendTimer);
    conn.sendTimer = null;
    conn.queue.length = 0;
  }

  private async refreshCatalog(): Promise<void> {
    if (!this.source.instruments || Date.now() - this.catalogAt < CATALOG_TTL_MS) return;
    this.catalogAt = Date.now();
    try {
      for (const i of await this.source.instruments()) if (!this.bySymbol.has(i.venueSymbol)) this.bySymbol.set(i.venueSymbol, i);
    } catch (err) {
      this.catalogAt = 0;
      this.log.warn({ err }, "instrument list unavailable; liquidations limited to subscribed symbols");
    }
  }

  /** Adds the per-message counts to the metrics (run before each read of them, and on stop). */
  private report(): void {
    const m = this.metrics;
    const u = this.unreported;
    if (!m) return;
    const labels = { venue: this.venue };
    if (u.messages > 0) m.messages.inc(labels, u.messages);
    if (u.trades > 0) m.trades.inc(labels, u.trades);
    if (u.liquidations > 0) m.liquidations.inc(labels, u.liquidations);
    u.messages = u.trades = u.liquidations = 0;
  }

  /** Logs a warning at most once per 10 s per kind (venues can repeat the same problem per message). */
  private warnThrottled(kind: string, obj: object, msg: string): void {
    const t = Date.now();
    if (t - (this.warnedAt.get(kind) ?? 0) < 10_000) return;
    this.warnedAt.set(kind, t);
    this.log.warn(obj, msg);
  }
}
