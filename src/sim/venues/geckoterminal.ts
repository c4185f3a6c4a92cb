/**
 * Simulated GeckoTerminal public API v2 (`https://api.geckoterminal.com/api/v2`, mounted at `/geckoterminal/api/v2`),
 * wire shapes of https://apiguide.geckoterminal.com and the recorded bodies in src/sim/recordings/geckoterminal (JSON:API).
 *
 * Endpoints (network ids: eth, base, arbitrum, optimism, polygon_pos, bsc, avax, solana):
 * - `GET /networks/{network}/tokens/{token}/pools?page=&include=base_token,quote_token,dex&sort=` — pools where the
 *   token is base or quote, 20 per page, by 24h volume (`sort=h24_tx_count_desc` by swaps). As in the recorded WETH
 *   response, `token_price_usd`, `fdv_usd`, `market_cap_usd` and `price_change_percentage` describe the QUERIED token
 *   (its side of each pool), everything else the pool. `included` only when `include` asks for it;
 * - `GET /networks/{network}/pools?page=&include=` (top pools by 24h volume) and `GET /networks/{network}/pools/{pool}`
 *   (attributes of the base token);
 * - `GET /networks/{network}/pools/{pool}/ohlcv/{day|hour|minute}?aggregate=&before_timestamp=&limit=&currency=&token=
 *   &include_empty_intervals=` — rows `[ts_s, o, h, l, c, volume]` as numbers, newest first; aggregate day 1, hour
 *   1|4|12, minute 1|5|15 (else 400); limit default 100, capped at 1000; `before_timestamp` (seconds) keeps candles
 *   STARTING strictly before it; intervals without swaps are skipped unless `include_empty_intervals=true` (then flat
 *   at the last price, volume 0); `token=quote` (or the quote address) charts the quote token (and swaps `meta`);
 *   `currency=token` prices in the other token, volume in its units;
 * - `GET /networks/{network}/tokens/{token}?include=top_pools` and `GET /networks/{network}/tokens/multi/{a,b,…}` (≤ 30;
 *   unknown addresses left out, a single unknown token 404) — token resources (price from the most liquid pool, total
 *   reserve, 24h volume of its pools, `top_pools` by liquidity, at most 20, as `included` pools when asked), shape of
 *   the observed BSC ETH body in src/venues/geckoterminal/fixtures;
 * - `GET /simple/networks/{network}/token_price/{a,b,…}` (≤ 30; price from the token's most liquid pool; unknown
 *   addresses omitted; `include_market_cap`, `include_24hr_vol`, `include_24hr_price_change`,
 *   `include_total_reserve_in_usd`).
 * Numbers are strings as in the real payloads (never exponent notation); EVM addresses lowercase; ids
 * `<network>_<address>`. Unknown network/token/pool → 404 `{"errors":[{"status":"404","title":"Not Found"}]}`;
 * bad parameters → 400 `{"errors":[{"status":"400","title":…}]}`. Simulated (`dex-model.ts`), except replayed
 * requests (`replay.ts`).
 */
import { Router, type Request, type Response } from "express";
import {
  SIM_DEX_CHAINS,
  SIM_DEX_POOLS,
  chainOfVenueId,
  sameAddress,
  simDexPoolAt,
  simDexPoolsOfToken,
  simDexTokenAt,
  type SimDexChain,
  type SimDexPool,
  type SimDexToken,
} from "../dex-tokens.js";
import { DEX_WINDOW_MINUTES, OHLCV_AGGREGATES, dexModelFor, type DexModel, type OhlcvRow, type OhlcvTimeframe } from "../dex-model.js";
import type { FaultResponses } from "../faults.js";
import { fnv1a, hash4 } from "../market.js";
import { venueRecordings } from "../replay.js";
import type { SimVenue, VenueContext } from "./types.js";
import { gtAddress, gtMcap, gtPct, gtPrice, gtRatio, gtReserve, gtVolume, intString, uuidFrom } from "./dex-wire.js";
import { qp } from "./wire.js";
import { MINUTE_MS } from "../../lib/time.js";

