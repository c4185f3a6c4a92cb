/**
 * Trade frames of the venues added in issue 22 (Gate, Bitget, Deribit, Aster) for the streams bench: each venue's
 * frames as its fixtures hold them (Gate, Bitget and Aster: the venues' documentation examples; Deribit: frames
 * recorded by tardis-node's tests), the trade frames only, replayed pass after pass with new ids of the venue's kind
 * and current times, so that the store counts every trade once, through the parser the feed calls.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { InstrumentLookup, ParsedFrame } from "../src/ingestion/feeds/normalise.js";
import { parseAsterMessage } from "../src/venues/aster/feed-parse.js";
import { parseBitgetMessage } from "../src/venues/bitget/feed-parse.js";
import { parseDeribitMessage } from "../src/venues/deribit/feed-parse.js";
import { parseGateMessage } from "../src/venues/gate/feed-parse.js";

/** The venues of this file. */
export const NEW_STREAM_VENUES = ["gate", "bitget", "deribit", "aster"] as const;
export type NewStreamVenue = (typeof NEW_STREAM_VENUES)[number];

/** One frame as the venue sent it (text), and which venue's parser reads it. */
export interface VenueFrame {
  text: string;
  venue: string;
}

type Payload = Record<string, unknown>;
type Row = Record<string, unknown>;

/** Fixture files (under `src/venues/<venue>/fixtures/`, one frame per line) whose trade frames are replayed. */
const FILES: Record<NewStreamVenue, string> = {
  gate: "ws_frames_docs_example.ndjson",
  bitget: "ws_v2_public_docs_examples.ndjson",
  deribit: "ws_frames.ndjson",
  aster: "ws_frames_docs_example.ndjson",
};

/** The parsers the feeds call (src/venues/<venue>/feed.ts). */
export const NEW_VENUE_PARSERS: Record<NewStreamVenue, (text: string, lookup: InstrumentLookup) => ParsedFrame> = {
  gate: parseGateMessage,
  bitget: parseBitgetMessage,
  deribit: parseDeribitMessage,
  aster: parseAsterMessage,
};

/**
 * New ids and times for a frame's trades: increasing integers where the venue's ids are sequences (Gate `id`,
 * Aster `a`, both on the sequence ledger), 19-digit strings on Bitget and `trade_seq`/`trade_id` on Deribit (both
 * kept in id sets).
 */
const RENUMBER: Record<NewStreamVenue, (f: Payload, seq: () => number, now: number) => Payload> = {
  gate: (f, seq, now) => ({ ...f, time_ms: now, result: (f.result as Row[]).map((t) => ({ ...t, id: seq(), create_time: Math.floor(now / 1000), create_time_ms: now })) }),
  bitget: (f, seq, now) => ({ ...f, ts: now, data: (f.data as Row[]).map((t) => ({ ...t, ts: String(now), tradeId: String(10n ** 18n + BigInt(seq())) })) }),
  deribit: (f, seq, now) => {
    const params = f.params as { channel: string; data: Row[] };
    return {
      ...f,
      params: {
        ...params,
        data: params.data.map((t) => {
          const n = seq();
          return { ...t, timestamp: now, trade_seq: n, trade_id: String(n) };
        }),
      },
    };
  },
  aster: (f, seq, now) => ("data" in f ? { ...f, data: { ...(f.data as Row), E: now, T: now, a: seq() } } : { ...f, E: now, T: now, a: seq() }),
};

/** A venue's recorded trade frames, replayed as a stream that goes on (see the file header). */
export class FixtureTape {
  #seq = 1_000_000;
  readonly #next = () => this.#seq++;

  constructor(
    readonly venue: NewStreamVenue,
    private readonly templates: readonly Payload[],
  ) {}

  /** Recorded trade frames in one pass. */
  get frames(): number {
    return this.templates.length;
  }

  /** The text of the next `passes` passes, times set to `now` (epoch ms). */
  next(passes: number, now: number): VenueFrame[] {
    const out: VenueFrame[] = [];
    for (let k = 0; k < passes; k++) for (const f of this.templates) out.push({ venue: this.venue, text: JSON.stringify(RENUMBER[this.venue](f, this.#next, now)) });
    return out;
  }
}

/** Each new venue's tape: the lines of its fixture file that its parser reads trades from. */
export function fixtureTapes(lookup: InstrumentLookup): Record<NewStreamVenue, FixtureTape> {
  const tape = (venue: NewStreamVenue) => {
    const lines = readFileSync(resolve(process.cwd(), `src/venues/${venue}/fixtures/${FILES[venue]}`), "utf8")
      .split("\n")
      .filter(Boolean);
    const trades = lines.filter((l) => NEW_VENUE_PARSERS[venue](l, lookup).trades.length > 0).map((l) => JSON.parse(l) as Payload);
    if (!trades.length) throw new Error(`no trade frame in src/venues/${venue}/fixtures/${FILES[venue]}`);
    return new FixtureTape(venue, trades);
  };
  return Object.fromEntries(NEW_STREAM_VENUES.map((v) => [v, tape(v)])) as Record<NewStreamVenue, FixtureTape>;
}
