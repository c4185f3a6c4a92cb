/*
 * Types of prepaid credits that the tools see through the context's credit port (src/core/types.ts).
 * This file imports types only, from ledger.ts, which imports nothing: the port's home stays free of
 * import cycles (docs/architecture.md "Layering").
 */
import type { CreditRefund, SpendCaps } from "./ledger.js";

/** Operator settings of prepaid credits. */
export interface CreditSettings {
  /** Smallest and largest top-up, decimal USD (defaults 0.10 and 100). */
  minTopUpUsd: string;
  maxTopUpUsd: string;
  /** Per-wallet caps the operator sets for every wallet (on top of each wallet's own). */
  globalCaps: SpendCaps;
  /** `CREDITS_REFUND=on`: a wallet may ask for its unspent balance back (signed request). */
  refund: boolean;
}

/** The answer to a refund request. */
export type RefundAnswer =
  /** The balance was 0: nothing to refund. */
  | { status: "none" }
  /** The transfer is mined. */
  | { status: "confirmed"; refund: CreditRefund }
  /** The transfer may be on its way and is not confirmed yet (or an earlier refund of the wallet still is): nothing more was taken. */
  | { status: "pending"; refund: CreditRefund };
