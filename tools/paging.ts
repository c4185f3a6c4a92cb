import { createHash } from "node:crypto";
import { z } from "zod";
import { AppError } from "../src/errors.js";

/*
 * Cursor paging of long answers (docs/mcp.md, "Result sizes"): a page says `truncated` when more exists and gives
 * `next_cursor`, an opaque token the caller sends back as `cursor` with the same other parameters (HTTP and MCP
 * alike). The token is base64url JSON of a fingerprint of the tool and query it belongs to and the position to
 * continue from. It is not signed, since it grants nothing (any position is public data), but it is checked when
 * the input is parsed: a malformed token, or one from another tool or query, is a 400 (MCP: an isError result)
 * before any payment.
 */

/** Longest `cursor` accepted, characters (the tokens written here are under 100). */
export const MAX_CURSOR_CHARS = 256;

/** The `cursor` input field of a paged tool (the other parameters stay those of the call that gave it). */
export const CursorParam = z.string().max(MAX_CURSOR_CHARS).optional().describe("next_cursor of the last answer");

/** The output fields of a paged answer. */
export const PageFields = {
  truncated: z.boolean().describe("true when more exists beyond this page: call again with cursor = next_cursor"),
  next_cursor: z.string().nullable().describe("cursor of the next page (opaque); null when truncated is false"),
};

/** Where the next page starts: a few named numbers or strings (e.g. `{ before_ms }`). */
export type Position = Readonly<Record<string, number | string>>;

/** Cursor paging of one tool (see the file comment); `I` is its parsed input. */
export interface Pager<I, P extends Position> {
  /** The `next_cursor` of a page of `input` after which `position` starts. */
  encode(input: I, position: P): string;
  /**
   * The position in `input.cursor`, undefined without one.
   * @throws AppError BAD_REQUEST for a malformed token or one from another tool or query.
   */
  decode(input: I & { cursor?: string | undefined }): P | undefined;
  /** The tool's `superRefine` on its input object: an issue at `cursor` when {@link decode} would throw. */
  refine(input: I & { cursor?: string | undefined }, ctx: z.RefinementCtx): void;
}

/** Reads a token: its fingerprint and position, or a reason it is not one. */
function readToken(token: string): { q: string; p: unknown } | string {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return "not a cursor this service wrote (base64url expected)";
  try {
    const v = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as unknown;
    if (v && typeof v === "object" && typeof (v as { q?: unknown }).q === "string") return v as { q: string; p: unknown };
  } catch {
    // Fall through: not JSON.
  }
  return "not a cursor this service wrote";
}

/**
 * A {@link Pager} for `tool`: `queryOf` lists what identifies a query besides its page (symbol, venue, interval,
 * window; never `limit` or `cursor`, which may change between pages), `position` validates a decoded position.
 */
export function pager<I, P extends Position>(tool: string, queryOf: (input: I) => readonly unknown[], position: z.ZodType<P>): Pager<I, P> {
  const fingerprint = (input: I) =>
    createHash("sha256")
      .update(JSON.stringify([tool, ...queryOf(input)]))
      .digest("base64url")
      .slice(0, 12);
  const check = (input: I & { cursor?: string | undefined }): P | string | undefined => {
    if (input.cursor === undefined) return undefined;
    const t = readToken(input.cursor);
    if (typeof t === "string") return t;
    if (t.q !== fingerprint(input)) return `cursor belongs to another query: keep the parameters of the call that returned it`;
    const p = position.safeParse(t.p);
    return p.success ? p.data : "not a cursor this service wrote";
  };
  return {
    encode: (input, p) => Buffer.from(JSON.stringify({ q: fingerprint(input), p })).toString("base64url"),
    decode(input) {
      const r = check(input);
      if (typeof r === "string") throw new AppError("BAD_REQUEST", `invalid cursor: ${r}`, { details: [{ field: "cursor", message: r }] });
      return r;
    },
    refine(input, ctx) {
      const r = check(input);
      if (typeof r === "string") ctx.addIssue({ code: "custom", path: ["cursor"], message: r });
    },
  };
}

/**
 * The page of `items` (already after the cursor's position, in answer order) of at most `limit`, with `truncated`
 * when more exist and the cursor of the next page, built by `next` from the page's last item.
 */
export function page<T>(items: readonly T[], limit: number, next: (last: T) => string): { items: T[]; truncated: boolean; next_cursor: string | null } {
  const truncated = items.length > limit;
  const out = items.slice(0, limit);
  return { items: out, truncated, next_cursor: truncated && out.length ? next(out.at(-1)!) : null };
}
