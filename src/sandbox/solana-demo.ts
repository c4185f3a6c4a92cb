import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { SOLANA_MAINNET_CAIP2 as SOLANA_NETWORK } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { formatUnits } from "viem";
import type { LocalSolana } from "../payments/local-chain/solana/index.js";

/** What the Solana demo call did. */
export interface SolanaDemoCall {
  status: number;
  /** The Solana transaction signature of the settlement (base58), when paid. */
  transaction?: string;
  /** Atomic USDC units the payer spent and the recipient received. */
  spent: bigint;
  received: bigint;
}

/**
 * Pays one endpoint from Solana on the local VM: the official `@x402/fetch` client with the official
 * `@x402/svm` `exact` scheme for Solana payer #`payerIndex`, reading the mint and blockhash over the local
 * RPC. It picks the Solana entry of the 402's `accepts` (it has no Base scheme). Prints the call and balances.
 */
export async function runSolanaDemo(opts: { baseUrl: string; solana: LocalSolana; path: string; payerIndex?: number; print?: (line: string) => void }): Promise<SolanaDemoCall> {
  const print = opts.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const { solana } = opts;
  const payer = solana.payers[(opts.payerIndex ?? 1) - 1]!;
  const pay = wrapFetchWithPayment(fetch, new x402Client().register(SOLANA_NETWORK, new ExactSvmScheme(payer.signer, { rpcUrl: solana.rpc.url })));
  const before = [await solana.balanceOf(payer.address), await solana.balanceOf(solana.payTo.address)] as const;
  const res = await pay(`${opts.baseUrl}${opts.path}`);
  const receipt = res.headers.get("payment-response");
  const transaction = receipt ? decodePaymentResponseHeader(receipt).transaction : undefined;
  await res.arrayBuffer();
  const spent = before[0] - (await solana.balanceOf(payer.address));
  const received = (await solana.balanceOf(solana.payTo.address)) - before[1];
  print(`GET ${opts.path} -> ${res.status} paid from Solana payer #${payer.index} ${payer.address}, tx ${transaction ?? "none"}`);
  print(`payer spent ${formatUnits(spent, 6)} USDC; PAY_TO_SOLANA ${solana.payTo.address} received ${formatUnits(received, 6)} USDC`);
  return { status: res.status, transaction, spent, received };
}
