import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { formatUnits } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { DevAccount } from "../payments/local-chain/dev-accounts.js";

/** What the credits walk-through did, for tests. */
export interface CreditsDemoResult {
  /** Status of each of the 20 credit-paid calls. */
  statuses: number[];
  /** Milliseconds of each credit-paid call (the official client's two round trips included). */
  ms: number[];
  /** On-chain USDC the payer spent in all (atomic units): the top-up only. */
  onChainSpentAtomic: bigint;
  /** What `GET /api/v1/credits` said at the end. */
  account: { balance_usd: string; spent_usd: string; credited_usd: string };
}

/**
 * The sandbox's credits walk-through: one x402 top-up of 1 USD with the official `@x402/fetch` client,
 * then 20 distinct paid calls (`/api/v1/prices`, 0.005 each) with the official `wrapFetchWithSIWx`
 * client, which answers each 402's Sign-In-With-X challenge by itself; each call's time and the
 * remaining credits are printed, and the chain balance shows that only the top-up moved money.
 */
export async function runCreditsDemo(opts: {
  baseUrl: string;
  payer: DevAccount;
  balanceOf: (address: `0x${string}`) => Promise<bigint>;
  print?: (line: string) => void;
}): Promise<CreditsDemoResult> {
  const print = opts.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const account = privateKeyToAccount(opts.payer.privateKey);
  const usdc = (n: bigint) => `${formatUnits(n, 6)} USDC`;
  const before = await opts.balanceOf(opts.payer.address);
  const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(account)));
  const t0 = performance.now();
  const top = await pay(`${opts.baseUrl}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "1" }) });
  const topBody = (await top.json()) as { balance_usd?: string };
  print(`POST /api/v1/credits {"amount_usd":"1"} -> ${top.status} in ${(performance.now() - t0).toFixed(1)} ms (x402, settled on chain): balance ${topBody.balance_usd} USD`);

  const siwxFetch = wrapFetchWithSIWx(fetch, account);
  const statuses: number[] = [];
  const ms: number[] = [];
  const symbols = ["btc", "eth", "sol", "xrp", "doge"];
  for (let k = 0; k < 20; k++) {
    const path = `/api/v1/prices?symbols=${symbols[k % symbols.length]},credits${k}`;
    const t = performance.now();
    const res = await siwxFetch(`${opts.baseUrl}${path}`);
    await res.arrayBuffer();
    ms.push(performance.now() - t);
    statuses.push(res.status);
    print(`  GET ${path} -> ${res.status} in ${ms[k]!.toFixed(1)} ms, paid from credits (remaining ${res.headers.get("x-credits-remaining")} USD)`);
  }
  const me = await siwxFetch(`${opts.baseUrl}/api/v1/credits`);
  const acct = (await me.json()) as CreditsDemoResult["account"];
  const spent = before - (await opts.balanceOf(opts.payer.address));
  const sorted = [...ms].sort((a, b) => a - b);
  print(`20 credit-paid calls: median ${sorted[10]!.toFixed(1)} ms each, no chain transaction; on chain the payer spent ${usdc(spent)} (the top-up only)`);
  print(`GET /api/v1/credits -> balance ${acct.balance_usd} USD, spent ${acct.spent_usd} USD of ${acct.credited_usd} USD credited`);
  return { statuses, ms, onChainSpentAtomic: spent, account: acct };
}
