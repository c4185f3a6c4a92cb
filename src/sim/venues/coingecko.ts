/**
 * Simulated CoinGecko v3 public API (wire shapes of https://docs.coingecko.com/reference), mounted at
 * `/coingecko/api/v3`.
 *
 * Endpoints: `GET /ping`, `GET /simple/price`, `GET /coins/:id`, `GET /coins/:id/market_chart`.
 * Coin ids are the catalogue's `coingeckoId`s (exact, lowercase); only `usd` is priced.
 * `x-cg-demo-api-key` / `x-cg-pro-api-key` headers and `x_cg_*_api_key` query params are accepted and ignored.
 * All values come from the seeded {@link MarketModel}: simulated, not real market data.
 */
import { Router, type Request, type Response } from "express";
import { assetByIdOrSymbol, type AssetInfo } from "../../assets/catalogue.js";
import type { FaultResponses } from "../faults.js";
import type { SimVenue, VenueContext } from "./types.js";
import { MINUTE_MS, HOUR_MS, DAY_MS } from "../../lib/time.js";

const FIVE_MIN_MS = 5 * MINUTE_MS;
/** Public/Demo plans may not look back further than this many days. */
const PUBLIC_MAX_DAYS = 365;
/** `interval=hourly` reaches back at most this many days. */
const HOURLY_MAX_DAYS = 100;
const PRICING_URL = "https://www.coingecko.com/en/api/pricing";

/** CoinGecko-shaped bodies for injected 429s and 5xx (the 429 body is CoinGecko's public one). */
export const coingeckoFaultResponses: FaultResponses = {
  rateLimitBody: () => ({
    status: {
      error_code: 429,
      error_message: `You've exceeded the Rate Limit. Please visit ${PRICING_URL} to subscribe to our API plans for higher rate limits.`,
    },
  }),
  serverErrorBody: (status) => ({ status: { error_code: status, error_message: "Service temporarily unavailable (simulated)." } }),
};

/** Granularity of a market_chart series. */
type Granularity = "5m" | "hourly" | "daily";

/**
 * Timestamps (epoch ms) of a market_chart series ending at `now`, CoinGecko style: grid points in
 * [now - days, now) aligned to 5 minutes / the hour / 00:00 UTC, then `now` itself as the last point.
 */
export function chartTimestamps(nowMs: number, days: number, granularity: Granularity): number[] {
  const step = granularity === "5m" ? FIVE_MIN_MS : granularity === "hourly" ? HOUR_MS : DAY_MS;
  const start = nowMs - days * DAY_MS;
  const out: number[] = [];
  for (let t = Math.ceil(start / step) * step; t < nowMs; t += step) out.push(t);
  out.push(nowMs);
  return out;
}

/** CoinGecko's automatic granularity: <= 1 day → 5-minute, <= 90 days → hourly, beyond → daily. */
export function autoGranularity(days: number): Granularity {
  if (days <= 1) return "5m";
  if (days <= 90) return "hourly";
  return "daily";
}

/** First string value of a query parameter (repeated params: the first wins). */
function q(req: Request, name: string): string | undefined {
  const v: unknown = req.query[name];
  if (typeof v === "string") return v;
  if (Array.isArray(v) && typeof v[0] === "string") return v[0];
  return undefined;
}

function flag(req: Request, name: string, dflt: boolean): boolean {
  const v = q(req, name);
  if (v === undefined || v === "") return dflt;
  return v.trim().toLowerCase() === "true";
}

function csv(v: string): string[] {
  return [
    ...new Set(
      v
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter((s) => s.length > 0),
    ),
  ];
}

/** The catalogue asset whose CoinGecko id is exactly `id` (symbols are not ids on CoinGecko). */
function coinById(id: string): AssetInfo | undefined {
  const a = assetByIdOrSymbol(id);
  return a && a.coingeckoId === id ? a : undefined;
}

/** CoinGecko-like display rounding of a price: >= 10 000 whole dollars, >= 1 cents, below 6 significant digits. */
function roundPrice(p: number): number {
  if (p >= 10_000) return Math.round(p);
  if (p >= 1) return Math.round(p * 100) / 100;
  return Number(p.toPrecision(6));
}

/** Applies the `precision` query param (`full` or 0..18 decimals); otherwise the default display rounding. */
function pricePrecision(req: Request): ((p: number) => number) | { error: string } {
  const v = q(req, "precision");
  if (v === undefined || v === "") return roundPrice;
  if (v === "full") return (x) => x;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 18) return { error: "invalid precision" };
  return (x) => Number(x.toFixed(n));
}

