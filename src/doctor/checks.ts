/**
 * The registry of `marketgate doctor` checks: every venue endpoint the service calls, each called once through the
 * service's own client (so the real request, budget and parser run), in the order the service needs them (a venue's
 * instrument list first). Adding an endpoint to a client means adding its check here.
 */
import type { Config } from "../config.js";
import type { Venues } from "../core/context.js";
import type { Metrics } from "../core/metrics.js";
import type { Logger } from "../lib/log.js";
import { AsterTradeBackfill } from "../venues/aster/backfill.js";
import { BinanceTradeBackfill } from "../venues/binance/backfill.js";
import { BitgetTradeBackfill } from "../venues/bitget/backfill.js";
import { BybitTradeBackfill } from "../venues/bybit/backfill.js";
import { DeribitTradeBackfill } from "../venues/deribit/backfill.js";
import type { TradeBackfill } from "../ingestion/backfill/common.js";
import { GateTradeBackfill } from "../venues/gate/backfill.js";
import { HyperliquidTradeBackfill } from "../venues/hyperliquid/backfill.js";
import { OkxTradeBackfill } from "../venues/okx/backfill.js";
import { createVenues } from "../venues/create.js";
import type { StreamVenue } from "../ingestion/types.js";
import type { VenueHealth } from "../core/venue-health.js";
import {
  binanceSpotPrice,
  coingeckoSimplePrice,
  dexscreenerTokens,
  geckoterminalOhlcv,
  geckoterminalTokenPools,
  perpFunding,
  PROBE_PERP as PERP,
  PROBE_WETH as WETH,
} from "./probes.js";

/** What the checks call: the service's venue clients and trade backfills, built from the configuration. */
export interface DoctorClients {
  venues: Venues;
  backfill: Record<StreamVenue, TradeBackfill>;
  health: VenueHealth;
  /** When the run started, epoch ms (backfill window). */
  now: number;
}

/** One check: a venue endpoint as the service uses it. */
export interface DoctorCheck {
  /** Unique id (`binance.instruments`). */
  readonly id: string;
  readonly venue: string;
  /** The endpoint(s) called, as printed (`GET /fapi/v1/premiumIndex`). */
  readonly endpoint: string;
  /** A check of the same venue that must pass first (the instrument list every symbol lookup needs). */
  readonly needs?: string;
  /** An empty list is a valid answer (recent trades of a quiet minute). */
  readonly allowEmpty?: boolean;
  /** Calls the endpoint through the service's client; resolves with what the parser returned. */
  run(c: DoctorClients): Promise<unknown>;
}

const all = (...calls: Array<Promise<unknown>>) => Promise.all(calls);

