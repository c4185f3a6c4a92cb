import { existsSync, readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import type { FeedInstrument, InstrumentLookup, ParsedFrame } from "../../src/ingestion/feeds/normalise.js";
import { parseBinanceJson, parseBinanceMessage, scanBinanceAggTrade } from "../../src/venues/binance/feed-parse.js";
import { parseBybitJson, parseBybitMessage, scanBybitPublicTrade } from "../../src/venues/bybit/feed-parse.js";
import { prng } from "../helpers/prng.js";

/*
 * The frame-layout scanners (src/ingestion/feeds/frame-layout.ts and the venue layouts in src/venues/<venue>/feed-parse.ts) against the JSON.parse path
 * they stand in for: on every recorded frame, and on frames mutated at random, the parser's answer must be
 * the one JSON.parse and the schemas give for the same text, trades deep-equal, errors and skips included.
 */

type Parse = (raw: unknown, lookup: InstrumentLookup) => ParsedFrame;
type Scan = (text: string, lookup: InstrumentLookup) => ParsedFrame | undefined;
interface Venue {
  name: "binance" | "bybit";
  /** The production parser (scanner, else JSON.parse path). */
  parse: Parse;
  scan: Scan;
  /** The JSON.parse path alone: the reference. */
  json: Parse;
}
const BINANCE: Venue = { name: "binance", parse: parseBinanceMessage, scan: scanBinanceAggTrade, json: parseBinanceJson };
const BYBIT: Venue = { name: "bybit", parse: parseBybitMessage, scan: scanBybitPublicTrade, json: parseBybitJson };
const reference = (v: Venue, text: string, lookup: InstrumentLookup): ParsedFrame => v.json(text, lookup);

/** Every symbol maps to an instrument (as the bench's lookup), with a multiplier for 1000-prefixed ones. */
function anyInstrument(): InstrumentLookup {
  const known = new Map<string, FeedInstrument>();
  return {
    get(venueSymbol: string): FeedInstrument {
      let inst = known.get(venueSymbol);
      if (!inst) {
        const multiplier = venueSymbol.startsWith("1000") ? 1000 : 1;
        known.set(venueSymbol, (inst = { base: venueSymbol.replace(/^1000|USDT$/g, ""), venueSymbol, multiplier, contractSize: 1 }));
      }
      return inst;
    },
  };
}
/** A few symbols only: the rest are skipped. */
const PARTIAL: InstrumentLookup = new Map<string, FeedInstrument>([
  ["BTCUSDT", { base: "BTC", venueSymbol: "BTCUSDT", multiplier: 1, contractSize: 1 }],
  ["ETHUSDT", { base: "ETH", venueSymbol: "ETHUSDT", multiplier: 1, contractSize: 1 }],
  ["SANDUSDT", { base: "SAND", venueSymbol: "SANDUSDT", multiplier: 1000, contractSize: 1 }],
  ["BATUSDT", { base: "BAT", venueSymbol: "BATUSDT", multiplier: 1, contractSize: 0.1 }],
]);
const LOOKUPS: Array<[string, InstrumentLookup]> = [
  ["every symbol known", anyInstrument()],
  ["some symbols known", PARTIAL],
];

const here = (p: string) => new URL(`../../${p}`, import.meta.url);
/** The real-data recordings the bench reads (MARKETGATE_REAL_DATA, else a folder beside the checkout), when present. */
const SHARED = process.env.MARKETGATE_REAL_DATA ?? `${resolve(process.cwd(), "../shared/data/real")}/`;

/**
 * The frames of an `.ndjson` recording as text: recorder lines (`{"dir":"recv","data":…}`) give their
 * received payload, other lines are a payload each. The payload is serialised again with its keys in the
 * recorded order, as the venue sent it (what bench/streams.ts does too).
 */
function recorded(path: string | URL): string[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .flatMap((l) => {
      const v = JSON.parse(l) as { dir?: string; data?: unknown };
      if (v.dir !== undefined) return v.dir === "recv" ? [JSON.stringify(v.data)] : [];
      return [JSON.stringify(v)];
    });
}

/** The recordings of a venue: in the repository (simulator, fixtures), and the shared ones when present. */
function recordings(venue: Venue["name"]): Array<{ file: string; frames: string[] }> {
  const files = [
    ...readdirSync(here(`src/sim/recordings/${venue}`))
      .filter((f) => f.endsWith(".ndjson"))
      .map((f) => here(`src/sim/recordings/${venue}/${f}`).pathname),
    ...readdirSync(here(`src/venues/${venue}/fixtures`))
      .filter((f) => f.endsWith(".ndjson"))
      .map((f) => here(`src/venues/${venue}/fixtures/${f}`).pathname),
    ...(existsSync(`${SHARED}${venue}`)
      ? readdirSync(`${SHARED}${venue}`)
          .filter((f) => f.endsWith(".ndjson"))
          .map((f) => `${SHARED}${venue}/${f}`)
      : []),
  ];
  return files.map((file) => ({ file, frames: recorded(file) }));
}

/**
 * The trade frames of a recording in the layout the feeds receive: Binance USDⓈ-M `aggTrade` with its
 * aggregate id, Bybit v5 linear `publicTrade` (the recordings also hold spot frames, `ts` before `type` and
 * rows from `i`, which no feed subscribes to: the scanner leaves those to JSON.parse).
 */
const isTradeFrame: Record<Venue["name"], (text: string) => boolean> = {
  binance: (t) => t.includes('"e":"aggTrade"') && t.includes('"a":'),
  bybit: (t) => /^\{"topic":"publicTrade\.[^"]*","type":"[^"]*","ts":\d+,"data":\[\{"T":/.test(t),
};

describe.each([BINANCE, BYBIT])("$name frame scanner on the recordings", (v) => {
  const recs = recordings(v.name);

  it("has recordings with trade frames in the venue's layout", () => {
    expect(recs.flatMap((r) => r.frames).filter(isTradeFrame[v.name]).length).toBeGreaterThan(100);
  });

  it.each(LOOKUPS)("gives the JSON.parse path's answer on every recorded frame (%s), reading every trade frame itself", (_, lookup) => {
    let scanned = 0;
    for (const { file, frames } of recs) {
      for (const text of frames) {
        const want = reference(v, text, lookup);
        expect(v.parse(text, lookup), `${file}: ${text.slice(0, 120)}`).toStrictEqual(want);
        const s = v.scan(text, lookup);
        if (s !== undefined) {
          scanned++;
          expect(s).toStrictEqual(want);
        }
        // The recorder's own files are the venue's current layout: every trade frame takes the scanner.
        if (file.includes("cryptofeed") && isTradeFrame[v.name](text)) expect(s, `${file}: ${text.slice(0, 120)}`).toBeDefined();
      }
    }
    expect(scanned).toBeGreaterThan(100);
  });

  it("also reads Binance raw payloads (not combined) and falls back for parsed values", () => {
    if (v.name !== "binance") return;
    const lookup = anyInstrument();
    const combined = recs
      .flatMap((r) => r.frames)
      .filter(isTradeFrame.binance)
      .filter((t) => t.startsWith('{"stream":'));
    expect(combined.length).toBeGreaterThan(100);
    for (const text of combined) {
      const raw = JSON.stringify((JSON.parse(text) as { data: unknown }).data);
      expect(scanBinanceAggTrade(raw, lookup)).toStrictEqual(scanBinanceAggTrade(text, lookup));
      expect(parseBinanceMessage(raw, lookup)).toStrictEqual(reference(BINANCE, raw, lookup));
    }
  });
});

describe("frame scanners on hand-made deviations", () => {
  const lookup = anyInstrument();
  const B =
    '{"stream":"btcusdt@aggTrade","data":{"e":"aggTrade","E":1617647797640,"a":9445517,"s":"BTCUSDT","p":"0.69067","q":"369","f":12821738,"l":12821738,"T":1617647797485,"m":true}}';
  const Y =
    '{"topic":"publicTrade.ETHUSDT","type":"snapshot","ts":1786310820347,"data":[{"T":1786310820346,"s":"ETHUSDT","S":"Buy","v":"0.01","p":"1922.50","L":"PlusTick","i":"19d7df56-4f10-5290-a969-d9d9f2c74cc3","BT":false,"RPI":false,"seq":430879434439},{"T":1786310820346,"s":"ETHUSDT","S":"Sell","v":"1.30","p":"1922.5","L":"ZeroPlusTick","i":"4d4ad26c-901f-5146-adc0-1db29b6b9ab6","BT":false,"RPI":false,"seq":430879434439}]}';
  // [what, venue, text, read by the scanner]
  const cases: Array<[string, Venue, string, boolean]> = [
    ["binance as sent", BINANCE, B, true],
    ["binance raw payload", BINANCE, B.slice(B.indexOf('"data":') + 7, -1), true],
    ["binance symbol with an escape", BINANCE, B.replace('"BTCUSDT"', '"BTC\\u0055SDT"'), false],
    ["binance space after a colon", BINANCE, B.replace('"a":', '"a": '), false],
    ["binance trailing newline", BINANCE, `${B}\n`, false],
    ["binance raw payload with a trailing newline", BINANCE, `${B.slice(B.indexOf('"data":') + 7, -1)}\n`, false],
    ["binance raw payload with text after it", BINANCE, `${B.slice(B.indexOf('"data":') + 7, -1)}}`, false],
    ["binance keys reordered", BINANCE, B.replace('"p":"0.69067","q":"369"', '"q":"369","p":"0.69067"'), false],
    ["binance extra key", BINANCE, B.replace('"q":"369",', '"q":"369","nq":"369",'), false],
    ["binance duplicate key", BINANCE, B.replace('"m":true', '"m":true,"m":false'), false],
    ["binance leading zero", BINANCE, B.replace('"a":9445517', '"a":09445517'), false],
    ["binance id of 16 digits", BINANCE, B.replace('"a":9445517', '"a":9007199254740993'), false],
    ["binance time 1.5e12", BINANCE, B.replace('"T":1617647797485', '"T":1.5e12'), false],
    ["binance time 0", BINANCE, B.replace('"T":1617647797485', '"T":0'), false],
    ["binance price 1e3 (Number reads it)", BINANCE, B.replace('"0.69067"', '"1e3"'), true],
    ["binance price with spaces (Number trims them)", BINANCE, B.replace('"0.69067"', '" 0.5 "'), true],
    ["binance price NaN", BINANCE, B.replace('"0.69067"', '"NaN"'), false],
    ["binance price 0", BINANCE, B.replace('"0.69067"', '"0.000"'), false],
    ["binance price as a number", BINANCE, B.replace('"0.69067"', "0.69067"), false],
    ["binance side as a string", BINANCE, B.replace('"m":true', '"m":"true"'), false],
    ["binance raw tab in the stream name", BINANCE, B.replace("btcusdt@", "btcusdt\t@"), false],
    ["binance forceOrder", BINANCE, B.replace('"e":"aggTrade"', '"e":"forceOrder"'), false],
    ["binance truncated", BINANCE, B.slice(0, -1), false],
    ["bybit as sent", BYBIT, Y, true],
    ["bybit rows without RPI and seq (older frames)", BYBIT, Y.replaceAll(',"RPI":false,"seq":430879434439', ""), true],
    ["bybit one row without seq", BYBIT, Y.replace(',"seq":430879434439', ""), true],
    ["bybit seq before RPI", BYBIT, Y.replace('"RPI":false,"seq":430879434439', '"seq":430879434439,"RPI":false'), false],
    ["bybit empty id", BYBIT, Y.replace('"19d7df56-4f10-5290-a969-d9d9f2c74cc3"', '""'), false],
    ["bybit side lower case", BYBIT, Y.replace('"S":"Buy"', '"S":"buy"'), false],
    ["bybit unicode symbol", BYBIT, Y.replaceAll('"s":"ETHUSDT"', '"s":"ÉTHUSDT"'), true],
    ["bybit no rows", BYBIT, Y.slice(0, Y.indexOf("[") + 1) + "]}", false],
    ["bybit allLiquidation topic", BYBIT, Y.replace("publicTrade.", "allLiquidation."), false],
    ["bybit spot layout (ts before type)", BYBIT, Y.replace('"type":"snapshot","ts":1786310820347', '"ts":1786310820347,"type":"snapshot"'), false],
    ["bybit whitespace between rows", BYBIT, Y.replace("},{", "}, {"), false],
  ];

  it.each(cases)("%s: the JSON.parse path's answer", (_, v, text, scanned) => {
    expect(v.parse(text, lookup)).toStrictEqual(reference(v, text, lookup));
    expect(v.scan(text, lookup) !== undefined).toBe(scanned);
  });

  it("keeps no frame text alive through the trade ids it returns (ids outlive frames in the store)", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // 40 frames of 1 MiB each (the padding in the `L` value, which the scanner does not read).
    const frameOf = (k: number) => Y.replace('"L":"PlusTick"', `"L":"${String(k).padEnd(1 << 20, "x")}"`);
    gc();
    const before = process.memoryUsage().heapUsed;
    const ids: string[] = [];
    for (let k = 0; k < 40; k++) {
      const out = scanBybitPublicTrade(frameOf(k), lookup);
      ids.push(...(out?.trades ?? []).map((t) => t.id));
    }
    gc();
    expect(ids).toHaveLength(80);
    // A substring view of each UUID would keep its 1 MiB frame: 40 MiB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 << 20);
  });
});

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

/** Values that stress the readers: huge, signed, fractional, exponent and NaN-like numbers and strings, other types. */
const ODD_VALUES: Json[] = [
  0,
  -0,
  -1,
  1.5,
  1e21,
  1e308,
  1e20,
  1234567890123456,
  12345678901234568,
  1617647797485.5,
  2 ** 53,
  2 ** 53 + 2,
  "",
  " ",
  "0",
  "00",
  "-1",
  "+1",
  "1e3",
  "1E-7",
  "0x10",
  "1_000",
  "NaN",
  "Infinity",
  "-Infinity",
  "1e400",
  " 1",
  "1 ",
  ".5",
  "5.",
  ".",
  "0.000",
  "00012.5",
  "1.2.3",
  "١٢٣",
  "9007199254740993",
  "123456789012345678",
  "12345.678901234567",
  "true",
  "null",
  true,
  false,
  null,
  [],
  {},
  [1],
  { a: 1 },
  "Buy",
  "Sell",
  "buy",
  "aggTrade",
  "BTCUSDT",
  "",
  "a\u0000b",
  "é",
  "\u2028",
];
/** Number literals as text (JSON.stringify would write them otherwise): rounding, fractions, exponents. */
const RAW_NUMBERS = [
  "9007199254740993",
  "9007199254740992",
  "123456789012345678901",
  "1234567890123456",
  "999999999999999",
  "1e2",
  "1E2",
  "1.0",
  "-0",
  "0.0",
  "1.5e12",
  "1617647797485.0",
  "1786310820346e0",
  "1e400",
  "-1",
  "0",
  "00",
];
/** Raw text fragments spliced into frames. */
const ODD_TEXT = [" ", "\n", "\t", "\\", '\\"', "\\u0041", '"', ",", ":", "{", "}", "[", "]", "0", "-", ".", "e", "1e2", "null", "\u0000", "\u00e9", "\ud800"];

/** Every object and array of a parsed frame (itself included). */
function containers(v: Json, out: Array<Obj | Json[]> = []): Array<Obj | Json[]> {
  if (Array.isArray(v)) {
    out.push(v);
    for (const x of v) containers(x, out);
  } else if (v !== null && typeof v === "object") {
    out.push(v);
    for (const x of Object.values(v)) containers(x, out);
  }
  return out;
}

/**
 * One random mutation of `text`: structural ones on the parsed frame (reordered, removed, added,
 * duplicated keys; values of other types; a value escaped as `\uXXXX`; a Binance payload unwrapped), or
 * textual ones (whitespace, a spliced fragment, a deleted or changed character, truncation, a leading zero).
 */
function mutate(text: string, r: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const at = () => Math.floor(r() * (text.length + 1));
  const kind = Math.floor(r() * 14);
  if (kind < 7) {
    let v: Json;
    try {
      v = JSON.parse(text) as Json;
    } catch {
      return text.slice(0, at()); // already not JSON: cut it further
    }
    const objects = containers(v).filter((c): c is Obj => !Array.isArray(c));
    if (objects.length === 0) return JSON.stringify(v);
    const o = pick(objects);
    const keys = Object.keys(o);
    const key = keys.length ? pick(keys) : "x";
    const rebuild = (entries: Array<[string, Json]>) => {
      for (const k of Object.keys(o)) delete o[k];
      for (const [k, x] of entries) o[k] = x;
    };
    switch (kind) {
      case 0: {
        // reorder: move one key elsewhere
        const entries = Object.entries(o);
        const [moved] = entries.splice(Math.floor(r() * entries.length), 1);
        if (moved) entries.splice(Math.floor(r() * (entries.length + 1)), 0, moved);
        rebuild(entries);
        return JSON.stringify(v);
      }
      case 1:
        delete o[key];
        return JSON.stringify(v);
      case 2: {
        // an extra key, somewhere in the order
        const entries = Object.entries(o);
        entries.splice(Math.floor(r() * (entries.length + 1)), 0, [pick(["x", "nq", "RPI", "seq", "e", "E", "id", "op", "stream", "data"]), pick(ODD_VALUES)]);
        rebuild(entries);
        return JSON.stringify(v);
      }
      case 3:
      case 4:
        o[key] = pick(ODD_VALUES);
        return JSON.stringify(v);
      case 5: {
        // the same value written with an escape: JSON.parse reads the same frame, the scanner must not read it
        const s = JSON.stringify(v);
        const quoted = [...s.matchAll(/"([^"\\]+)"/g)];
        if (quoted.length === 0) return s;
        const m = pick(quoted);
        const i = m.index + 1 + Math.floor(r() * m[1]!.length);
        return `${s.slice(0, i)}\\u${s.charCodeAt(i).toString(16).padStart(4, "0")}${s.slice(i + 1)}`;
      }
      default: {
        // a duplicated key (JSON.parse keeps the last), or the Binance payload without its wrapper
        if (typeof v === "object" && v !== null && !Array.isArray(v) && "stream" in v && r() < 0.5) return JSON.stringify(v.data) ?? text;
        const s = JSON.stringify(v);
        const k = JSON.stringify(key);
        const i = s.indexOf(`${k}:`);
        return i < 0 ? s : `${s.slice(0, i)}${k}:${JSON.stringify(pick(ODD_VALUES))},${s.slice(i)}`;
      }
    }
  }
  const i = at();
  switch (kind) {
    case 7:
      return `${text.slice(0, i)}${pick([" ", "\n", "\t", "\r"])}${text.slice(i)}`;
    case 8:
    case 9:
      return `${text.slice(0, i)}${pick(ODD_TEXT)}${text.slice(i)}`;
    case 10:
      return `${text.slice(0, i)}${text.slice(i + 1)}`;
    case 11:
      return `${text.slice(0, i)}${pick(ODD_TEXT)}${text.slice(i + 1)}`;
    case 12:
      return r() < 0.5 ? text.slice(0, i) : `${text}${pick(ODD_TEXT)}`;
    default: {
      // a number written otherwise: a prefix (leading zero, sign, digit), or a literal JSON.parse reads
      // with rounding or to an integer all the same (1.5e12, 1617647797485.0, 9007199254740993)
      const nums = [...text.matchAll(/:(\d+)/g)];
      if (nums.length === 0) return text;
      const m = pick(nums);
      const j = m.index + 1;
      if (r() < 0.4) return `${text.slice(0, j)}${pick(["0", "1", "-", "00"])}${text.slice(j)}`;
      return `${text.slice(0, j)}${pick(RAW_NUMBERS)}${text.slice(j + m[1]!.length)}`;
    }
  }
}

describe.each([
  [BINANCE, 0x5eed1],
  [BYBIT, 0x5eed2],
])("$name frame scanner on mutated frames", (v, seed) => {
  const frames = recordings(v.name)
    .flatMap((rec) => rec.frames)
    .filter(isTradeFrame[v.name]);
  // Binance frames in both forms the scanner reads: combined-stream and raw payload.
  const bases = v.name === "binance" ? [...frames, ...frames.map((t) => JSON.stringify((JSON.parse(t) as { data?: unknown }).data ?? JSON.parse(t)))] : frames;
  const ROUNDS = 20_000;

  it.each(LOOKUPS)(`gives the JSON.parse path's answer on ${ROUNDS} mutated frames, seeded (%s)`, (_, lookup) => {
    const r = prng(seed);
    let scanned = 0;
    let fellBack = 0;
    const seen = new Set<string>();
    for (let n = 0; n < ROUNDS; n++) {
      let text = bases[Math.floor(r() * bases.length)]!;
      for (let k = 1 + Math.floor(r() * 3); k > 0; k--) text = mutate(text, r);
      if (seen.has(text)) continue;
      seen.add(text);
      const want = reference(v, text, lookup);
      const got = v.parse(text, lookup);
      // The cheap comparison first; expect() only to report a difference (20,000 of them would be slow).
      if (!isDeepStrictEqual(got, want)) expect(got, `mutated frame ${JSON.stringify(text)}`).toStrictEqual(want);
      if (v.scan(text, lookup) === undefined) fellBack++;
      else scanned++;
    }
    // Both sides were exercised: mutations the layout tolerates (values within it) and ones it does not.
    expect(scanned).toBeGreaterThan(500);
    expect(fellBack).toBeGreaterThan(5000);
  });
});
