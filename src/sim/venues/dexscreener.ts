/**
 * Simulated DexScreener public API (`https://api.dexscreener.com`, mounted at `/dexscreener`), wire shapes of
 * the DexScreener docs (https://docs.dexscreener.com/api/reference) and the recorded pairs in src/sim/recordings/dexscreener.
 *
 * Endpoints:
 * - `GET /token-pairs/v1/{chainId}/{tokenAddress}` → `[Pair]`: every pool where the token is base OR quote;
 * - `GET /tokens/v1/{chainId}/{addr1,addr2,…}` → `[Pair]` (first 30 addresses; pools of any of them, deduplicated);
 * - `GET /latest/dex/search?q=` → `{"schemaVersion":"1.0.0","pairs":[Pair]}` (≤ 30; `q` = symbol, name part,
 *   token or pair address, or `BASE/QUOTE`; `ETH` also finds `WETH`);
 * - `GET /latest/dex/pairs/{chainId}/{pair1,…}` → `{"schemaVersion":"1.0.0","pairs":[Pair],"pair":Pair}`
 *   (`pairs`/`pair` null when unknown).
 * Lists are sorted by liquidity (USD, pools without one last). Addresses match case-insensitively on EVM chains,
 * exactly on Solana; unknown chains give empty results. Pair fields: `priceUsd`/`priceNative` strings; `txns`,
 * `volume`, `priceChange`, `liquidity`, `fdv`, `marketCap`, `pairCreatedAt` numbers; a `priceChange` window key is
 * omitted when the pool had no swap in that window; dust pools may lack `liquidity`/`fdv`/`marketCap`, or carry an
 * absurd exponent-spelled `priceChange.h24` (as a real BSC dust pool does).
 * All values are simulated (`dex-model.ts`), except replayed requests (`replay.ts`).
 */
import { Router, type Request, type Response } from "express";
import { SIM_DEX_CHAINS, SIM_DEX_POOLS, chainOfVenueId, sameAddress, type SimDexPool, type SimDexToken } from "../dex-tokens.js";
import { dexModelFor, type DexModel } from "../dex-model.js";
import type { FaultResponses } from "../faults.js";
import { venueRecordings } from "../replay.js";
import type { SimVenue, VenueContext } from "./types.js";
import { ds2, dsPriceNative, dsPriceUsd, dsReserve } from "./dex-wire.js";
import { qp } from "./wire.js";

const SCHEMA_VERSION = "1.0.0";
const MAX_RESULTS = 30;
const MAX_ADDRESSES = 30;

/** DexScreener-shaped bodies for injected 429s and 5xx. */
export const dexscreenerFaultResponses: FaultResponses = {
  rateLimitBody: () => ({ error: "Too Many Requests (simulated)" }),
  serverErrorBody: (status) => ({ error: "Internal Server Error (simulated)", status }),
};

/** One DexScreener `Pair` object for `pool` at `now`. */
export function dexscreenerPair(dex: DexModel, pool: SimDexPool, now: number): Record<string, unknown> {
  const snap = dex.snapshot(pool, now);
  const chainId = SIM_DEX_CHAINS[pool.chain].dexscreener;
  const pair: Record<string, unknown> = {
    chainId,
    dexId: pool.dexId,
    url: `https://dexscreener.com/${chainId}/${pool.chain === "solana" ? pool.address : pool.address.toLowerCase()}`,
    pairAddress: pool.address,
  };
  if (pool.labels) pair.labels = [...pool.labels];
  const token = (t: SimDexToken) => ({ address: t.address, name: t.name, symbol: t.symbol });
  pair.baseToken = token(pool.base);
  pair.quoteToken = token(pool.quote);
  pair.priceNative = dsPriceNative(snap.priceNative);
  pair.priceUsd = dsPriceUsd(snap.baseUsd);
  const w = snap.windows;
  const tx = (s: { buys: number; sells: number }) => ({ buys: s.buys, sells: s.sells });
  pair.txns = { m5: tx(w.m5), h1: tx(w.h1), h6: tx(w.h6), h24: tx(w.h24) };
  pair.volume = { h24: ds2(w.h24.volumeUsd), h6: ds2(w.h6.volumeUsd), h1: ds2(w.h1.volumeUsd), m5: ds2(w.m5.volumeUsd) };
  const change: Record<string, number> = {};
  for (const k of ["m5", "h1", "h6", "h24"] as const) {
    if (k === "h24" && pool.dsAbsurdChange24h !== null) change.h24 = pool.dsAbsurdChange24h;
    else if (w[k].buys + w[k].sells > 0) change[k] = ds2(snap.baseChangePct[k]);
  }
  pair.priceChange = change;
  if (!pool.dsOmitLiquidity) {
    pair.liquidity = { usd: ds2(snap.liquidityUsd), base: dsReserve(snap.baseReserve), quote: dsReserve(snap.quoteReserve) };
    const sup = dex.supply(pool.base);
    pair.fdv = ds2(snap.baseUsd * sup.total);
    pair.marketCap = ds2(snap.baseUsd * sup.circulating);
  }
  pair.pairCreatedAt = dex.createdAt(pool);
  return pair;
}

