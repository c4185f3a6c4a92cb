import { z } from "zod";
import type { PerpInstrument } from "../../venues/perp/types.js";
import { Num, perCoin, scale } from "../../venues/wire.js";
import type { Liquidation, StreamVenue, Trade } from "../types.js";

/*
 * What the four venue parsers (WS frames and REST trade pages) share: the instrument context, the
 * parse result, and the unit conversions of `src/ingestion/types.ts` (prices per ONE coin, sizes in coins:
 * venue size × contractSize × multiplier; OKX has multiplier 1 and contractSize ctVal × ctMult, the others
 * contractSize 1 and multiplier 1000 for `1000PEPEUSDT` / `kPEPE`).
 */

/** The part of a {@link PerpInstrument} the parsers need. */
export type FeedInstrument = Pick<PerpInstrument, "base" | "venueSymbol" | "multiplier" | "contractSize">;

/** Instruments by venue symbol (`BTCUSDT`, `BTC-USDT-SWAP`, `kPEPE`); a `Map` fits. */
export interface InstrumentLookup {
  get(venueSymbol: string): FeedInstrument | undefined;
}

/** Where feeds and backfills resolve canonical bases: a `PerpVenueClient` fits. */
export interface InstrumentSource {
  instrument(base: string): Promise<FeedInstrument | undefined>;
  /** Every listed instrument (used to keep all-market liquidations of known instruments). */
  instruments?(): Promise<FeedInstrument[]>;
}

/** A non-data frame worth knowing about. */
export interface FrameControl {
  /** `ack`: (un)subscribe or request answered; `pong`: heartbeat answer; `venue_error`: the venue refused a request; `reconnect`: the venue announced a forced disconnect. */
  type: "ack" | "pong" | "venue_error" | "reconnect";
  message?: string;
}

/** What one raw message (or REST page) holds after normalisation. Parsers never throw. */
export interface ParsedFrame {
  trades: Trade[];
  liquidations: Liquidation[];
  control?: FrameControl;
  /** Set when the frame (or some of its rows) was malformed; the arrays keep the rows that parsed. */
  error?: string;
  /** Rows dropped because their venue symbol is not in the lookup (other markets, unlisted symbols). */
  skipped: number;
}

/** An empty {@link ParsedFrame}, optionally with control info or an error. */
export function frame(extra: Partial<ParsedFrame> = {}): ParsedFrame {
  return { trades: [], liquidations: [], skipped: 0, ...extra };
}

/** A {@link ParsedFrame} of trades only: {@link frame}`({ trades, skipped })` without the spread, for the per-message path. */
export function tradeFrame(trades: Trade[], skipped = 0): ParsedFrame {
  return { trades, liquidations: [], skipped };
}

/**
 * A strictly positive decimal sent as a string or a number → number; undefined for anything else, which
 * then goes through the schema ({@link Pos}) for its error. Same value as {@link Pos} where both accept.
 */
export function positiveDecimal(v: unknown): number | undefined {
  const n = typeof v === "string" ? decimal(v) : typeof v === "number" ? v : Number.NaN;
  return n > 0 && n < Infinity ? n : undefined;
}

/** Exact powers of ten up to 10^15 (every one is a double). */
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/**
 * `Number(s)`, bit for bit, faster for the plain decimals venues send ("0.69067", "369", "65114.20"): up
 * to 15 digits with at most one dot are read as an integer m and a scale k, and m / 10^k is one correctly
 * rounded division of two exact doubles, hence the correctly rounded value of the decimal, as `Number`
 * gives (Clinger's fast path). Anything else (signs, exponents, spaces, more digits) goes to `Number`.
 */
export function decimal(s: string): number {
  const len = s.length;
  let m = 0;
  let digits = 0;
  let scale = -1;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      digits++;
    } else if (c === 46 /* "." */ && scale < 0) scale = len - 1 - i;
    else return Number(s);
  }
  if (digits === 0 || digits > 15) return Number(s);
  return scale <= 0 ? m : m / POW10[scale]!;
}

