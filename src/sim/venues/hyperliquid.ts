/**
 * Simulated Hyperliquid info API (`api.hyperliquid.xyz`, mounted at `/hyperliquid`), wire shapes of the
 * Hyperliquid docs (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/info-endpoint/perpetuals).
 *
 * `POST /info` with a JSON body selected by `type`: `meta`, `metaAndAssetCtxs`, `allMids`, `fundingHistory`
 * (`coin`, `startTime`, optional `endTime`; ≤ 500 rows, oldest first), `predictedFundings` (Binance, Hyperliquid and
 * Bybit predicted rates per coin, each in its venue's own interval), `recentTrades` (`coin`; the 10 most recent trades
 * of the websocket's `trades` tape, newest first, like the real API's short window). Values are strings, times numbers (ms).
 * `funding` is HOURLY: the Binance-style 8h formula divided by 8. `kPEPE` / `kSHIB` quote per 1000 coins. `MATIC`
 * stays in the universe flagged `isDelisted` (zero OI, null premium/midPx/impactPxs), like delisted coins on the real
 * venue. Unknown `type` → HTTP 422 plain text, as the real API does. All values are simulated (`perp-model.ts`),
 * except replayed types (`replay.ts`).
 */
import express, { Router, type Request, type Response } from "express";
import type { FaultResponses } from "../faults.js";
import { perpModelFor, type PerpInstrumentSpec, type PerpModel } from "../perp-model.js";
import { venueRecordings } from "../replay.js";
import { hlHash, hlTid, hlUsers, tapeFor } from "../tape.js";
import type { SimVenue, VenueContext } from "./types.js";
import { DAY, hlNum, hlPx } from "./wire.js";

const INFO_TYPES = ["meta", "metaAndAssetCtxs", "allMids", "fundingHistory", "predictedFundings", "recentTrades"] as const;
/** Trades `recentTrades` returns. */
export const HL_RECENT_TRADES = 10;
const MAX_FUNDING_ROWS = 500;

/** Hyperliquid-shaped bodies for injected 429s and 5xx. */
export const hyperliquidFaultResponses: FaultResponses = {
  rateLimitBody: () => ({ error: "Too many requests (simulated)" }),
  serverErrorBody: (status) => ({ error: "Internal server error (simulated)", status }),
};

const rateStr = (x: number): string => hlNum(x, 10);

function marginTable(maxLeverage: number, base: string): [number, Record<string, unknown>] {
  if (base === "BTC") {
    return [
      56,
      {
        description: "tiered 40x",
        marginTiers: [
          { lowerBound: "0.0", maxLeverage: 40 },
          { lowerBound: "150000000.0", maxLeverage: 20 },
        ],
      },
    ];
  }
  if (base === "ETH") {
    return [
      55,
      {
        description: "tiered 25x",
        marginTiers: [
          { lowerBound: "0.0", maxLeverage: 25 },
          { lowerBound: "100000000.0", maxLeverage: 15 },
        ],
      },
    ];
  }
  return [maxLeverage, { description: "", marginTiers: [{ lowerBound: "0.0", maxLeverage }] }];
}

function meta(insts: readonly PerpInstrumentSpec[]): Record<string, unknown> {
  const tables = new Map<number, Record<string, unknown>>();
  const universe = insts.map((i) => {
    const [id, table] = marginTable(i.maxLeverage, i.base);
    tables.set(id, table);
    const entry: Record<string, unknown> = { szDecimals: i.szDecimals, name: i.symbol, maxLeverage: i.maxLeverage, marginTableId: id };
    if (i.delisted) entry.isDelisted = true;
    return entry;
  });
  return {
    universe,
    marginTables: [...tables].sort((a, b) => a[0] - b[0]),
    collateralToken: 0,
  };
}

function assetCtx(inst: PerpInstrumentSpec, perp: PerpModel, now: number): Record<string, unknown> {
  const m = inst.multiplier;
  const sz = inst.szDecimals;
  const px = (perCoin: number) => hlPx(perCoin * m, sz);
  const mark = perp.markPrice(inst, now);
  if (inst.delisted) {
    return {
      funding: "0.0",
      openInterest: "0.0",
      prevDayPx: px(mark),
      dayNtlVlm: "0.0",
      premium: null,
      oraclePx: px(perp.indexPrice(inst, now)),
      markPx: px(mark),
      midPx: null,
      impactPxs: null,
      dayBaseVlm: "0.0",
    };
  }
  const mid = perp.lastPrice(inst, now);
  const ntl = perp.turnover24hUsd(inst, now);
  return {
    funding: rateStr(perp.currentFundingRate(inst, now)),
    openInterest: hlNum(perp.openInterestCoins(inst, now) / m, sz),
    prevDayPx: px(perp.markPrice(inst, now - DAY)),
    dayNtlVlm: hlNum(ntl, 4),
    premium: rateStr(perp.premium(inst, now)),
    oraclePx: px(perp.indexPrice(inst, now)),
    markPx: px(mark),
    midPx: px(mid),
    impactPxs: [px(mid * (1 - 0.00004)), px(mid * (1 + 0.00004))],
    dayBaseVlm: hlNum(ntl / (mid * m), sz),
  };
}

/** 422 like the real API's body deserialisation errors (plain text). */
function deserializeError(res: Response, detail: string): void {
  res.status(422).type("text/plain").send(`Failed to deserialize the JSON body into the target type: ${detail}`);
}

interface FundingRow {
  coin: string;
  fundingRate: string;
  premium: string;
  time: number;
}