function pct(now: number, then: number): number {
  return Number((((now - then) / then) * 100).toFixed(5));
}

function badRequest(res: Response, error: string): void {
  res.status(400).json({ error });
}

function coinNotFound(res: Response): void {
  res.status(404).json({ error: "coin not found" });
}

/** Builds the CoinGecko v3 router over the shared market model. */
export function createCoingeckoRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const router = Router();

  router.get("/ping", (_req, res) => {
    res.json({ gecko_says: "(V3) To the Moon!" });
  });

  router.get("/simple/price", (req, res) => {
    const idsRaw = q(req, "ids");
    const vsRaw = q(req, "vs_currencies");
    if (idsRaw === undefined || csv(idsRaw).length === 0) return badRequest(res, "Missing parameter ids");
    if (vsRaw === undefined || csv(vsRaw).length === 0) return badRequest(res, "Missing parameter vs_currencies");
    const round = pricePrecision(req);
    if (typeof round !== "function") return badRequest(res, round.error);
    const withCap = flag(req, "include_market_cap", false);
    const withVol = flag(req, "include_24hr_vol", false);
    const withChange = flag(req, "include_24hr_change", false);
    const withUpdated = flag(req, "include_last_updated_at", false);
    const vsList = csv(vsRaw);
    const now = clock.now();
    const body: Record<string, Record<string, number>> = {};
    for (const id of csv(idsRaw)) {
      const asset = coinById(id);
      if (!asset) continue; // unknown ids are simply absent
      const entry: Record<string, number> = {};
      for (const vs of vsList) {
        if (vs !== "usd") continue; // unsupported vs currencies are omitted
        const price = market.priceAt(asset.symbol, now);
        entry.usd = round(price);
        if (withCap) entry.usd_market_cap = price * market.circulatingSupply(asset.symbol);
        if (withVol) entry.usd_24h_vol = market.volume24hUsdAt(asset.symbol, now);
        if (withChange) {
          const before = market.priceAt(asset.symbol, now - DAY_MS);
          entry.usd_24h_change = ((price - before) / before) * 100;
        }
      }
      if (withUpdated) entry.last_updated_at = Math.floor(now / 1000);
      body[id] = entry;
    }
    res.json(body);
  });

  router.get("/coins/:id", (req, res) => {
    const id = String(req.params.id);
    const asset = coinById(id);
    if (!asset) return coinNotFound(res);
    const sym = asset.symbol;
    const now = clock.now();
    const nowIso = new Date(now).toISOString();
    const rank = market.marketCapRank(sym);
    const body: Record<string, unknown> = {
      id: asset.coingeckoId,
      symbol: sym.toLowerCase(),
      name: asset.name,
      web_slug: asset.coingeckoId,
      asset_platform_id: null,
    };
    if (flag(req, "localization", true)) body.localization = { en: asset.name };
    body.description = { en: "Simulated by the marketgate venue simulator; not real market data." };
    body.market_cap_rank = rank;
    if (flag(req, "market_data", true)) {
      const price = market.priceAt(sym, now);
      const before = (days: number) => market.priceAt(sym, now - days * DAY_MS);
      const p24 = before(1);
      const circ = market.circulatingSupply(sym);
      const total = market.totalSupply(sym);
      const max = market.maxSupply(sym);
      const mcap = price * circ;
      const mcap24 = p24 * circ;
      const { high, low } = market.highLow(sym, now - DAY_MS, now);
      const { ath, athDate, atl, atlDate } = market.athAtl(sym);
      const fdvSupply = max ?? total;
      const marketData: Record<string, unknown> = {
        current_price: { usd: roundPrice(price) },
        total_value_locked: null,
        mcap_to_tvl_ratio: null,
        fdv_to_tvl_ratio: null,
        roi: null,
        ath: { usd: roundPrice(ath) },
        ath_change_percentage: { usd: pct(price, ath) },
        ath_date: { usd: new Date(athDate).toISOString() },
        atl: { usd: roundPrice(atl) },
        atl_change_percentage: { usd: pct(price, atl) },
        atl_date: { usd: new Date(atlDate).toISOString() },
        market_cap: { usd: Math.round(mcap) },
        market_cap_rank: rank,
        fully_diluted_valuation: { usd: fdvSupply === null ? null : Math.round(price * fdvSupply) },
        total_volume: { usd: Math.round(market.volume24hUsdAt(sym, now)) },
        high_24h: { usd: roundPrice(high) },
        low_24h: { usd: roundPrice(low) },
        price_change_24h: price - p24,
        price_change_percentage_24h: pct(price, p24),
        price_change_percentage_7d: pct(price, before(7)),
        price_change_percentage_14d: pct(price, before(14)),
        price_change_percentage_30d: pct(price, before(30)),
        price_change_percentage_60d: pct(price, before(60)),
        price_change_percentage_200d: pct(price, before(200)),
        price_change_percentage_1y: pct(price, before(365)),
        market_cap_change_24h: mcap - mcap24,
        market_cap_change_percentage_24h: pct(mcap, mcap24),
        price_change_percentage_1h_in_currency: { usd: pct(price, market.priceAt(sym, now - HOUR_MS)) },
        price_change_percentage_24h_in_currency: { usd: pct(price, p24) },
        price_change_percentage_7d_in_currency: { usd: pct(price, before(7)) },
        total_supply: total,
        max_supply: max,
        circulating_supply: circ,
        last_updated: nowIso,
      };
      if (flag(req, "sparkline", false)) {
        const pts = chartTimestamps(now, 7, "hourly").slice(0, -1);
        marketData.sparkline_7d = { price: pts.map((t) => market.priceAt(sym, t)) };
      }
      body.market_data = marketData;
    }
    body.last_updated = nowIso;
    if (flag(req, "tickers", true)) body.tickers = [];
    res.json(body);
  });

  router.get("/coins/:id/market_chart", (req, res) => {
    const asset = coinById(String(req.params.id));
    if (!asset) return coinNotFound(res);
    const vs = q(req, "vs_currency");
    if (vs === undefined || vs.trim() === "") return badRequest(res, "Missing parameter vs_currency");
    if (vs.trim().toLowerCase() !== "usd") return badRequest(res, "invalid vs_currency");
    const daysRaw = q(req, "days");
    if (daysRaw === undefined || daysRaw.trim() === "") return badRequest(res, "Missing parameter days");
    const days = daysRaw.trim().toLowerCase() === "max" ? Infinity : Number(daysRaw);
    if (Number.isNaN(days) || days <= 0) return badRequest(res, "invalid days");
    const now = clock.now();
    if (days > PUBLIC_MAX_DAYS) {
      res.status(401).json({
        error: {
          status: {
            timestamp: new Date(now).toISOString().replace("Z", "+00:00"),
            error_code: 10012,
            error_message:
              "Your request exceeds the allowed time range. Public API users are limited to querying historical data " +
              `within the past 365 days. Upgrade to a paid plan to enjoy full historical data access: ${PRICING_URL}. `,
          },
        },
      });
      return;
    }
    const interval = (q(req, "interval") ?? "").trim().toLowerCase();
    let granularity: Granularity;
    if (interval === "") granularity = autoGranularity(days);
    else if (interval === "daily") granularity = "daily";
    else if (interval === "hourly") {
      if (days > HOURLY_MAX_DAYS) return badRequest(res, `interval=hourly is limited to days <= ${HOURLY_MAX_DAYS}`);
      granularity = "hourly";
    } else return badRequest(res, "invalid interval");
    const round = pricePrecision(req);
    if (typeof round !== "function") return badRequest(res, round.error);
    const round2 = q(req, "precision") === undefined ? (x: number) => x : round; // series are full precision by default
    const circ = market.circulatingSupply(asset.symbol);
    const prices: Array<[number, number]> = [];
    const marketCaps: Array<[number, number]> = [];
    const totalVolumes: Array<[number, number]> = [];
    for (const t of chartTimestamps(now, days, granularity)) {
      const price = market.priceAt(asset.symbol, t);
      prices.push([t, round2(price)]);
      marketCaps.push([t, price * circ]);
      totalVolumes.push([t, market.volume24hUsdAt(asset.symbol, t)]);
    }
    res.json({ prices, market_caps: marketCaps, total_volumes: totalVolumes });
  });

  return router;
}

/** The CoinGecko venue as the simulator server mounts it. */
export const coingeckoVenue = {
  name: "coingecko",
  mountPath: "/coingecko/api/v3",
  createRouter: createCoingeckoRouter,
  faultResponses: coingeckoFaultResponses,
} as const satisfies SimVenue<"coingecko">;
