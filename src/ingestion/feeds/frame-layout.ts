/*
 * What the frame-layout scanners of the trade streams share (src/venues/binance/feed-parse.ts: USDⓈ-M
 * `aggTrade`; src/venues/bybit/feed-parse.ts: v5 `publicTrade`): the exact layout the venue sends, written
 * as a regular expression over the frame's text, and read with it instead of building the object
 * JSON.parse would build.
 *
 * A layout accepts only a strict subset of JSON whose meaning is unambiguous: keys in a fixed order, no
 * whitespace, strings without escapes or raw control characters (so the characters between the quotes
 * are the value), integers unsigned with at most 15 digits (so the digits are the value, exactly as
 * JSON.parse reads them). A frame the layout does not match goes to JSON.parse and the schemas, which
 * then decide, errors included; a frame it matches yields exactly what that path yields for it.
 *
 * Why a regular expression rather than a hand-written character loop: V8 compiles it to machine code,
 * which checks a 200-character frame several times faster than JavaScript reading it character by
 * character (and than JSON.parse, which also builds every value).
 */

/** Characters of a JSON string that need no decoding: anything but `"`, `\` and U+0000–U+001F. */
const CHARS = String.raw`[^"\\\x00-\x1f]`;

/** A value of a layout: a regular-expression source matching one JSON value, capturing or not. */
export type LayoutValue = string;

/**
 * A JSON string needing no decoding. `capture`: its characters are captured; `nonEmpty`: at least one;
 * `prefix`: it starts with these characters (not captured).
 */
export function str(opts: { capture?: boolean; nonEmpty?: boolean; prefix?: string } = {}): LayoutValue {
  const chars = `${CHARS}${opts.nonEmpty ? "+" : "*"}`;
  return `"${escapeRegExp(opts.prefix ?? "")}${opts.capture ? `(${chars})` : chars}"`;
}

/** One of `values`, each a JSON string needing no escape ("Buy", "Sell"), captured without its quotes. */
export function oneOf(...values: string[]): LayoutValue {
  return `"(${values.map(escapeRegExp).join("|")})"`;
}

/** A fixed JSON string (`"aggTrade"`). */
export function fixed(value: string): LayoutValue {
  return `"${escapeRegExp(value)}"`;
}

/**
 * An unsigned integer in JSON's grammar (no sign, fraction or exponent, no leading zero) of at most 15
 * digits, so that its digits read as a number are exact; `positive`: not 0. `capture`: its digits are captured.
 */
export function uint(opts: { capture?: boolean; positive?: boolean } = {}): LayoutValue {
  const digits = opts.positive ? String.raw`[1-9]\d{0,14}` : String.raw`(?:0|[1-9]\d{0,14})`;
  return opts.capture ? `(${digits})` : digits;
}

/**
 * `true` or `false`. `capture`: the capture is "t" for true and undefined for false (a one-character
 * capture is a shared string in V8: nothing is allocated for it).
 */
export function bool(opts: { capture?: boolean } = {}): LayoutValue {
  return opts.capture ? "(?:(t)rue|false)" : "(?:true|false)";
}

/** One key of an object layout: its value, and whether it may be absent (then only as the object's last keys). */
export type LayoutField = readonly [key: string, value: LayoutValue, optional?: "optional"];

/**
 * A JSON object with exactly these keys in this order (optional ones may be left out), no whitespace:
 * `object([["e", fixed("aggTrade")], ["a", uint({ capture: true })]])` matches `{"e":"aggTrade","a":12}`.
 * Captures are numbered in the order of the fields, nested objects included. `open`: without the closing
 * brace, for a layout read in parts (the last value is an array whose rows are read one by one).
 */
export function object(fields: readonly LayoutField[], opts: { open?: boolean } = {}): LayoutValue {
  // An absent optional key before a present one would leave a comma the pattern does not expect.
  const firstOptional = fields.findIndex((f) => f[2] === "optional");
  if (firstOptional >= 0 && fields.slice(firstOptional).some((f) => f[2] !== "optional")) throw new Error("layout: optional keys must come last");
  const parts = fields.map(([key, value, optional], i) => {
    const pair = `${i > 0 ? "," : ""}"${escapeRegExp(key)}":${value}`;
    return optional ? `(?:${pair})?` : pair;
  });
  return String.raw`\{${parts.join("")}${opts.open ? "" : String.raw`\}`}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

/**
 * V8 copies substrings shorter than this and makes longer ones views that keep the whole frame text
 * alive (a "sliced string"): see {@link detached}.
 */
const SLICE_MIN = 13;

/**
 * `s` (a captured id: a substring of a frame) as a string that does not keep the frame's text alive.
 * Ids outlive their frame (the store keeps Bybit's in its bucket id sets for 15 minutes and more), and a
 * substring of 13 characters or more (a UUID) would otherwise hold the whole frame as long; joining two
 * halves builds a flat copy in V8, as JSON.parse would have built.
 */
export function detached(s: string): string {
  if (s.length < SLICE_MIN) return s;
  const mid = s.length >> 1;
  return [s.slice(0, mid), s.slice(mid)].join("");
}
