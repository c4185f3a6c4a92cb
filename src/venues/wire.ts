import { z } from "zod";
import { AppError } from "../errors.js";

/*
 * Shared wire-parsing rules of every venue adapter: decimals may arrive as strings or numbers, optional
 * decimals as "", null or absent; a payload that does not match its schema is an UPSTREAM_ERROR naming
 * the venue and endpoint (never the URL).
 */

/** A required decimal sent as a string or a number; becomes a finite number. */
export const Num = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const n = typeof v === "number" ? v : v.trim() === "" ? Number.NaN : Number(v);
  if (!Number.isFinite(n)) {
    ctx.addIssue({ code: "custom", message: `expected a decimal, got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return n;
});

/** An optional decimal: `""`, null or absent become null. */
export const OptNum = z
  .union([z.number(), z.string(), z.null()])
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === null || v === "") return null;
    const n = typeof v === "number" ? v : Number(v);
    if (!Number.isFinite(n)) {
      ctx.addIssue({ code: "custom", message: `expected a decimal, got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return n;
  });

/** The error for a payload of unexpected shape: `UPSTREAM_ERROR` with the first three schema issues. */
export function invalidShape(venue: string, endpoint: string, err: z.ZodError): AppError {
  return new AppError("UPSTREAM_ERROR", `${venue} ${endpoint} returned an unexpected shape`, {
    details: err.issues.slice(0, 3).map((i) => `${i.path.join(".")}: ${i.message}`),
  });
}

/** Validates `raw` against `schema`. @throws AppError UPSTREAM_ERROR (see {@link invalidShape}). */
export function parseShape<T extends z.ZodType>(venue: string, schema: T, raw: unknown, endpoint: string): z.output<T> {
  const r = schema.safeParse(raw);
  if (!r.success) throw invalidShape(venue, endpoint, r.error);
  return r.data;
}

/** `value × factor` without binary noise (15 significant digits), for multiplier and contract conversions. */
export function scale(value: number, factor: number): number {
  return factor === 1 ? value : Number((value * factor).toPrecision(15));
}

/** `value / divisor` without binary noise (15 significant digits). */
export function perCoin(value: number, divisor: number): number {
  return divisor === 1 ? value : Number((value / divisor).toPrecision(15));
}
