/**
 * Simulated Aster futures websocket (`wss://fstream.asterdex.com`, base `wsUrls.aster`); Aster docs:
 * https://github.com/asterdex/api-docs (aster-finance-futures-api.md, "Websocket Market Streams"), Binance's protocol.
 *
 * Paths (after the base): `/stream?streams=a/b` — combined, every payload wrapped as `{"stream":"<name>","data":{…}}`;
 * `/ws` or `/ws/<a>/<b>` — raw payloads. Live control: `{"method":"SUBSCRIBE"|"UNSUBSCRIBE","params":[…],"id":1}` →
 * `{"result":null,"id":1}`; `LIST_SUBSCRIPTIONS`; `SET_PROPERTY ["combined",bool]`, `GET_PROPERTY ["combined"]`.
 * Errors as the docs' table lists them: a bare `{"code":<n>,"msg":"…"}`.
 * Streams with data (lowercase symbol): `<symbol>@aggTrade` (one `aggTrade` event per message in the docs' key order,
 * `m` = buyer is maker), `<symbol>@forceOrder` and `!forceOrder@arr` (one `forceOrder` event per message, at most one
 * per symbol per second; `o.S` SELL = a long was liquidated). Other names are acknowledged and stay silent.
 * Keepalive (run by the hub): a protocol ping every 5 min, close after 15 min without a pong, and after 24 h.
 */
import { asterAggFields, type TapeLiquidation } from "../tape.js";
import type { PerpInstrumentSpec } from "../perp-model.js";
import type { ConnIO, Session, SessionEnv } from "./session.js";

/** Where an Aster connection landed: combined or raw, and the streams named in the URL. */
export interface AsterRoute {
  readonly combined: boolean;
  readonly streams: readonly string[];
}

/** Parses the path after the Aster base; null = not an Aster websocket path (404). */
export function asterRoute(rest: string, query: URLSearchParams): AsterRoute | null {
  const seg = rest.split("/").filter((s) => s !== "");
  if (seg.length === 1 && seg[0] === "stream") return { combined: true, streams: (query.get("streams") ?? "").split("/").filter((s) => s !== "") };
  if (seg[0] === "ws") return { combined: false, streams: seg.slice(1).map((s) => decodeURIComponent(s)) };
  return null;
}

const METHODS = ["SUBSCRIBE", "UNSUBSCRIBE", "LIST_SUBSCRIPTIONS", "SET_PROPERTY", "GET_PROPERTY"];

type Parsed = { kind: "aggTrade" | "forceOrder"; inst: PerpInstrumentSpec } | { kind: "forceOrderAll" } | { kind: "none" };

export class AsterSession implements Session {
  /** Subscribed stream → sim time up to which it was pushed. */
  readonly #subs = new Map<string, number>();
  readonly #parsed = new Map<string, Parsed>();
  #combined: boolean;

  constructor(
    private readonly io: ConnIO,
    private readonly env: SessionEnv,
    route: AsterRoute,
  ) {
    this.#combined = route.combined;
    const now = env.clock.now();
    for (const s of route.streams) this.#subs.set(s, now);
  }

  #parse(name: string, now: number): Parsed {
    let p = this.#parsed.get(name);
    if (p) return p;
    p = { kind: "none" };
    if (name === "!forceOrder@arr") p = { kind: "forceOrderAll" };
    const m = /^([a-z0-9_]+)@(aggTrade|forceOrder)$/.exec(name);
    const inst = m ? this.env.perp.instrument("aster", (m[1] as string).toUpperCase(), now) : undefined;
    if (m && inst) p = { kind: m[2] as "aggTrade" | "forceOrder", inst };
    this.#parsed.set(name, p);
    return p;
  }

  #reply(obj: Record<string, unknown>): void {
    this.io.sendReply(JSON.stringify(obj));
  }

  #error(code: number, msg: string): void {
    this.#reply({ code, msg });
  }

  onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.#error(3, "Invalid JSON: expected value at line 1 column 1");
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return this.#error(2, "Invalid request: expected an object");
    const { method, params, id } = msg as { method?: unknown; params?: unknown; id?: unknown };
    if (!(typeof id === "number" && Number.isSafeInteger(id) && id >= 0)) return this.#error(2, "Invalid request: request ID must be an unsigned integer");
    if (typeof method !== "string") return this.#error(2, "Invalid request: missing field `method`");
    switch (method) {
      case "SUBSCRIBE":
      case "UNSUBSCRIBE": {
        if (!Array.isArray(params) || !params.every((p) => typeof p === "string")) return this.#error(2, "Invalid request: too many parameters");
        const now = this.env.clock.now();
        for (const s of params as string[]) {
          if (method === "UNSUBSCRIBE") this.#subs.delete(s);
          else if (!this.#subs.has(s)) this.#subs.set(s, now);
        }
        return this.#reply({ result: null, id });
      }
      case "LIST_SUBSCRIPTIONS":
        return this.#reply({ result: [...this.#subs.keys()], id });
      case "SET_PROPERTY":
        if (!Array.isArray(params) || params[0] !== "combined") return this.#error(0, "Unknown property");
        if (typeof params[1] !== "boolean") return this.#error(1, "Invalid value type: expected Boolean");
        this.#combined = params[1];
        return this.#reply({ result: null, id });
      case "GET_PROPERTY":
        if (!Array.isArray(params) || params[0] !== "combined") return this.#error(0, "Unknown property");
        return this.#reply({ result: this.#combined, id });
      default:
        return this.#error(2, `Invalid request: unknown variant ${method}, expected one of ${METHODS.map((x) => `\`${x}\``).join(", ")}`);
    }
  }

  #send(stream: string, payload: string): void {
    this.io.sendData(this.#combined ? `{"stream":${JSON.stringify(stream)},"data":${payload}}` : payload);
  }

  #forceOrder(l: TapeLiquidation, now: number): string {
    const o = { s: l.inst.symbol, S: l.side === "long" ? "SELL" : "BUY", o: "LIMIT", f: "IOC", q: l.sz, p: l.px, ap: l.px, X: "FILLED", l: l.sz, z: l.sz, T: l.time };
    return JSON.stringify({ e: "forceOrder", E: now, o });
  }

  tick(now: number): void {
    const { tape } = this.env;
    const to = now + 1;
    for (const [stream, cursor] of this.#subs) {
      if (to <= cursor) continue;
      this.#subs.set(stream, to);
      const p = this.#parse(stream, now);
      if (p.kind === "aggTrade") {
        for (const t of tape.tradesOf(p.inst, cursor, to)) {
          const a = asterAggFields(t);
          this.#send(stream, JSON.stringify({ e: "aggTrade", E: now, s: p.inst.symbol, a: a.a, p: a.p, q: a.q, f: a.f, l: a.l, T: a.T, m: a.m }));
        }
      } else if (p.kind === "forceOrder") {
        for (const l of tape.liquidationsOf(p.inst, cursor, to)) this.#send(stream, this.#forceOrder(l, now));
      } else if (p.kind === "forceOrderAll") {
        const all = this.env.perp
          .instruments("aster", now)
          .filter((i) => i.target)
          .flatMap((i) => tape.liquidationsOf(i, cursor, to))
          .sort((a, b) => a.time - b.time);
        for (const l of all) this.#send(stream, this.#forceOrder(l, now));
      }
    }
  }

  malformedSample(): string {
    return '{"stream":"btcusdt@aggTrade","data":{"e":"aggTrade","E":';
  }
}
