/**
 * Simulated Binance USDⓈ-M futures websocket (`wss://fstream.binance.com`, base `wsUrls.binance`);
 * Binance docs: https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams.
 *
 * Paths (after the base):
 * - `/market/stream?streams=a/b` — combined: every payload wrapped as `{"stream":"<name>","data":{…}}`;
 * - `/market/ws` or `/market/ws/<a>/<b>` — raw payloads;
 * - `/public/...`, `/private/...` — handshake and SUBSCRIBE acks, but no data (depth/bookTicker/user data are not
 *   simulated; market streams are not served there);
 * - legacy `/ws`, `/ws/<stream>`, `/stream?streams=…` — the handshake completes, then NOTHING is ever sent (no data,
 *   no acks), exactly like the paths Binance retired on 2026-04-23.
 * Live control: `{"method":"SUBSCRIBE"|"UNSUBSCRIBE","params":[…],"id":1}` → `{"result":null,"id":1}`;
 * `LIST_SUBSCRIPTIONS` → `{"result":[…],"id":…}`; `SET_PROPERTY ["combined",bool]`, `GET_PROPERTY ["combined"]`.
 * Errors: `{"error":{"code":<n>,"msg":"…"},"id":…}`.
 * Streams with data (names are case-sensitive: lowercase symbol): `<symbol>@aggTrade` (one `aggTrade` event per
 * message, `m` = buyer is maker), `<symbol>@forceOrder` and `!forceOrder@arr` (one `forceOrder` event object per
 * message, at most one per symbol per second; `o.S` SELL = a long was liquidated). Other names are acknowledged and
 * stay silent. `1000PEPEUSDT` prices and quantities are per 1000 coins. The server pings every 3 min (protocol ping)
 * and closes a connection whose pongs stop for 10 min, and every connection after 24 h.
 */
import { binanceAggFields, type TapeLiquidation } from "../tape.js";
import type { PerpInstrumentSpec } from "../perp-model.js";
import { ReplayCursor, type ConnIO, type Session, type SessionEnv } from "./session.js";

/** Where a Binance connection landed. */
export interface BinanceRoute {
  readonly kind: "market" | "public" | "private" | "legacy";
  readonly combined: boolean;
  readonly streams: readonly string[];
}

/** Parses the path after the Binance base; null = not a Binance websocket path (404). */
export function binanceRoute(rest: string, query: URLSearchParams): BinanceRoute | null {
  let seg = rest.split("/").filter((s) => s !== "");
  let kind: BinanceRoute["kind"] = "legacy";
  const head = seg[0];
  if (head === "market" || head === "public" || head === "private") {
    kind = head;
    seg = seg.slice(1);
  }
  const decode = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  if (seg[0] === "stream" && seg.length === 1) {
    const raw = query.get("streams") ?? "";
    return { kind, combined: true, streams: raw.split("/").filter((s) => s !== "") };
  }
  if (seg[0] === "ws") return { kind, combined: false, streams: seg.slice(1).map(decode) };
  if (kind === "private" && seg.length <= 1) return { kind, combined: false, streams: [] };
  return null;
}

const METHODS = ["SUBSCRIBE", "UNSUBSCRIBE", "LIST_SUBSCRIPTIONS", "SET_PROPERTY", "GET_PROPERTY"];

type Parsed = { kind: "aggTrade"; inst: PerpInstrumentSpec } | { kind: "forceOrder"; inst: PerpInstrumentSpec } | { kind: "forceOrderAll" } | { kind: "none" };