/** Every check, in run order (checks of one venue run one after the other; venues run side by side). */
export const DOCTOR_CHECKS: readonly DoctorCheck[] = [
  { id: "binance.instruments", venue: "binance", endpoint: "GET /fapi/v1/exchangeInfo, /fapi/v1/fundingInfo", run: (c) => c.venues.perps.binance.instruments() },
  {
    id: "binance.premiumIndex",
    venue: "binance",
    endpoint: "GET /fapi/v1/premiumIndex",
    needs: "binance.instruments",
    run: (c) => all(c.venues.perps.binance.fundingAll(), perpFunding("binance")(c.venues)),
  },
  { id: "binance.fundingRate", venue: "binance", endpoint: "GET /fapi/v1/fundingRate", needs: "binance.instruments", run: (c) => c.venues.perps.binance.fundingHistory(PERP, 3) },
  { id: "binance.openInterest", venue: "binance", endpoint: "GET /fapi/v1/openInterest", needs: "binance.instruments", run: (c) => c.venues.perps.binance.openInterest(PERP) },
  {
    id: "binance.longShort",
    venue: "binance",
    endpoint: "GET /futures/data/topLongShortPositionRatio",
    needs: "binance.instruments",
    run: (c) => c.venues.perps.binance.longShort(PERP),
  },
  { id: "binance.klines", venue: "binance", endpoint: "GET /fapi/v1/klines", needs: "binance.instruments", run: (c) => c.venues.perps.binance.hourlyCandles!(PERP, 3) },
  { id: "binance.spotPrice", venue: "binance", endpoint: "GET /api/v3/ticker/price (spot)", run: (c) => binanceSpotPrice(c.venues) },
  {
    id: "binance.aggTrades",
    venue: "binance",
    endpoint: "GET /fapi/v1/aggTrades (trade backfill)",
    needs: "binance.instruments",
    allowEmpty: true,
    run: (c) => c.backfill.binance.fetchTrades(PERP, c.now - 60_000, c.now),
  },

  { id: "bybit.instruments", venue: "bybit", endpoint: "GET /v5/market/instruments-info", run: (c) => c.venues.perps.bybit.instruments() },
  {
    id: "bybit.tickers",
    venue: "bybit",
    endpoint: "GET /v5/market/tickers",
    needs: "bybit.instruments",
    run: (c) => all(c.venues.perps.bybit.fundingAll(), perpFunding("bybit")(c.venues), c.venues.perps.bybit.openInterest(PERP)),
  },
  { id: "bybit.fundingHistory", venue: "bybit", endpoint: "GET /v5/market/funding/history", needs: "bybit.instruments", run: (c) => c.venues.perps.bybit.fundingHistory(PERP, 3) },
  { id: "bybit.accountRatio", venue: "bybit", endpoint: "GET /v5/market/account-ratio", needs: "bybit.instruments", run: (c) => c.venues.perps.bybit.longShort(PERP) },
  { id: "bybit.riskLimit", venue: "bybit", endpoint: "GET /v5/market/risk-limit", needs: "bybit.instruments", run: (c) => c.venues.perps.bybit.marginTiers!(PERP) },
  {
    id: "bybit.recentTrade",
    venue: "bybit",
    endpoint: "GET /v5/market/recent-trade (trade backfill)",
    needs: "bybit.instruments",
    allowEmpty: true,
    run: (c) => c.backfill.bybit.fetchTrades(PERP, c.now - 60_000, c.now),
  },

  { id: "bitget.contracts", venue: "bitget", endpoint: "GET /api/v2/mix/market/contracts", run: (c) => c.venues.perps.bitget.instruments() },
  {
    id: "bitget.tickers",
    venue: "bitget",
    endpoint: "GET /api/v2/mix/market/tickers, /api/v2/mix/market/ticker",
    needs: "bitget.contracts",
    run: (c) => all(c.venues.perps.bitget.fundingAll(), perpFunding("bitget")(c.venues), c.venues.perps.bitget.openInterest(PERP)),
  },
  {
    id: "bitget.historyFundRate",
    venue: "bitget",
    endpoint: "GET /api/v2/mix/market/history-fund-rate",
    needs: "bitget.contracts",
    run: (c) => c.venues.perps.bitget.fundingHistory(PERP, 3),
  },
  {
    id: "bitget.accountLongShort",
    venue: "bitget",
    endpoint: "GET /api/v2/mix/market/account-long-short",
    needs: "bitget.contracts",
    run: (c) => c.venues.perps.bitget.longShort(PERP),
  },
  {
    id: "bitget.positionTiers",
    venue: "bitget",
    endpoint: "GET /api/v2/mix/market/query-position-lever",
    needs: "bitget.contracts",
    run: (c) => c.venues.perps.bitget.marginTiers!(PERP),
  },
  { id: "bitget.candles", venue: "bitget", endpoint: "GET /api/v2/mix/market/candles", needs: "bitget.contracts", run: (c) => c.venues.perps.bitget.hourlyCandles!(PERP, 3) },
  {
    id: "bitget.fillsHistory",
    venue: "bitget",
    endpoint: "GET /api/v2/mix/market/fills-history (trade backfill)",
    needs: "bitget.contracts",
    allowEmpty: true,
    run: (c) => c.backfill.bitget.fetchTrades(PERP, c.now - 60_000, c.now),
  },

  { id: "okx.instruments", venue: "okx", endpoint: "GET /api/v5/public/instruments", run: (c) => c.venues.perps.okx.instruments() },
  {
    id: "okx.fundingRate",
    venue: "okx",
    endpoint: "GET /api/v5/public/funding-rate, /public/mark-price, /market/index-tickers",
    needs: "okx.instruments",
    run: (c) => all(c.venues.perps.okx.fundingAll(), perpFunding("okx")(c.venues)),
  },
  { id: "okx.fundingHistory", venue: "okx", endpoint: "GET /api/v5/public/funding-rate-history", needs: "okx.instruments", run: (c) => c.venues.perps.okx.fundingHistory(PERP, 3) },
  { id: "okx.openInterest", venue: "okx", endpoint: "GET /api/v5/public/open-interest", needs: "okx.instruments", run: (c) => c.venues.perps.okx.openInterest(PERP) },
  {
    id: "okx.longShort",
    venue: "okx",
    endpoint: "GET /api/v5/rubik/stat/contracts/long-short-position-ratio-contract-top-trader",
    needs: "okx.instruments",
    run: (c) => c.venues.perps.okx.longShort(PERP),
  },
  { id: "okx.positionTiers", venue: "okx", endpoint: "GET /api/v5/public/position-tiers", needs: "okx.instruments", run: (c) => c.venues.perps.okx.marginTiers!(PERP) },
  { id: "okx.candles", venue: "okx", endpoint: "GET /api/v5/market/candles", needs: "okx.instruments", run: (c) => c.venues.perps.okx.hourlyCandles!(PERP, 3) },
  {
    id: "okx.historyTrades",
    venue: "okx",
    endpoint: "GET /api/v5/market/history-trades (trade backfill)",
    needs: "okx.instruments",
    allowEmpty: true,
    run: (c) => c.backfill.okx.fetchTrades(PERP, c.now - 60_000, c.now),
  },

  { id: "gate.contracts", venue: "gate", endpoint: "GET /futures/usdt/contracts", run: (c) => c.venues.perps.gate.instruments() },
  {
    id: "gate.funding",
    venue: "gate",
    endpoint: "GET /futures/usdt/contracts (funding_rate, funding_rate_indicative)",
    needs: "gate.contracts",
    run: (c) => all(c.venues.perps.gate.fundingAll(), perpFunding("gate")(c.venues), c.venues.perps.gate.predictedFunding!(PERP)),
  },
  { id: "gate.fundingRate", venue: "gate", endpoint: "GET /futures/usdt/funding_rate", needs: "gate.contracts", run: (c) => c.venues.perps.gate.fundingHistory(PERP, 3) },
  {
    id: "gate.contractStats",
    venue: "gate",
    endpoint: "GET /futures/usdt/contract_stats",
    needs: "gate.contracts",
    run: (c) => all(c.venues.perps.gate.openInterest(PERP), c.venues.perps.gate.longShort(PERP), c.venues.perps.gate.openInterestHistory!(PERP, 3)),
  },
  { id: "gate.riskLimitTiers", venue: "gate", endpoint: "GET /futures/usdt/risk_limit_tiers", needs: "gate.contracts", run: (c) => c.venues.perps.gate.marginTiers!(PERP) },
  { id: "gate.candlesticks", venue: "gate", endpoint: "GET /futures/usdt/candlesticks", needs: "gate.contracts", run: (c) => c.venues.perps.gate.hourlyCandles!(PERP, 3) },
  {
    id: "gate.trades",
    venue: "gate",
    endpoint: "GET /futures/usdt/trades (trade backfill)",
    needs: "gate.contracts",
    allowEmpty: true,
    run: (c) => c.backfill.gate.fetchTrades(PERP, c.now - 60_000, c.now),
  },

  {
    id: "hyperliquid.metaAndAssetCtxs",
    venue: "hyperliquid",
    endpoint: "POST /info metaAndAssetCtxs",
    run: async (c) => {
      const hl = c.venues.perps.hyperliquid;
      const list = await hl.instruments();
      await all(hl.fundingAll(), hl.openInterest(PERP), hl.marginTiers!(PERP));
      return list;
    },
  },
  {
    id: "hyperliquid.fundingHistory",
    venue: "hyperliquid",
    endpoint: "POST /info fundingHistory",
    needs: "hyperliquid.metaAndAssetCtxs",
    run: (c) => c.venues.perps.hyperliquid.fundingHistory(PERP, 3),
  },
  { id: "hyperliquid.predictedFundings", venue: "hyperliquid", endpoint: "POST /info predictedFundings", run: (c) => c.venues.predictions.predictedFundings() },
  {
    id: "hyperliquid.recentTrades",
    venue: "hyperliquid",
    endpoint: "POST /info recentTrades (trade backfill)",
    needs: "hyperliquid.metaAndAssetCtxs",
    allowEmpty: true,
    run: (c) => c.backfill.hyperliquid.fetchTrades(PERP, c.now - 60_000, c.now),
  },

  { id: "aster.instruments", venue: "aster", endpoint: "GET /fapi/v1/exchangeInfo, /fapi/v1/fundingInfo", run: (c) => c.venues.perps.aster.instruments() },
  {
    id: "aster.premiumIndex",
    venue: "aster",
    endpoint: "GET /fapi/v1/premiumIndex",
    needs: "aster.instruments",
    run: (c) => all(c.venues.perps.aster.fundingAll(), c.venues.perps.aster.predictedFunding!(PERP)),
  },
  { id: "aster.fundingRate", venue: "aster", endpoint: "GET /fapi/v1/fundingRate", needs: "aster.instruments", run: (c) => c.venues.perps.aster.fundingHistory(PERP, 3) },
  { id: "aster.openInterest", venue: "aster", endpoint: "GET /fapi/v1/openInterest", needs: "aster.instruments", run: (c) => c.venues.perps.aster.openInterest(PERP) },
  { id: "aster.klines", venue: "aster", endpoint: "GET /fapi/v1/klines", needs: "aster.instruments", run: (c) => c.venues.perps.aster.hourlyCandles!(PERP, 3) },
  {
    id: "aster.aggTrades",
    venue: "aster",
    endpoint: "GET /fapi/v1/aggTrades (trade backfill)",
    needs: "aster.instruments",
    allowEmpty: true,
    run: (c) => c.backfill.aster.fetchTrades(PERP, c.now - 60_000, c.now),
  },

  { id: "deribit.instruments", venue: "deribit", endpoint: "GET /public/get_instruments", run: (c) => c.venues.perps.deribit.instruments() },
  {
    id: "deribit.bookSummary",
    venue: "deribit",
    endpoint: "GET /public/get_book_summary_by_currency",
    needs: "deribit.instruments",
    run: (c) => c.venues.perps.deribit.fundingAll(),
  },
  {
    id: "deribit.ticker",
    venue: "deribit",
    endpoint: "GET /public/ticker",
    needs: "deribit.instruments",
    run: (c) => all(c.venues.perps.deribit.funding(PERP), c.venues.perps.deribit.openInterest(PERP)),
  },
  {
    id: "deribit.fundingRateHistory",
    venue: "deribit",
    endpoint: "GET /public/get_funding_rate_history",
    needs: "deribit.instruments",
    run: (c) => c.venues.perps.deribit.fundingHistory(PERP, 3),
  },
  {
    id: "deribit.chartData",
    venue: "deribit",
    endpoint: "GET /public/get_tradingview_chart_data",
    needs: "deribit.instruments",
    run: (c) => c.venues.perps.deribit.hourlyCandles!(PERP, 3),
  },
  {
    id: "deribit.lastTrades",
    venue: "deribit",
    endpoint: "GET /public/get_last_trades_by_instrument (trade backfill)",
    needs: "deribit.instruments",
    allowEmpty: true,
    run: (c) => c.backfill.deribit.fetchTrades(PERP, c.now - 60_000, c.now),
  },

  { id: "coingecko.simplePrice", venue: "coingecko", endpoint: "GET /simple/price", run: (c) => coingeckoSimplePrice(c.venues) },
  { id: "coingecko.coin", venue: "coingecko", endpoint: "GET /coins/{id}", run: (c) => c.venues.coingecko.coin("bitcoin") },
  { id: "coingecko.marketChart", venue: "coingecko", endpoint: "GET /coins/{id}/market_chart", run: (c) => c.venues.coingecko.marketChart("bitcoin", 1) },

  { id: "dexscreener.tokenPairs", venue: "dexscreener", endpoint: "GET /token-pairs/v1/{chain}/{token}", run: (c) => c.venues.dexscreener.tokenPairs("ethereum", WETH) },
  { id: "dexscreener.tokens", venue: "dexscreener", endpoint: "GET /tokens/v1/{chain}/{tokens}", run: (c) => dexscreenerTokens(c.venues) },
  { id: "dexscreener.search", venue: "dexscreener", endpoint: "GET /latest/dex/search", run: (c) => c.venues.dexscreener.search("WETH/USDC") },

  { id: "geckoterminal.tokenPools", venue: "geckoterminal", endpoint: "GET /networks/{network}/tokens/{token}/pools", run: (c) => geckoterminalTokenPools(c.venues) },
  {
    id: "geckoterminal.ohlcv",
    venue: "geckoterminal",
    endpoint: "GET /networks/{network}/pools/{pool}/ohlcv/{timeframe}",
    needs: "geckoterminal.tokenPools",
    run: (c) => geckoterminalOhlcv(3)(c.venues),
  },
];

