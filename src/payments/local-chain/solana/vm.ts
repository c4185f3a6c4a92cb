import { address, lamports, type Address } from "@solana/kit";
import { AccountState, findAssociatedTokenPda, getMintEncoder, getTokenDecoder, getTokenEncoder, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { getUsdcAddress, SOLANA_MAINNET_CAIP2 } from "@x402/svm";
import { LiteSVM } from "litesvm";
import { devKeyFromLabel, type SolanaDevKey } from "./keys.js";

/** USDC's mint on Solana mainnet (`EPjFWdd5…`), from x402's own asset table: what it resolves "$0.01" to there. */
export const SOLANA_USDC_MINT: Address = address(getUsdcAddress(SOLANA_MAINNET_CAIP2));

/** USDC has 6 decimals on Solana, as on Base. */
const USDC_DECIMALS = 6;

/** Options of {@link provisionLocalSolana}. */
export interface LocalSolanaOptions {
  /** How many funded payers (#1..#N); default 9, like the anvil dev accounts. */
  payers?: number;
  /** Whole test USDC each payer gets; default 1000. */
  amountUsdc?: number;
}

/** An in-process Solana VM with USDC at its real mint address, a funded fee payer, a recipient and funded payers. */
export interface LocalSolanaChain {
  svm: LiteSVM;
  mint: Address;
  /** Pays the transaction fees (the facilitator's key: `extra.feePayer` of the requirements). */
  feePayer: SolanaDevKey;
  /** Receives payments (`PAY_TO_SOLANA`); its USDC account exists, empty. */
  payTo: SolanaDevKey;
  /** Payers #1..#N, each with `amountUsdc` test USDC and no SOL (the facilitator pays the fees). */
  payers: Array<SolanaDevKey & { index: number }>;
  /** USDC balance of `owner`'s associated token account, atomic units (6 decimals); 0 when it has none. */
  balanceOf(owner: string): Promise<bigint>;
}

/**
 * Starts a LiteSVM and plants what an x402 `exact` payment needs, the way the anvil sandbox plants test USDC
 * at the Base USDC address: a USDC mint at {@link SOLANA_USDC_MINT} (6 decimals, classic token program), the
 * recipient's and each payer's associated token account, and 1 SOL of fees for the fee payer. Keys derive
 * from fixed labels (see `keys.ts`), so addresses are the same on every run.
 */
export async function provisionLocalSolana(opts: LocalSolanaOptions = {}): Promise<LocalSolanaChain> {
  const svm = new LiteSVM();
  const count = opts.payers ?? 9;
  const each = BigInt(opts.amountUsdc ?? 1000) * 10n ** BigInt(USDC_DECIMALS);
  const [feePayer, payTo, mintAuthority] = await Promise.all(["fee payer", "pay to", "mint authority"].map(devKeyFromLabel));
  const payers = await Promise.all(Array.from({ length: count }, async (_, i) => ({ ...(await devKeyFromLabel(`payer ${i + 1}`)), index: i + 1 })));
  svm.airdrop(feePayer!.signer.address, lamports(1_000_000_000n));

  const plant = (at: Address, data: Uint8Array) =>
    svm.setAccount({
      address: at,
      data,
      executable: false,
      lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))),
      programAddress: TOKEN_PROGRAM_ADDRESS,
      space: BigInt(data.length),
    });
  const mint = getMintEncoder().encode({
    mintAuthority: mintAuthority!.signer.address,
    supply: each * BigInt(count),
    decimals: USDC_DECIMALS,
    isInitialized: true,
    freezeAuthority: null,
  });
  plant(SOLANA_USDC_MINT, new Uint8Array(mint));
  const ataOf = async (owner: string) => (await findAssociatedTokenPda({ mint: SOLANA_USDC_MINT, owner: address(owner), tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
  const plantTokenAccount = async (owner: Address, amount: bigint) => {
    const data = getTokenEncoder().encode({
      mint: SOLANA_USDC_MINT,
      owner,
      amount,
      delegate: null,
      state: AccountState.Initialized,
      isNative: null,
      delegatedAmount: 0n,
      closeAuthority: null,
    });
    plant(await ataOf(owner), new Uint8Array(data));
  };
  await plantTokenAccount(payTo!.signer.address, 0n);
  for (const p of payers) await plantTokenAccount(p.signer.address, each);

  return {
    svm,
    mint: SOLANA_USDC_MINT,
    feePayer: feePayer!,
    payTo: payTo!,
    payers,
    async balanceOf(owner) {
      const account = svm.getAccount(await ataOf(owner));
      return account.exists ? getTokenDecoder().decode(account.data).amount : 0n;
    },
  };
}