const PAGE_SIZE = 20;
const MAX_PAGE = 10;
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const MAX_ADDRESSES = 30;
/** Most pools a token resource lists in `top_pools`. */
const TOP_POOLS = 20;
const PRICING_URL = "https://www.coingecko.com/en/api/pricing";
/** The recorded CBRL/SOL PumpSwap pool (see replay.ts). */
const REPLAY_CBRL_POOL = "7bqJG2ZdMKbEkgSmfuqNVBvqEvWavgL8UEo33ZqdL3NP";
const REPLAY_WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";

/** GeckoTerminal-shaped bodies for injected 429s (CoinGecko's public one) and 5xx (JSON:API errors). */
export const geckoterminalFaultResponses: FaultResponses = {
  rateLimitBody: () => ({
    status: {
      error_code: 429,
      error_message: `You've exceeded the Rate Limit. Please visit ${PRICING_URL} to subscribe to our API plans for higher rate limits.`,
    },
  }),
  serverErrorBody: (status) => ({ errors: [{ status: String(status), title: "Internal Server Error" }] }),
};

function notFound(res: Response): void {
  res.status(404).json({ errors: [{ status: "404", title: "Not Found" }] });
}

function badRequest(res: Response, title: string): void {
  res.status(400).json({ errors: [{ status: "400", title }] });
}

const isoSeconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const tokenId = (chain: SimDexChain, t: SimDexToken): string => `${SIM_DEX_CHAINS[chain].geckoterminal}_${gtAddress(t.address)}`;

function flag(req: Request, name: string): boolean {
  return (qp(req, name) ?? "").trim().toLowerCase() === "true";
}

/** JSON:API `pool` resource of `pool` at `now`; `subject` = the queried token (token-pools endpoint), else base. */
export function geckoterminalPool(dex: DexModel, pool: SimDexPool, now: number, subject?: SimDexToken): Record<string, unknown> {
  const snap = dex.snapshot(pool, now);
  const net = SIM_DEX_CHAINS[pool.chain].geckoterminal;
  const nat = dex.nativeUsd(pool.chain, now);
  const side: "base" | "quote" = subject && !sameAddress(subject.address, pool.base.address) && sameAddress(subject.address, pool.quote.address) ? "quote" : "base";
  const subj = side === "base" ? pool.base : pool.quote;
  const subjUsd = side === "base" ? snap.baseUsd : snap.quoteUsd;
  const native = (t: SimDexToken, usd: number) => (t.wrappedNative ? "1.0" : gtPrice(usd / nat));
  const sup = dex.supply(subj);
  const w = snap.windows;
  const change = (k: "m5" | "h1" | "h6" | "h24") => {
    if (w[k].buys + w[k].sells === 0) return "0";
    return gtPct((subjUsd / dex.sideUsd(pool, side, now - DEX_WINDOW_MINUTES[k] * MINUTE_MS) - 1) * 100);
  };
  const tx = (k: "m5" | "m15" | "m30" | "h1" | "h24") => ({
    buys: w[k].buys,
    sells: w[k].sells,
    buyers: pool.gtNullTraders ? null : w[k].buyers,
    sellers: pool.gtNullTraders ? null : w[k].sellers,
  });
  return {
    id: `${net}_${gtAddress(pool.address)}`,
    type: "pool",
    attributes: {
      base_token_price_usd: gtPrice(snap.baseUsd),
      base_token_price_native_currency: native(pool.base, snap.baseUsd),
      quote_token_price_usd: gtPrice(snap.quoteUsd),
      quote_token_price_native_currency: native(pool.quote, snap.quoteUsd),
      base_token_price_quote_token: gtRatio(snap.priceNative),
      quote_token_price_base_token: gtRatio(1 / snap.priceNative),
      address: gtAddress(pool.address),
      name: `${pool.base.symbol} / ${pool.quote.symbol}${pool.feeLabel ? ` ${pool.feeLabel}` : ""}`,
      pool_created_at: isoSeconds(dex.createdAt(pool)),
      token_price_usd: gtPrice(subjUsd),
      fdv_usd: intString(subjUsd * sup.total),
      market_cap_usd: sup.fromModel ? gtMcap(subjUsd * sup.circulating) : null,
      price_change_percentage: { m5: change("m5"), h1: change("h1"), h6: change("h6"), h24: change("h24") },
      transactions: { m5: tx("m5"), m15: tx("m15"), m30: tx("m30"), h1: tx("h1"), h24: tx("h24") },
      volume_usd: { m5: gtVolume(w.m5.volumeUsd), h1: gtVolume(w.h1.volumeUsd), h6: gtVolume(w.h6.volumeUsd), h24: gtVolume(w.h24.volumeUsd) },
      reserve_in_usd: gtReserve(snap.liquidityUsd),
    },
    relationships: {
      base_token: { data: { id: tokenId(pool.chain, pool.base), type: "token" } },
      quote_token: { data: { id: tokenId(pool.chain, pool.quote), type: "token" } },
      dex: { data: { id: pool.gtDexId, type: "dex" } },
    },
  };
}

