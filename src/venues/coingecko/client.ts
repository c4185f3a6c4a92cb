import type { CoinGeckoConfig } from "../../config.js";
import { AppError } from "../../errors.js";
import { VenueHttpClient, VenueHttpError, type VenueHttpOptions } from "../../lib/venue-http.js";
import { parseCoin, parseMarketChart, parseSimplePrice, type CoinDetails, type MarketChart, type SimplePrice } from "./parse.js";

/** Venue key of CoinGecko in status, metrics and errors. */
export const COINGECKO = "coingecko";

/**
 * CoinGecko v3 client (public, Demo or Pro plan): `GET /simple/price`, `/coins/{id}`, `/coins/{id}/market_chart`.
 * The API key, when configured, is sent in `x-cg-demo-api-key` or `x-cg-pro-api-key`.
 * Errors: see {@link VenueHttpClient}; an unknown coin id becomes `NOT_FOUND`.
 */
export class CoinGeckoClient {
  private readonly http: VenueHttpClient;

  constructor(cfg: CoinGeckoConfig, opts: Pick<VenueHttpOptions, "timeoutMs" | "metrics" | "health" | "retries" | "maxWaitMs">) {
    const headers: Record<string, string> = {};
    if (cfg.apiKey) headers[cfg.plan === "pro" ? "x-cg-pro-api-key" : "x-cg-demo-api-key"] = cfg.apiKey;
    this.http = new VenueHttpClient({ venue: COINGECKO, baseUrl: cfg.baseUrl, headers, callsPerMin: cfg.callsPerMin, ...opts });
  }

  /** USD price, 24h change, volume and market cap of several coins in one call. */
  async simplePrice(ids: readonly string[]): Promise<SimplePrice[]> {
    const raw = await this.http.getJson("/simple/price", {
      ids: ids.join(","),
      vs_currencies: "usd",
      include_market_cap: true,
      include_24hr_vol: true,
      include_24hr_change: true,
      include_last_updated_at: true,
    });
    return parseSimplePrice(raw);
  }

  /** Market details of one coin. @throws AppError NOT_FOUND when CoinGecko does not know the id. */
  async coin(id: string): Promise<CoinDetails> {
    const raw = await this.http
      .getJson(`/coins/${encodeURIComponent(id)}`, {
        localization: false,
        tickers: false,
        market_data: true,
        community_data: false,
        developer_data: false,
        sparkline: false,
      })
      .catch(mapNotFound(id));
    return parseCoin(raw);
  }

  /** Price, market cap and volume series over the last `days` days (CoinGecko picks the granularity). */
  async marketChart(id: string, days: number): Promise<MarketChart> {
    const raw = await this.http.getJson(`/coins/${encodeURIComponent(id)}/market_chart`, { vs_currency: "usd", days }).catch(mapNotFound(id));
    return parseMarketChart(raw);
  }
}

function mapNotFound(id: string) {
  return (err: unknown): never => {
    if (err instanceof VenueHttpError) {
      if (err.status === 404) throw new AppError("NOT_FOUND", `coingecko does not know coin id '${id}'`);
      throw new AppError("UPSTREAM_ERROR", `coingecko refused the request (HTTP ${err.status})`);
    }
    throw err;
  };
}
