import { z } from "zod";
import { AppError } from "../../errors.js";
import type { FundingPoint, FundingSnapshot, MarginTier, OpenInterest, PerpInstrument, PerpVenue, PredictedFunding } from "../perp/types.js";
import { Num, OptNum, parseShape, perCoin, scale } from "../wire.js";
import { HOUR_MS } from "../../lib/time.js";

/*
 * Pure parsers for Hyperliquid `POST /info` answers
 * (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/info-endpoint/perpetuals). Decimals are strings,
 * times numbers (ms). Funding is HOURLY. Coins with a `k` prefix (`kPEPE`) are quoted per 1000 coins:
 * prices are divided and sizes multiplied by 1000 so records are per ONE coin.
 */

const VENUE = "hyperliquid";
const parse = <T extends z.ZodType>(schema: T, raw: unknown, endpoint: string): z.output<T> => parseShape(VENUE, schema, raw, endpoint);

/** Canonical base and multiplier of a Hyperliquid perp coin: `BTC` → BTC × 1; `kPEPE` → PEPE × 1000. */
export function fromHyperliquidCoin(coin: string): { base: string; multiplier: number } {
  const k = /^k([A-Z0-9]+)$/.exec(coin);
  if (k) return { base: k[1]!, multiplier: 1000 };
  return { base: coin.toUpperCase(), multiplier: 1 };
}

/** Hyperliquid coin name of a canonical base: `toHyperliquidCoin("PEPE", 1000)` = `kPEPE`. */
export function toHyperliquidCoin(base: string, multiplier = 1): string {
  return multiplier === 1000 ? `k${base.toUpperCase()}` : base.toUpperCase();
}

const Meta = z.object({
  universe: z.array(z.object({ name: z.string(), szDecimals: z.number().optional(), isDelisted: z.boolean().optional() })),
});
const AssetCtx = z.object({
  funding: OptNum,
  openInterest: OptNum,
  markPx: OptNum,
  oraclePx: OptNum,
  premium: OptNum,
});
const MetaAndAssetCtxs = z.tuple([Meta, z.array(AssetCtx)]);

interface Listed {
  inst: PerpInstrument;
  ctx: z.output<typeof AssetCtx>;
}

/** Pairs `ctxs[i]` with `meta.universe[i]`, dropping delisted assets. */
function listed(raw: unknown): Listed[] {
  const [meta, ctxs] = parse(MetaAndAssetCtxs, raw, "metaAndAssetCtxs");
  if (ctxs.length !== meta.universe.length) {
    throw new AppError("UPSTREAM_ERROR", `${VENUE} metaAndAssetCtxs returned ${meta.universe.length} assets but ${ctxs.length} contexts`);
  }
  const out: Listed[] = [];
  meta.universe.forEach((u, i) => {
    if (!u.isDelisted) out.push({ inst: toInstrument(u.name), ctx: ctxs[i]! });
  });
  return out;
}

function toInstrument(name: string): PerpInstrument {
  const { base, multiplier } = fromHyperliquidCoin(name);
  return { venue: VENUE, base, venueSymbol: name, multiplier, contractSize: 1, fundingIntervalHours: 1 };
}

/**
 * Perpetuals of the main dex from `{"type":"metaAndAssetCtxs"}` (`[meta, ctxs]`) or `{"type":"meta"}`,
 * skipping `isDelisted` assets. Funding is hourly (`fundingIntervalHours` 1).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape (including universe/ctxs length mismatch).
 */
export function parseInstruments(raw: unknown): PerpInstrument[] {
  if (!Array.isArray(raw))
    return parse(Meta, raw, "meta")
      .universe.filter((u) => !u.isDelisted)
      .map((u) => toInstrument(u.name));
  return listed(raw).map((l) => l.inst);
}

const MarginMeta = z.object({
  universe: z.array(z.object({ name: z.string(), maxLeverage: z.number().positive().optional(), marginTableId: z.number().optional() })),
  marginTables: z
    .array(z.tuple([z.number(), z.object({ description: z.string().optional(), marginTiers: z.array(z.object({ lowerBound: Num, maxLeverage: z.number().positive() })).min(1) })]))
    .optional(),
});

/**
 * Margin tiers of `inst` from the meta of `{"type":"meta"}` or `{"type":"metaAndAssetCtxs"}` (`[meta, ctxs]`):
 * the universe entry's `marginTableId` selects a table of `meta.marginTables` (`[[id, {description,
 * marginTiers:[{lowerBound:"0.0", maxLeverage:50}, …]}], …]`, `lowerBound` in USD notional). Tiers are sorted by
 * `lowerBound`; a tier's upper bound is the next tier's `lowerBound` (null for the last). Without a
 * `marginTableId` or a matching table (older metas), one unbounded tier at the universe `maxLeverage`.
 * Hyperliquid's maintenance margin is half the initial margin at the tier's max leverage: mmr = 1 / (2 × maxLeverage).
 * @throws AppError NOT_FOUND when the universe lacks the coin; UPSTREAM_ERROR on an unexpected shape or when
 *   neither a table nor a `maxLeverage` is given.
 */