function tokenResource(chain: SimDexChain, t: SimDexToken): Record<string, unknown> {
  return {
    id: tokenId(chain, t),
    type: "token",
    attributes: { address: gtAddress(t.address), name: t.name, symbol: t.symbol, coingecko_coin_id: t.coingeckoId },
  };
}

/** `included` resources for `pools` per the `include` parameter; undefined when nothing is asked. */
function included(req: Request, pools: readonly SimDexPool[]): Record<string, unknown>[] | undefined {
  const raw = qp(req, "include");
  if (raw === undefined) return undefined;
  const wanted = new Set(
    raw
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );
  if (wanted.size === 0) return undefined;
  const out: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  const add = (key: string, make: () => Record<string, unknown>) => {
    if (seen.has(key)) return;
    seen.add(key);
    out.push(make());
  };
  for (const p of pools) {
    if (wanted.has("base_token")) add(`token:${tokenId(p.chain, p.base)}`, () => tokenResource(p.chain, p.base));
    if (wanted.has("quote_token")) add(`token:${tokenId(p.chain, p.quote)}`, () => tokenResource(p.chain, p.quote));
    if (wanted.has("dex")) add(`dex:${p.gtDexId}`, () => ({ id: p.gtDexId, type: "dex", attributes: { name: p.gtDexName } }));
  }
  return out;
}

/** Parses `page` (default 1); null when malformed. */
function pageParam(req: Request): number | null {
  const raw = qp(req, "page");
  if (raw === undefined || raw.trim() === "") return 1;
  if (!/^\d+$/.test(raw.trim())) return null;
  const n = Number(raw);
  return n >= 1 ? n : null;
}

/** Decimals of a simulated token: the real ones of the common tokens (USDC/USDT 6 except on BNB Chain, BTC wrappers 8, SOL 9, Bonk 5, Solana memecoins 6), 18 otherwise. */
function simDecimals(t: SimDexToken): number {
  if (t.chain === "solana") return t.symbol === "SOL" ? 9 : t.symbol === "Bonk" ? 5 : 6;
  if (t.chain !== "bsc" && (t.role === "stable" || t.symbol === "USDt")) return 6;
  if (["WBTC", "cbBTC", "BTC.b", "WBTC.e"].includes(t.symbol)) return 8;
  return 18;
}

function tokenMeta(t: SimDexToken): Record<string, unknown> {
  return { address: gtAddress(t.address), name: t.name, symbol: t.symbol, coingecko_coin_id: t.coingeckoId };
}

type OhlcvBody = { data: { id: string; type: string; attributes: { ohlcv_list: OhlcvRow[] } }; meta?: unknown };