/**
 * The service's venue clients and trade backfills for `config`, exactly as the service builds them (base URLs,
 * budgets, timeouts, circuit breakers), without its streams, alerts or stores.
 */
export function doctorClients(config: Config, deps: { metrics: Metrics; log: Logger; version: string; now: number }): DoctorClients {
  const { venues, health } = createVenues(config, { metrics: deps.metrics });
  health.configureCircuits(config.circuit);
  const v = config.venues;
  const { perps } = venues;
  const rest = { timeoutMs: config.upstreamTimeoutMs, metrics: deps.metrics, logger: deps.log };
  return {
    venues,
    health,
    now: deps.now,
    backfill: {
      binance: new BinanceTradeBackfill({ ...rest, instruments: perps.binance, baseUrl: v.binanceFapi }),
      bybit: new BybitTradeBackfill({ ...rest, instruments: perps.bybit, baseUrl: v.bybit }),
      okx: new OkxTradeBackfill({ ...rest, instruments: perps.okx, baseUrl: v.okx }),
      gate: new GateTradeBackfill({ ...rest, instruments: perps.gate, baseUrl: v.gate }),
      hyperliquid: new HyperliquidTradeBackfill({ ...rest, instruments: perps.hyperliquid, baseUrl: v.hyperliquid }),
      bitget: new BitgetTradeBackfill({ ...rest, instruments: perps.bitget, baseUrl: v.bitget }),
      deribit: new DeribitTradeBackfill({ ...rest, instruments: perps.deribit, baseUrl: v.deribit }),
      aster: new AsterTradeBackfill({ ...rest, instruments: perps.aster, baseUrl: v.aster }),
    },
  };
}