export class BinanceSession implements Session {
  readonly #subs = new Map<string, number>();
  readonly #parsed = new Map<string, Parsed>();
  #combined: boolean;
  readonly #replay: ReplayCursor | undefined;

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
    private readonly route: BinanceRoute,
  ) {
    this.#combined = route.combined;
    this.#replay = route.kind === "market" && env.replay ? new ReplayCursor(env.replay) : undefined;
    if (route.kind === "legacy") return;
    const now = env.clock.now();
    for (const s of route.streams) this.#subs.set(s, now);
    if (route.streams.length > 0) this.#replay?.start(io.elapsed());
  }

  /** True on a retired (silent) path. */
  get legacy(): boolean {
    return this.route.kind === "legacy";
  }

  #parse(name: string, now: number): Parsed {
    let p = this.#parsed.get(name);
    if (p) return p;
    p = { kind: "none" };
    if (this.route.kind === "market") {
      if (name === "!forceOrder@arr") p = { kind: "forceOrderAll" };
      const m = /^([a-z0-9_]+)@(aggTrade|forceOrder)$/.exec(name);
      if (m) {
        const inst = this.env.perp.instrument("binance", (m[1] as string).toUpperCase(), now);
        if (inst) p = m[2] === "aggTrade" ? { kind: "aggTrade", inst } : { kind: "forceOrder", inst };
      }
    }
    this.#parsed.set(name, p);
    return p;
  }

  #reply(obj: Record<string, unknown>): void {
    this.io.sendReply(JSON.stringify(obj));
  }

  #error(code: number, msg: string, id: unknown): void {
    this.#reply({ error: { code, msg }, id: id ?? null });
  }

  onMessage(text: string): void {
    if (this.route.kind === "legacy") return; // retired path: silent
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.#error(3, "Invalid JSON: expected value at line 1 column 1", null);
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
      return this.#error(2, "Invalid request: expected an object", null);
    }
    const m = msg as { method?: unknown; params?: unknown; id?: unknown };
    const id = m.id;
    if (id !== undefined && id !== null && !(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id) && id >= 0))) {
      return this.#error(2, "Invalid request: request ID must be an unsigned integer", null);
    }
    if (typeof m.method !== "string") return this.#error(2, "Invalid request: missing field `method`", id);
    const params = m.params;
    switch (m.method) {
      case "SUBSCRIBE":
      case "UNSUBSCRIBE": {
        if (!Array.isArray(params) || !params.every((p) => typeof p === "string")) {
          return this.#error(2, "Invalid request: invalid type: expected a sequence of strings for `params`", id);
        }
        const now = this.env.clock.now();
        for (const s of params as string[]) {
          if (m.method === "SUBSCRIBE") {
            if (!this.#subs.has(s)) this.#subs.set(s, now);
          } else this.#subs.delete(s);
        }
        if (m.method === "SUBSCRIBE" && params.length > 0) this.#replay?.start(this.io.elapsed());
        return this.#reply({ result: null, id: id ?? null });
      }
      case "LIST_SUBSCRIPTIONS":
        return this.#reply({ result: [...this.#subs.keys()], id: id ?? null });
      case "SET_PROPERTY": {
        if (!Array.isArray(params) || params[0] !== "combined" || typeof params[1] !== "boolean") {
          return this.#error(1, "Invalid value type: expected Boolean", id);
        }
        this.#combined = params[1];
        return this.#reply({ result: null, id: id ?? null });
      }
      case "GET_PROPERTY": {
        if (!Array.isArray(params) || params[0] !== "combined") return this.#error(0, "Unknown property", id);
        return this.#reply({ result: this.#combined, id: id ?? null });
      }
      default:
        return this.#error(2, `Invalid request: unknown variant \`${m.method}\`, expected one of ${METHODS.map((x) => `\`${x}\``).join(", ")}`, id);
    }
  }

  #send(stream: string, payload: string): void {
    this.io.sendData(this.#combined ? `{"stream":${JSON.stringify(stream)},"data":${payload}}` : payload);
  }

  #forceOrder(l: TapeLiquidation, now: number): string {
    return JSON.stringify({
      e: "forceOrder",
      E: now,
      o: {
        s: l.inst.symbol,
        S: l.side === "long" ? "SELL" : "BUY",
        o: "LIMIT",
        f: "IOC",
        q: l.sz,
        p: l.px,
        ap: l.px,
        X: "FILLED",
        l: l.sz,
        z: l.sz,
        T: l.time,
      },
    });
  }

  tick(now: number, elapsedMs: number): void {
    if (this.route.kind === "legacy") return;
    const { tape } = this.env;
    const to = now + 1;
    for (const [stream, cursor] of this.#subs) {
      if (to <= cursor) continue;
      this.#subs.set(stream, to);
      const p = this.#parse(stream, now);
      if (p.kind === "aggTrade") {
        for (const t of tape.tradesOf(p.inst, cursor, to)) {
          const a = binanceAggFields(t);
          this.#send(stream, JSON.stringify({ e: "aggTrade", E: now, a: a.a, s: p.inst.symbol, p: a.p, q: a.q, f: a.f, l: a.l, T: a.T, m: a.m }));
        }
      } else if (p.kind === "forceOrder") {
        for (const l of tape.liquidationsOf(p.inst, cursor, to)) this.#send(stream, this.#forceOrder(l, now));
      } else if (p.kind === "forceOrderAll") {
        const all = this.env.perp
          .instruments("binance", now)
          .filter((i) => i.target)
          .flatMap((i) => tape.liquidationsOf(i, cursor, to))
          .sort((a, b) => a.time - b.time);
        for (const l of all) this.#send(stream, this.#forceOrder(l, now));
      }
    }
    if (this.#replay) {
      // A recording plays only on a stream the model does not serve: it never silences, nor adds to, the simulated present.
      for (const f of this.#replay.due(elapsedMs, (k) => this.#subs.has(k) && this.#parse(k, now).kind === "none")) {
        this.io.sendData(this.#combined ? f.text : f.inner);
      }
    }
  }

  malformedSample(): string {
    return '{"stream":"btcusdt@aggTrade","data":{"e":"aggTrade","E":';
  }
}
