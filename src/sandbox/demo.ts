import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { formatUnits } from "viem";
import { isFree, isMarketDataTool, requestPath, type AnyTool } from "../registry/tool.js";
import type { DevAccount } from "../payments/local-chain/dev-accounts.js";

/** One demo call's outcome. */
export interface DemoCall {
  tool: string;
  path: string;
  status: number;
  cache: string | null;
  transaction?: string;
  body: unknown;
}

/** Shortens long arrays so that a history answer prints in a few lines. */
function preview(v: unknown, depth = 0): unknown {
  if (Array.isArray(v)) return v.length > 3 ? [...v.slice(0, 2).map((x) => preview(x, depth + 1)), `... ${v.length - 2} more`] : v.map((x) => preview(x, depth + 1));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, preview(x, depth + 1)]));
  return v;
}

/**
 * The paying demo client: for every paid market-data tool, calls its example request with the official
 * `@x402/fetch` client signing EIP-3009 authorizations with `payer`'s key, then repeats the first call to show
 * a free cache hit. Prints each answer and the balances before and after. Returns the calls made. The paid
 * tools that create state are walked through elsewhere: alerts and their extensions in `alert-demo.ts`, the
 * credits top-up in `credits-demo.ts`.
 */
export async function runDemo(opts: {
  baseUrl: string;
  tools: readonly AnyTool[];
  payer: DevAccount;
  payTo: `0x${string}`;
  balanceOf(address: `0x${string}`): Promise<bigint>;
  print?: (line: string) => void;
}): Promise<DemoCall[]> {
  const print = opts.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const client = new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(opts.payer.privateKey)));
  const payFetch = wrapFetchWithPayment(fetch, client);
  const usdc = (n: bigint) => `${formatUnits(n, 6)} USDC`;
  const before = { payer: await opts.balanceOf(opts.payer.address), payTo: await opts.balanceOf(opts.payTo) };
  print(`payer ${opts.payer.address}: ${usdc(before.payer)}   payTo ${opts.payTo}: ${usdc(before.payTo)}\n`);

  const calls: DemoCall[] = [];
  const paid = opts.tools.filter((t) => !isFree(t) && isMarketDataTool(t));
  for (const tool of [...paid, paid[0]!]) {
    const path = requestPath(tool);
    const res = await payFetch(`${opts.baseUrl}${path}`, { method: tool.method });
    const receipt = res.headers.get("payment-response");
    const call: DemoCall = {
      tool: tool.name,
      path,
      status: res.status,
      cache: res.headers.get("x-cache"),
      transaction: receipt ? decodePaymentResponseHeader(receipt).transaction : undefined,
      body: await res.json(),
    };
    calls.push(call);
    const cost = call.cache === "HIT" ? "free (cache hit)" : `${tool.priceUsd} USDC, tx ${call.transaction ?? "none"}`;
    print(`${tool.method} ${path} -> ${res.status} [X-Cache: ${call.cache}] ${cost}`);
    // Chart points ([ms, value]) on one line each.
    print(JSON.stringify(preview(call.body), null, 2).replace(/\[\s+(-?[\d.e+-]+),\s+(-?[\d.e+-]+)\s+\]/g, "[$1, $2]"));
    print("");
  }
  const after = { payer: await opts.balanceOf(opts.payer.address), payTo: await opts.balanceOf(opts.payTo) };
  print(`payer spent ${usdc(before.payer - after.payer)} (now ${usdc(after.payer)}); payTo received ${usdc(after.payTo - before.payTo)} (now ${usdc(after.payTo)})`);
  return calls;
}
