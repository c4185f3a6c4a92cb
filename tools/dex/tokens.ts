import { z } from "zod";
import { describeToken } from "../../src/analytics/dex-token.js";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";
import { checkTokenAddress, NETWORK_SLUG } from "../../src/venues/dex/token-address.js";
import type { DexChain } from "../../src/venues/dex/types.js";
import { isoNow, sourceLabel, Timestamp } from "../common.js";
import { MissingSources } from "./common.js";
import { GuardFields, guardFields, NetworkParam, networkFields, requireAnyKnownToken } from "./token-common.js";

/** The distinct, trimmed, non-empty entries of a comma-separated list. */
function splitList(raw: string): string[] {
  return [
    ...new Set(
      raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
}

/** The canonical spelling of each address of a list checked by {@link refineList}. */
function canonicalList(network: DexChain, list: readonly string[]): string[] {
  return list.map((a) => {
    const r = checkTokenAddress(network, a);
    return r.ok ? r.address : a;
  });
}

/**
 * Most addresses in one request: 20. The upstream batch holds 30 (`MAX_BATCH` of src/venues/dex/token-source.ts), but a paid answer's signed receipt
 * carries its URL, and 20 Solana mints (44 characters) keep the URL within the 1,024 bytes that keep every header
 * block under 4 KB (docs/operations/deploy.md); 30 would be refused with a 414.
 */
export const MAX_ADDRESSES = 20;

/** Object-level check of the address list: 1..20 addresses, each valid on the network (400 naming the bad ones). */
function refineList(v: { network: DexChain; addresses: string }, ctx: z.RefinementCtx): void {
  const list = splitList(v.addresses);
  if (list.length === 0) return void ctx.addIssue({ code: "custom", path: ["addresses"], message: "give at least one address" });
  if (list.length > MAX_ADDRESSES) return void ctx.addIssue({ code: "custom", path: ["addresses"], message: `at most ${MAX_ADDRESSES} addresses, got ${list.length}` });
  const bad = list.flatMap((a) => {
    const r = checkTokenAddress(v.network, a);
    return r.ok ? [] : [`${a.slice(0, 64)}: ${r.reason}`];
  });
  if (bad.length)
    ctx.addIssue({
      code: "custom",
      path: ["addresses"],
      message: `not ${NETWORK_SLUG[v.network]} token addresses: ${bad.slice(0, 3).join("; ")}${bad.length > 3 ? ` (+${bad.length - 3} more)` : ""}`,
    });
}

const { price_usd_by_source: _p, floors: _f, ...SummaryGuards } = GuardFields;

const Item = z.object({
  requested: z.string().describe("the address as sent"),
  address: z.string().describe("checksummed (EVM) or as given (Solana)"),
  status: z
    .enum(["found", "not_found", "refused", "unavailable"])
    .describe(
      "found; not_found (no source knows a pool of it); refused (found but below a guard floor: the data is given, marked, and reasons say why); unavailable (a source failed and the other knows no pool of it)",
    ),
  reasons: z.array(z.string()).describe("for refused: low_liquidity and/or unverified; for unavailable: the failed sources"),
  ...Object.fromEntries(Object.entries(SummaryGuards).map(([k, s]) => [k, (s as z.ZodType).optional()])),
});

/** `GET /dex/tokens/:network?addresses=`: up to 20 tokens of one network in one call, one answer per address. */
export const dexTokens = defineTool({
  name: "dex_tokens",
  title: "DEX tokens by address (batch)",
  method: "GET",
  path: "/dex/tokens/:network",
  priceUsd: "0.05",
  cacheTtlSec: 30,
  tags: ["tokens", "dex"],
  summary: "Up to 20 tokens of one network by address in one call: price, liquidity and look-alike guards for each",
  mcpNote: "addresses: comma-separated, ≤ 20, one network. Each result is found, not_found or refused (below a guard floor, data still given).",
  description:
    "One answer per distinct address, in request order: found (price and guard fields as in dex_token, without the pool list), not_found (no pool at GeckoTerminal or DexScreener), unavailable (a source failed and the other knows none), or refused (found, but below the low_liquidity / unverified floors; the data is still given and `reasons` say why). The batch costs one GeckoTerminal call and one DexScreener call. A malformed address makes the whole request a 400 before payment; a batch of which no source knows any address is a 404, before payment (or, when the check could not ask, after it, uncharged).",
  example: { network: "base", addresses: "0x4200000000000000000000000000000000000006,0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" },
  input: z
    .object({
      network: NetworkParam,
      addresses: z
        .string()
        .min(1)
        .max(64 * MAX_ADDRESSES)
        .describe(`comma-separated token addresses of this network, at most ${MAX_ADDRESSES}`),
    })
    .superRefine(refineList),
  output: z.object({
    network: z.string(),
    caip2: z.string(),
    count: z.number().int(),
    found: z.number().int(),
    results: z.array(Item),
    sources: z.array(z.string()),
    missing_sources: MissingSources,
    timestamp: Timestamp,
  }),
  checkBeforePayment: ({ network, addresses }, ctx, caller) => requireAnyKnownToken(network, canonicalList(network, splitList(addresses)), ctx, caller),
  async handler({ network, addresses }, ctx) {
    const list = splitList(addresses);
    const canonical = canonicalList(network, list);
    const snaps = await ctx.venues.dexTokens.snapshots(network, canonical, "paid");
    const now = ctx.now();
    const missing = new Map<string, string>();
    let found = 0;
    const results = snaps.map((snap, i) => {
      for (const f of snap.failed) missing.set(f.source, f.reason);
      const base = { requested: list[i]!, address: canonical[i]! };
      if (!snap.gt && snap.dsPools.length === 0) {
        if (snap.failed.length) return { ...base, status: "unavailable" as const, reasons: snap.failed.map((f) => `${f.source} failed`) };
        return { ...base, status: "not_found" as const, reasons: [] };
      }
      found++;
      const { price_usd_by_source: _ps, floors: _fl, ...g } = guardFields(describeToken(snap, now));
      const reasons = [...(g.low_liquidity ? ["low_liquidity"] : []), ...(g.unverified ? ["unverified"] : [])];
      return { ...base, status: reasons.length ? ("refused" as const) : ("found" as const), reasons, ...g };
    });
    // Nothing found is no answer to pay for: refused like before payment (the check may have left it to this run).
    if (found === 0) {
      if (missing.size)
        throw new AppError("UPSTREAM_UNAVAILABLE", `found none of the ${list.length} addresses, and ${[...missing.keys()].join(" and ")} failed; nothing was charged`, {
          retryAfterSec: 5,
        });
      throw new AppError("NOT_FOUND", `neither GeckoTerminal nor DexScreener knows a pool of any of the ${list.length} addresses on ${NETWORK_SLUG[network]}; nothing was charged`);
    }
    return {
      ...networkFields(network),
      count: results.length,
      found,
      results,
      sources: [sourceLabel(ctx, "geckoterminal"), sourceLabel(ctx, "dexscreener")],
      missing_sources: [...missing].map(([source, reason]) => ({ source, reason })),
      timestamp: isoNow(ctx),
    };
  },
});