/** Builds the Hyperliquid router (`POST /info`). */
export function createHyperliquidRouter(ctx: VenueContext): Router {
  const { market, clock } = ctx;
  const perp = perpModelFor(market);
  const replay = venueRecordings(ctx.replay, "hyperliquid");
  const tape = tapeFor(market);
  const router = Router();
  const insts = () => perp.instruments("hyperliquid", clock.now());

  router.post("/info", express.text({ type: () => true, limit: "64kb" }), (req: Request, res: Response) => {
    const raw: unknown = req.body;
    let body: unknown;
    try {
      body = JSON.parse(typeof raw === "string" ? raw : "") as unknown;
    } catch {
      return deserializeError(res, "expected value at line 1 column 1");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return deserializeError(res, "invalid type: expected internally tagged enum InfoRequest at line 1 column 1");
    }
    const b = body as Record<string, unknown>;
    const type = b.type;
    if (typeof type !== "string") return deserializeError(res, "missing field `type` at line 1 column 2");
    const now = clock.now();

    switch (type) {
      case "meta":
        return void res.json(replay ? replay.meta : meta(insts()));
      case "metaAndAssetCtxs": {
        const list = insts();
        return void res.json([meta(list), list.map((i) => assetCtx(i, perp, now))]);
      }
      case "allMids": {
        if (replay) return void res.json(replay.allMids);
        const mids: Record<string, string> = {};
        for (const i of insts()) if (!i.delisted) mids[i.symbol] = hlPx(perp.lastPrice(i, now) * i.multiplier, i.szDecimals);
        return void res.json(mids);
      }
      case "fundingHistory": {
        const coin = b.coin;
        const startTime = b.startTime;
        const endTime = b.endTime;
        if (typeof coin !== "string") return deserializeError(res, "missing field `coin`");
        if (typeof startTime !== "number" || !Number.isSafeInteger(startTime)) return deserializeError(res, "missing field `startTime`");
        if (endTime !== undefined && endTime !== null && (typeof endTime !== "number" || !Number.isSafeInteger(endTime))) {
          return deserializeError(res, "invalid type for field `endTime`, expected u64");
        }
        const end = typeof endTime === "number" ? endTime : now;
        if (replay && coin === "BTC") {
          const rows = (replay.fundingHistoryBTC as FundingRow[]).filter((r) => r.time >= startTime && r.time <= end);
          return void res.json(rows.slice(0, MAX_FUNDING_ROWS));
        }
        const inst = insts().find((i) => i.symbol === coin);
        if (!inst || inst.delisted) return void res.json([]);
        const rows: FundingRow[] = [];
        // Settlement s is recorded at s + jitter (< 1 s); filter on the recorded time.
        for (const s of perp.settlementTimes(inst, startTime - 1000, Math.min(end, now))) {
          const time = s + perp.settlementJitterMs(inst, s);
          if (time < startTime || time > end || time > now) continue;
          rows.push({
            coin: inst.symbol,
            fundingRate: rateStr(perp.settledFundingRate(inst, s)),
            premium: rateStr(perp.settledPremium(inst, s)),
            time,
          });
          if (rows.length >= MAX_FUNDING_ROWS) break;
        }
        return void res.json(rows);
      }
      case "predictedFundings": {
        const out: Array<[string, Array<[string, Record<string, unknown>]>]> = [];
        for (const i of insts()) {
          if (i.delisted) continue;
          const venues: Array<[string, Record<string, unknown>]> = [];
          const add = (label: string, v: PerpInstrumentSpec | undefined) => {
            if (!v) return;
            venues.push([
              label,
              {
                fundingRate: rateStr(perp.currentFundingRate(v, now)),
                nextFundingTime: perp.nextFundingTime(v, now),
                fundingIntervalHours: v.fundingIntervalHours,
              },
            ]);
          };
          add("BinPerp", perp.perpOf("binance", i.base));
          add("HlPerp", i);
          add("BybitPerp", perp.perpOf("bybit", i.base));
          out.push([i.symbol, venues]);
        }
        out.sort((a, c) => (a[0] < c[0] ? -1 : a[0] > c[0] ? 1 : 0));
        return void res.json(out);
      }
      case "recentTrades": {
        const coin = b.coin;
        if (typeof coin !== "string") return deserializeError(res, "missing field `coin`");
        const inst = insts().find((i) => i.symbol === coin);
        if (!inst || inst.delisted) return void res.json([]);
        return void res.json(
          tape.tradesBefore(inst, now + 1, HL_RECENT_TRADES).map((t) => ({
            coin: inst.symbol,
            side: t.side === "buy" ? "B" : "A",
            px: t.px,
            sz: t.sz,
            time: t.time,
            hash: hlHash(t),
            tid: hlTid(t),
            users: hlUsers(t),
          })),
        );
      }
      default:
        return deserializeError(res, `unknown variant \`${type}\`, expected one of ${INFO_TYPES.map((t) => `\`${t}\``).join(", ")} at line 1 column ${type.length + 10}`);
    }
  });

  return router;
}

/** Hyperliquid as the simulator mounts it (`urls.hyperliquid` replaces `https://api.hyperliquid.xyz`). */
export const hyperliquidVenue = {
  name: "hyperliquid",
  mountPath: "/hyperliquid",
  createRouter: createHyperliquidRouter,
  faultResponses: hyperliquidFaultResponses,
} as const satisfies SimVenue<"hyperliquid">;