/** An epoch-ms time sent as a positive integer number (the venues' wire type); undefined otherwise (see {@link Time}). */
export function epochMs(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined;
}

/** A venue id sent as a number or a non-empty string → string; undefined otherwise (see {@link Id}). */
export function idOf(v: unknown): string | undefined {
  return typeof v === "string" ? (v === "" ? undefined : v) : typeof v === "number" && Number.isFinite(v) ? String(v) : undefined;
}

/** JSON text (or an already parsed value) → value, or an error string. */
export function decode(raw: unknown): { ok: true; value: unknown } | { ok: false; error: string } {
  if (typeof raw !== "string") return { ok: true, value: raw };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false, error: `not JSON: ${JSON.stringify(raw.slice(0, 60))}` };
  }
}

/** The first issues of a schema failure, as one line. */
export function zodIssues(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
    .join("; ");
}

/** A venue id sent as a number or a non-empty string; becomes a string. */
export const Id = z.union([z.number(), z.string().min(1)]).transform((v) => String(v));
/** An epoch-ms time sent as a number or a string. */
export const Time = Num.refine((n) => n > 0 && Number.isInteger(n), "expected epoch ms");
/** A strictly positive decimal (prices, sizes). */
export const Pos = Num.refine((n) => n > 0, "expected a positive decimal");

/** Venue size → base coins. */
export function coinSize(size: number, inst: FeedInstrument): number {
  return scale(scale(size, inst.contractSize), inst.multiplier);
}

/** Venue price → USD per ONE coin. */
export function coinPrice(price: number, inst: FeedInstrument): number {
  return perCoin(price, inst.multiplier);
}

/** Builds a normalised {@link Trade} from venue units. */
export function makeTrade(venue: StreamVenue, inst: FeedInstrument, r: { time: number; price: number; size: number; side: "buy" | "sell"; id: string }): Trade {
  return newTrade(venue, inst, r.time, r.price, r.size, r.side, r.id);
}

/**
 * {@link makeTrade} with positional arguments, for the per-message fast paths (no intermediate row object).
 * Every trade is built here, so all share one object shape and the store's accesses stay monomorphic.
 */
export function newTrade(venue: StreamVenue, inst: FeedInstrument, time: number, price: number, size: number, side: "buy" | "sell", id: string): Trade {
  return { venue, base: inst.base, time, price: coinPrice(price, inst), size: coinSize(size, inst), side, id };
}

/** Builds a normalised {@link Liquidation} from venue units. */
export function makeLiquidation(venue: StreamVenue, inst: FeedInstrument, r: { time: number; price: number; size: number; side: "long" | "short" }): Liquidation {
  const price = coinPrice(r.price, inst);
  const size = coinSize(r.size, inst);
  return { venue, base: inst.base, venueSymbol: inst.venueSymbol, time: r.time, side: r.side, price, size, valueUsd: Number((price * size).toPrecision(15)) };
}

/**
 * Parses `rows` one by one with `schema` and maps the valid ones through `build` (undefined = unknown
 * instrument, counted as skipped). Invalid rows are reported in `error`, the others kept.
 */
export function eachRow<S extends z.ZodType, T>(rows: readonly unknown[], schema: S, build: (row: z.output<S>) => T | undefined): { out: T[]; skipped: number; error?: string } {
  const out: T[] = [];
  let skipped = 0;
  let bad = 0;
  let first: string | undefined;
  for (const [i, raw] of rows.entries()) {
    const r = schema.safeParse(raw);
    if (!r.success) {
      bad++;
      first ??= `row ${i}: ${zodIssues(r.error)}`;
      continue;
    }
    const v = build(r.data);
    if (v === undefined) skipped++;
    else out.push(v);
  }
  return bad ? { out, skipped, error: `${bad} malformed row(s); ${first}` } : { out, skipped };
}
