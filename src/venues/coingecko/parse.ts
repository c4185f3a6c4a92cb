import { z } from "zod";
import { invalidShape } from "../wire.js";

/*
 * Pure parsers for CoinGecko v3 payloads (docs.coingecko.com). Numbers arrive as JSON numbers;
 * `last_updated_at` is unix seconds, chart points are `[unix_ms, value]`.
 */

const UsdMap = z.object({ usd: z.number().nullable().optional() });
const UsdDateMap = z.object({ usd: z.string().nullable().optional() });

/** One coin of `GET /simple/price?...&include_market_cap&include_24hr_vol&include_24hr_change&include_last_updated_at`. */
const SimplePriceEntry = z.object({
  usd: z.number(),
  usd_market_cap: z.number().nullable().optional(),
  usd_24h_vol: z.number().nullable().optional(),
  usd_24h_change: z.number().nullable().optional(),
  last_updated_at: z.number().optional(),
});
const SimplePriceBody = z.record(z.string(), z.union([SimplePriceEntry, z.object({}).strict()]));

/** Normalised `/simple/price` entry. */
export interface SimplePrice {
  coingeckoId: string;
  priceUsd: number;
  change24hPct: number | null;
  volume24hUsd: number | null;
  marketCapUsd: number | null;
  /** Epoch milliseconds of CoinGecko's last update, or null when not sent. */
  lastUpdatedMs: number | null;
}

const invalid = (endpoint: string, err: z.ZodError) => invalidShape("coingecko", endpoint, err);

/**
 * Parses `GET /simple/price` (https://docs.coingecko.com/reference/simple-price). Coins CoinGecko does not know are absent from the body
 * (or an empty object); they are simply missing from the result.
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseSimplePrice(raw: unknown): SimplePrice[] {
  const r = SimplePriceBody.safeParse(raw);
  if (!r.success) throw invalid("/simple/price", r.error);
  const out: SimplePrice[] = [];
  for (const [id, v] of Object.entries(r.data)) {
    if (!("usd" in v)) continue;
    const e = v as z.infer<typeof SimplePriceEntry>;
    out.push({
      coingeckoId: id,
      priceUsd: e.usd,
      change24hPct: e.usd_24h_change ?? null,
      volume24hUsd: e.usd_24h_vol ?? null,
      marketCapUsd: e.usd_market_cap ?? null,
      lastUpdatedMs: e.last_updated_at === undefined ? null : e.last_updated_at * 1000,
    });
  }
  return out;
}

const CoinBody = z.object({
  id: z.string(),
  symbol: z.string(),
  name: z.string(),
  market_cap_rank: z.number().int().nullable().optional(),
  last_updated: z.string().nullable().optional(),
  market_data: z.object({
    current_price: UsdMap,
    ath: UsdMap,
    ath_date: UsdDateMap,
    atl: UsdMap,
    atl_date: UsdDateMap,
    market_cap: UsdMap,
    total_volume: UsdMap,
    price_change_percentage_24h: z.number().nullable().optional(),
    price_change_percentage_7d: z.number().nullable().optional(),
    price_change_percentage_30d: z.number().nullable().optional(),
    circulating_supply: z.number().nullable().optional(),
    total_supply: z.number().nullable().optional(),
    market_cap_rank: z.number().int().nullable().optional(),
    last_updated: z.string().nullable().optional(),
  }),
});

/** Normalised `/coins/{id}` market details (USD). Missing values are null, never invented. */
export interface CoinDetails {
  id: string;
  symbol: string;
  name: string;
  priceUsd: number | null;
  change24hPct: number | null;
  change7dPct: number | null;
  change30dPct: number | null;
  volume24hUsd: number | null;
  marketCapUsd: number | null;
  marketCapRank: number | null;
  circulatingSupply: number | null;
  totalSupply: number | null;
  athUsd: number | null;
  athDate: string | null;
  atlUsd: number | null;
  atlDate: string | null;
  lastUpdated: string | null;
}

/**
 * Parses `GET /coins/{id}?market_data=true&...` (https://docs.coingecko.com/reference/coins-id).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseCoin(raw: unknown): CoinDetails {
  const r = CoinBody.safeParse(raw);
  if (!r.success) throw invalid("/coins/{id}", r.error);
  const c = r.data;
  const m = c.market_data;
  return {
    id: c.id,
    symbol: c.symbol.toUpperCase(),
    name: c.name,
    priceUsd: m.current_price.usd ?? null,
    change24hPct: m.price_change_percentage_24h ?? null,
    change7dPct: m.price_change_percentage_7d ?? null,
    change30dPct: m.price_change_percentage_30d ?? null,
    volume24hUsd: m.total_volume.usd ?? null,
    marketCapUsd: m.market_cap.usd ?? null,
    marketCapRank: c.market_cap_rank ?? m.market_cap_rank ?? null,
    circulatingSupply: m.circulating_supply ?? null,
    totalSupply: m.total_supply ?? null,
    athUsd: m.ath.usd ?? null,
    athDate: m.ath_date.usd ?? null,
    atlUsd: m.atl.usd ?? null,
    atlDate: m.atl_date.usd ?? null,
    lastUpdated: c.last_updated ?? m.last_updated ?? null,
  };
}

const Point = z.tuple([z.number(), z.number().nullable()]);
const ChartBody = z.object({ prices: z.array(Point), market_caps: z.array(Point), total_volumes: z.array(Point) });

/** `[unix_ms, value]` points, oldest first. */
export type ChartSeries = Array<[number, number]>;

/** Normalised `/coins/{id}/market_chart`. */
export interface MarketChart {
  prices: ChartSeries;
  marketCaps: ChartSeries;
  totalVolumes: ChartSeries;
}

/** Drops points whose value is null (CoinGecko sends them for gaps) and sorts by time. */
function clean(points: Array<[number, number | null]>): ChartSeries {
  return points.filter((p): p is [number, number] => p[1] !== null).sort((a, b) => a[0] - b[0]);
}

/**
 * Parses `GET /coins/{id}/market_chart?vs_currency=usd&days=N` (https://docs.coingecko.com/reference/coins-id-market-chart).
 * @throws AppError UPSTREAM_ERROR on an unexpected shape.
 */
export function parseMarketChart(raw: unknown): MarketChart {
  const r = ChartBody.safeParse(raw);
  if (!r.success) throw invalid("/coins/{id}/market_chart", r.error);
  return { prices: clean(r.data.prices), marketCaps: clean(r.data.market_caps), totalVolumes: clean(r.data.total_volumes) };
}