/** Builds the GeckoTerminal router over the shared market model. */
export function createGeckoterminalRouter(ctx: VenueContext): Router {
  const { clock } = ctx;
  const dex = dexModelFor(ctx.market);
  const replay = venueRecordings(ctx.replay, "geckoterminal");
  const seedH = fnv1a(`marketgate-sim-gt:${String(ctx.market.seed)}`);
  const router = Router();

  const requestId = (req: Request, now: number): string => {
    const k = fnv1a(req.originalUrl);
    return uuidFrom([hash4(seedH, k, now | 0, 1), hash4(seedH, k, Math.floor(now / 4294967296), 2), hash4(seedH, k, 3, 3), hash4(seedH, k, 4, 4)]);
  };

  const h24Volume = (p: SimDexPool, now: number) => dex.window(p, now, "h24").volumeUsd;
  const sortPools = (req: Request, pools: readonly SimDexPool[], now: number): SimDexPool[] => {
    const byTx = (qp(req, "sort") ?? "") === "h24_tx_count_desc";
    const key = new Map(
      pools.map((p) => {
        const w = dex.window(p, now, "h24");
        return [p.index, byTx ? w.buys + w.sells : w.volumeUsd] as const;
      }),
    );
    return [...pools].sort((a, b) => (key.get(b.index) ?? 0) - (key.get(a.index) ?? 0) || a.index - b.index);
  };
  const paged = (res: Response, req: Request, pools: readonly SimDexPool[], now: number, subject?: SimDexToken) => {
    const page = pageParam(req);
    if (page === null) return badRequest(res, "Invalid page");
    if (page > MAX_PAGE) return badRequest(res, `page must be at most ${MAX_PAGE}`);
    const slice = sortPools(req, pools, now).slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
    const body: Record<string, unknown> = { data: slice.map((p) => geckoterminalPool(dex, p, now, subject)) };
    const inc = included(req, slice);
    if (inc) body.included = inc;
    res.json(body);
  };

  router.get("/networks/:network/tokens/:token/pools", (req: Request, res: Response) => {
    const network = String(req.params.network);
    const address = String(req.params.token).trim();
    if (replay && network === "eth" && address.toLowerCase() === REPLAY_WETH) {
      const page = pageParam(req);
      if (page === null) return badRequest(res, "Invalid page");
      return void res.json(page === 1 ? replay.tokenPoolsEthWeth : { data: [] });
    }
    const chain = chainOfVenueId("geckoterminal", network);
    if (!chain) return notFound(res);
    const token = simDexTokenAt(chain, address);
    const pools = simDexPoolsOfToken(chain, address);
    if (!token || pools.length === 0) return notFound(res);
    paged(res, req, pools, clock.now(), token);
  });

  /** JSON:API token resource with its top pools (by liquidity), or undefined when the token has no pool. */
  const tokenBody = (chain: SimDexChain, address: string, now: number): { data: Record<string, unknown>; pools: SimDexPool[] } | undefined => {
    const token = simDexTokenAt(chain, address);
    const pools = simDexPoolsOfToken(chain, address);
    if (!token || pools.length === 0) return undefined;
    const liq = pools.map((p) => [p, dex.liquidityUsd(p, now)] as const).sort((x, y) => y[1] - x[1]);
    const top = liq.slice(0, TOP_POOLS).map((x) => x[0]);
    const best = top[0]!;
    const usd = dex.sideUsd(best, sameAddress(best.base.address, token.address) ? "base" : "quote", now);
    const sup = dex.supply(token);
    const net = SIM_DEX_CHAINS[chain].geckoterminal;
    return {
      pools: top,
      data: {
        id: tokenId(chain, token),
        type: "token",
        attributes: {
          address: token.address,
          name: token.name,
          symbol: token.symbol,
          decimals: simDecimals(token),
          image_url: null,
          coingecko_coin_id: token.coingeckoId,
          total_supply: intString(sup.total * 10 ** simDecimals(token)),
          price_usd: gtPrice(usd),
          fdv_usd: intString(usd * sup.total),
          total_reserve_in_usd: gtReserve(liq.reduce((s, x) => s + x[1], 0)),
          volume_usd: { h24: gtVolume(pools.reduce((s, p) => s + h24Volume(p, now), 0)) },
          market_cap_usd: sup.fromModel ? gtMcap(usd * sup.circulating) : null,
        },
        relationships: { top_pools: { data: top.map((p) => ({ id: `${net}_${gtAddress(p.address)}`, type: "pool" })) } },
      },
    };
  };
  const wantsTopPools = (req: Request) => (qp(req, "include") ?? "").split(",").some((s) => s.trim() === "top_pools");

  router.get("/networks/:network/tokens/multi/:addresses", (req: Request, res: Response) => {
    const chain = chainOfVenueId("geckoterminal", String(req.params.network));
    if (!chain) return notFound(res);
    const addrs = addressList(req);
    if (addrs.length > MAX_ADDRESSES) return badRequest(res, `Too many addresses, at most ${MAX_ADDRESSES}`);
    const now = clock.now();
    const found = addrs.flatMap((a) => tokenBody(chain, a, now) ?? []);
    const body: Record<string, unknown> = { data: found.map((f) => f.data) };
    if (wantsTopPools(req)) {
      const seen = new Set<number>();
      body.included = found.flatMap((f) => f.pools.filter((p) => !seen.has(p.index) && seen.add(p.index))).map((p) => geckoterminalPool(dex, p, now));
    }
    res.json(body);
  });

  router.get("/networks/:network/tokens/:token", (req: Request, res: Response) => {
    const chain = chainOfVenueId("geckoterminal", String(req.params.network));
    if (!chain) return notFound(res);
    const now = clock.now();
    const found = tokenBody(chain, String(req.params.token).trim(), now);
    if (!found) return notFound(res);
    const body: Record<string, unknown> = { data: found.data };
    if (wantsTopPools(req)) body.included = found.pools.map((p) => geckoterminalPool(dex, p, now));
    res.json(body);
  });

  router.get("/networks/:network/pools", (req: Request, res: Response) => {
    const network = String(req.params.network);
    if (replay && network === "eth") {
      const page = pageParam(req);
      if (page === null) return badRequest(res, "Invalid page");
      return void res.json(page === 1 ? replay.topPoolsEth : { data: [] });
    }
    const chain = chainOfVenueId("geckoterminal", network);
    if (!chain) return notFound(res);
    paged(
      res,
      req,
      SIM_DEX_POOLS.filter((p) => p.chain === chain),
      clock.now(),
    );
  });

  router.get("/networks/:network/pools/:pool/ohlcv/:timeframe", (req: Request, res: Response) => {
    const network = String(req.params.network);
    const address = String(req.params.pool).trim();
    const tfRaw = String(req.params.timeframe);
    if (!(tfRaw === "day" || tfRaw === "hour" || tfRaw === "minute")) return badRequest(res, "Invalid timeframe, must be one of day, hour, minute");
    const timeframe: OhlcvTimeframe = tfRaw;
    const allowed = OHLCV_AGGREGATES[timeframe];
    const aggRaw = (qp(req, "aggregate") ?? "").trim();
    const aggregate = aggRaw === "" ? 1 : /^\d+$/.test(aggRaw) ? Number(aggRaw) : NaN;
    if (!allowed.includes(aggregate)) {
      return badRequest(res, `Invalid aggregate for timeframe ${timeframe}, must be one of ${allowed.join(", ")}`);
    }
    const limRaw = (qp(req, "limit") ?? "").trim();
    let limit = DEFAULT_LIMIT;
    if (limRaw !== "") {
      if (!/^\d+$/.test(limRaw) || Number(limRaw) < 1) return badRequest(res, "Invalid limit");
      limit = Math.min(MAX_LIMIT, Number(limRaw));
    }
    const beforeRaw = (qp(req, "before_timestamp") ?? "").trim();
    let beforeSec: number | undefined;
    if (beforeRaw !== "") {
      if (!/^\d+$/.test(beforeRaw) || !Number.isSafeInteger(Number(beforeRaw))) return badRequest(res, "Invalid before_timestamp");
      beforeSec = Number(beforeRaw);
    }
    const currency = (qp(req, "currency") ?? "usd").trim().toLowerCase();
    if (currency !== "usd" && currency !== "token") return badRequest(res, "Invalid currency, must be one of usd, token");
    const includeEmpty = flag(req, "include_empty_intervals");

    if (replay && network === "solana" && address === REPLAY_CBRL_POOL) {
      const rec = timeframe === "minute" && aggregate === 15 ? replay.ohlcvCbrlMinute15 : timeframe === "hour" && aggregate === 1 ? replay.ohlcvCbrlHour1 : undefined;
      if (rec === undefined) return notFound(res);
      if (beforeSec === undefined && limRaw === "") return void res.json(rec);
      const body = rec as OhlcvBody;
      const rows = body.data.attributes.ohlcv_list.filter((r) => beforeSec === undefined || r[0] < beforeSec).slice(0, limit);
      return void res.json({ ...body, data: { ...body.data, attributes: { ...body.data.attributes, ohlcv_list: rows } } });
    }

    const chain = chainOfVenueId("geckoterminal", network);
    if (!chain) return notFound(res);
    const pool = simDexPoolAt(chain, address);
    if (!pool) return notFound(res);
    const tokenRaw = (qp(req, "token") ?? "base").trim();
    let side: "base" | "quote";
    if (tokenRaw === "base" || sameAddress(tokenRaw, pool.base.address)) side = "base";
    else if (tokenRaw === "quote" || sameAddress(tokenRaw, pool.quote.address)) side = "quote";
    else return badRequest(res, "Invalid token, must be base, quote or a token address of the pool");

    const now = clock.now();
    const rows = dex.candles(pool, { timeframe, aggregate, beforeMs: beforeSec === undefined ? undefined : beforeSec * 1000, limit, includeEmpty, side, currency }, now);
    const [charted, other] = side === "base" ? [pool.base, pool.quote] : [pool.quote, pool.base];
    res.json({
      data: { id: requestId(req, now), type: "ohlcv_request_response", attributes: { ohlcv_list: rows } },
      meta: { base: tokenMeta(charted), quote: tokenMeta(other) },
    });
  });

  router.get("/networks/:network/pools/:pool", (req: Request, res: Response) => {
    const chain = chainOfVenueId("geckoterminal", String(req.params.network));
    if (!chain) return notFound(res);
    const pool = simDexPoolAt(chain, String(req.params.pool).trim());
    if (!pool) return notFound(res);
    const body: Record<string, unknown> = { data: geckoterminalPool(dex, pool, clock.now()) };
    const inc = included(req, [pool]);
    if (inc) body.included = inc;
    res.json(body);
  });

  router.get("/simple/networks/:network/token_price/:addresses", (req: Request, res: Response) => {
    const chain = chainOfVenueId("geckoterminal", String(req.params.network));
    if (!chain) return notFound(res);
    const addrs = addressList(req);
    if (addrs.length > MAX_ADDRESSES) return badRequest(res, `Too many addresses, at most ${MAX_ADDRESSES}`);
    const now = clock.now();
    const prices: Record<string, string> = {};
    const mcap: Record<string, string | null> = {};
    const vol: Record<string, string> = {};
    const chg: Record<string, string> = {};
    const reserve: Record<string, string> = {};
    for (const a of addrs) {
      const token = simDexTokenAt(chain, a);
      const pools = simDexPoolsOfToken(chain, a);
      if (!token || pools.length === 0) continue;
      const liq = pools.map((p) => [p, dex.liquidityUsd(p, now)] as const).sort((x, y) => y[1] - x[1]);
      const top = liq[0]?.[0];
      if (!top) continue;
      const side = sameAddress(top.base.address, token.address) ? "base" : "quote";
      const usd = dex.sideUsd(top, side, now);
      const key = gtAddress(token.address);
      prices[key] = gtPrice(usd);
      const sup = dex.supply(token);
      mcap[key] = sup.fromModel ? gtMcap(usd * sup.circulating) : null;
      vol[key] = gtVolume(pools.reduce((s, p) => s + h24Volume(p, now), 0));
      chg[key] = gtPct((usd / dex.sideUsd(top, side, now - 1440 * MINUTE_MS) - 1) * 100);
      reserve[key] = gtReserve(liq.reduce((s, x) => s + x[1], 0));
    }
    const attributes: Record<string, unknown> = { token_prices: prices };
    if (flag(req, "include_market_cap")) attributes.market_cap_usd = mcap;
    if (flag(req, "include_24hr_vol")) attributes.h24_volume_usd = vol;
    if (flag(req, "include_24hr_price_change")) attributes.h24_price_change_percentage = chg;
    if (flag(req, "include_total_reserve_in_usd")) attributes.total_reserve_in_usd = reserve;
    res.json({ data: { id: requestId(req, now), type: "simple_token_price", attributes } });
  });

  return router;
}

/** The GeckoTerminal venue as the simulator server mounts it. */
export const geckoterminalVenue = {
  name: "geckoterminal",
  mountPath: "/geckoterminal/api/v2",
  createRouter: createGeckoterminalRouter,
  faultResponses: geckoterminalFaultResponses,
} as const satisfies SimVenue<"geckoterminal">;

/** The distinct, non-empty addresses of a `:addresses` path parameter (comma-separated, as GeckoTerminal takes them). */
function addressList(req: Request): string[] {
  const parts = String(req.params.addresses)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return [...new Set(parts)];
}