function byLiquidity(dex: DexModel, now: number, pools: readonly SimDexPool[]): SimDexPool[] {
  const liq = new Map(pools.map((p) => [p.index, p.dsOmitLiquidity ? -1 : dex.liquidityUsd(p, now)]));
  return [...pools].sort((a, b) => (liq.get(b.index) ?? 0) - (liq.get(a.index) ?? 0) || a.index - b.index);
}

function tokenMatches(t: SimDexToken, term: string): boolean {
  const sym = t.symbol.toLowerCase().replace(/^\$/, "");
  if (sym === term || sym === `w${term}`) return true;
  if (sameAddress(t.address, term) || t.address.toLowerCase() === term) return true;
  return term.length >= 3 && t.name.toLowerCase().includes(term);
}

/** Pools matching a search query (see the module comment). */
export function searchPools(q: string): SimDexPool[] {
  const query = q.trim().toLowerCase();
  if (query === "") return [];
  const parts = query.split(/[\s/]+/).filter((s) => s.length > 0);
  return SIM_DEX_POOLS.filter((p) => {
    if (parts.length === 1) {
      const term = parts[0] ?? "";
      return p.address.toLowerCase() === term || tokenMatches(p.base, term) || tokenMatches(p.quote, term);
    }
    const [a = "", b = ""] = parts;
    return (tokenMatches(p.base, a) && tokenMatches(p.quote, b)) || (tokenMatches(p.base, b) && tokenMatches(p.quote, a));
  });
}

interface RecordedPair {
  chainId?: string;
  pairAddress?: string;
}

/** Builds the DexScreener router over the shared market model. */
export function createDexscreenerRouter(ctx: VenueContext): Router {
  const { clock } = ctx;
  const dex = dexModelFor(ctx.market);
  const replay = venueRecordings(ctx.replay, "dexscreener");
  const router = Router();

  const pairsOf = (pools: readonly SimDexPool[], now: number) => byLiquidity(dex, now, pools).map((p) => dexscreenerPair(dex, p, now));

  const tokenPools = (chainId: string, addresses: readonly string[]): SimDexPool[] => {
    const chain = chainOfVenueId("dexscreener", chainId);
    if (!chain) return [];
    return SIM_DEX_POOLS.filter((p) => p.chain === chain && addresses.some((a) => sameAddress(p.base.address, a) || sameAddress(p.quote.address, a)));
  };

  router.get("/token-pairs/v1/:chainId/:tokenAddress", (req: Request, res: Response) => {
    const now = clock.now();
    res.json(pairsOf(tokenPools(String(req.params.chainId), [String(req.params.tokenAddress).trim()]), now));
  });

  router.get("/tokens/v1/:chainId/:tokenAddresses", (req: Request, res: Response) => {
    const now = clock.now();
    const addrs = String(req.params.tokenAddresses)
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
      .slice(0, MAX_ADDRESSES);
    res.json(pairsOf(tokenPools(String(req.params.chainId), addrs), now));
  });

  router.get("/latest/dex/search", (req: Request, res: Response) => {
    const q = qp(req, "q") ?? "";
    if (replay) {
      const key = q.trim().toLowerCase();
      if (key === "luna") return void res.json(replay.searchLuna);
      if (key === "babydojo") return void res.json(replay.searchBabyDojo);
    }
    const now = clock.now();
    res.json({ schemaVersion: SCHEMA_VERSION, pairs: pairsOf(searchPools(q), now).slice(0, MAX_RESULTS) });
  });

  router.get("/latest/dex/pairs/:chainId/:pairAddresses", (req: Request, res: Response) => {
    const chainId = String(req.params.chainId);
    const addrs = String(req.params.pairAddresses)
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
      .slice(0, MAX_ADDRESSES);
    if (replay) {
      const recorded = [replay.searchLuna, replay.searchBabyDojo].flatMap((r) => (r as { pairs?: RecordedPair[] }).pairs ?? []);
      const hits = addrs
        .map((a) => recorded.find((p) => p.chainId === chainId && typeof p.pairAddress === "string" && sameAddress(p.pairAddress, a)))
        .filter((p): p is RecordedPair => p !== undefined);
      if (hits.length > 0) return void res.json({ schemaVersion: SCHEMA_VERSION, pairs: hits, pair: hits[0] });
    }
    const now = clock.now();
    const chain = chainOfVenueId("dexscreener", chainId);
    const found = chain ? addrs.map((a) => SIM_DEX_POOLS.find((p) => p.chain === chain && sameAddress(p.address, a))).filter((p): p is SimDexPool => p !== undefined) : [];
    if (found.length === 0) return void res.json({ schemaVersion: SCHEMA_VERSION, pairs: null, pair: null });
    const pairs = found.map((p) => dexscreenerPair(dex, p, now));
    res.json({ schemaVersion: SCHEMA_VERSION, pairs, pair: pairs[0] });
  });

  return router;
}

/** The DexScreener venue as the simulator server mounts it. */
export const dexscreenerVenue = {
  name: "dexscreener",
  mountPath: "/dexscreener",
  createRouter: createDexscreenerRouter,
  faultResponses: dexscreenerFaultResponses,
} as const satisfies SimVenue<"dexscreener">;