export function parseMarginTiers(raw: unknown, inst: PerpInstrument): MarginTier[] {
  const meta = parse(MarginMeta, Array.isArray(raw) ? raw[0] : raw, "meta");
  const asset = meta.universe.find((u) => u.name === inst.venueSymbol);
  if (!asset) throw new AppError("NOT_FOUND", `${VENUE} meta lists no ${inst.venueSymbol}`);
  const table = asset.marginTableId === undefined ? undefined : meta.marginTables?.find(([id]) => id === asset.marginTableId)?.[1];
  const tiers = table
    ? [...table.marginTiers].sort((a, b) => a.lowerBound - b.lowerBound)
    : asset.maxLeverage !== undefined
      ? [{ lowerBound: 0, maxLeverage: asset.maxLeverage }]
      : [];
  if (tiers.length === 0) throw new AppError("UPSTREAM_ERROR", `${VENUE} meta sent no margin table or max leverage for ${inst.venueSymbol}`);
  return tiers.map((t, i) => ({
    venue: VENUE,
    base: inst.base,
    minNotionalUsd: t.lowerBound,
    maxNotionalUsd: tiers[i + 1]?.lowerBound ?? null,
    maxLeverage: t.maxLeverage,
    maintenanceMarginRate: Number((1 / (2 * t.maxLeverage)).toPrecision(15)),
  }));
}

/** Start of the next full hour after `now` (Hyperliquid settles funding every hour on the hour). */
export function nextHour(now: number): number {
  return Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
}

/**
 * Funding snapshots from `{"type":"metaAndAssetCtxs"}`: `funding` is the current hourly rate,
 * `markPx`/`oraclePx` (index) are divided by the multiplier, `premium` may be null, no interest
 * component is reported (null). Hyperliquid sends no timestamp: `time` is `now`, and
 * `nextFundingTime` the next full hour. Assets without a funding value are skipped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseFunding(raw: unknown, now = Date.now()): FundingSnapshot[] {
  const out: FundingSnapshot[] = [];
  for (const { inst, ctx } of listed(raw)) {
    if (ctx.funding === null) continue;
    out.push({
      venue: VENUE,
      base: inst.base,
      venueSymbol: inst.venueSymbol,
      fundingRate: ctx.funding,
      fundingIntervalHours: 1,
      nextFundingTime: nextHour(now),
      markPrice: ctx.markPx === null ? null : perCoin(ctx.markPx, inst.multiplier),
      indexPrice: ctx.oraclePx === null ? null : perCoin(ctx.oraclePx, inst.multiplier),
      premium: ctx.premium,
      interestRate: null,
      time: now,
    });
  }
  return out;
}

/**
 * Open interest from `{"type":"metaAndAssetCtxs"}`: `openInterest` (venue units) × multiplier coins,
 * USD = `openInterest` × `markPx`. Assets without both values are skipped.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseOpenInterest(raw: unknown, now = Date.now()): OpenInterest[] {
  const out: OpenInterest[] = [];
  for (const { inst, ctx } of listed(raw)) {
    if (ctx.openInterest === null || ctx.markPx === null) continue;
    out.push({ venue: VENUE, base: inst.base, oiCoins: scale(ctx.openInterest, inst.multiplier), oiUsd: scale(ctx.openInterest, ctx.markPx), time: now });
  }
  return out;
}

const FundingHistory = z.array(z.object({ coin: z.string(), fundingRate: Num, premium: OptNum, time: z.number() }));

/**
 * Parses `{"type":"fundingHistory","coin":…,"startTime":…}` (oldest first, ≤ 500 rows) into settled
 * funding points, newest first. Rates are per the interval in force at the time (hourly today; the
 * oldest 2023 rows were 8-hourly). Hyperliquid sends no mark price (null).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseFundingHistory(raw: unknown, inst: PerpInstrument): FundingPoint[] {
  const rows = parse(FundingHistory, raw, "fundingHistory");
  return rows.map((r) => ({ venue: VENUE, base: inst.base, time: r.time, rate: r.fundingRate, markPrice: null }) satisfies FundingPoint).sort((a, b) => b.time - a.time);
}

/** Venue names used by `predictedFundings` → our venue keys. Other venues are ignored. */
export const PREDICTED_VENUES: Readonly<Record<string, PerpVenue>> = { BinPerp: "binance", BybitPerp: "bybit", HlPerp: "hyperliquid" };

const PredictedEntry = z
  .object({ fundingRate: Num, nextFundingTime: z.number().nullable().optional(), fundingIntervalHours: z.number().positive().nullable().optional() })
  .nullable();
const PredictedFundings = z.array(z.tuple([z.string(), z.array(z.tuple([z.string(), PredictedEntry]))]));

/**
 * Parses `{"type":"predictedFundings"}`: per Hyperliquid coin, the predicted next rate on Binance
 * (`BinPerp`), Bybit (`BybitPerp`) and Hyperliquid (`HlPerp`), each a fraction per that venue's own
 * interval. `fundingIntervalHours` is taken when the payload has it (newer payloads), else null.
 * Null venue entries and unknown venue names are skipped. Bases are canonical (`kPEPE` → PEPE).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parsePredictedFundings(raw: unknown): PredictedFunding[] {
  const rows = parse(PredictedFundings, raw, "predictedFundings");
  const out: PredictedFunding[] = [];
  for (const [coin, venues] of rows) {
    const { base } = fromHyperliquidCoin(coin);
    for (const [name, e] of venues) {
      const venue = PREDICTED_VENUES[name];
      if (!venue || !e) continue;
      out.push({ venue, base, rate: e.fundingRate, nextFundingTime: e.nextFundingTime ?? null, fundingIntervalHours: e.fundingIntervalHours ?? null });
    }
  }
  return out;
}
