import { microToUsd } from "../payments/credits/ledger.js";
import type { DaySpend, SpendStore } from "./spend-store.js";

/** The limits of `marketgate connect`, in micro-USD. */
export interface Limits {
  maxPerCallMicro: number;
  maxPerDayMicro: number;
}

/** Why the budget refused: the limit, and a message naming it and how to raise it (nothing was charged). */
export interface Refusal {
  limit: "max-usd-per-call" | "max-usd-per-day";
  message: string;
}

const usd = (micro: number) => `$${microToUsd(micro)}`;

/**
 * The bridge's budget: a per-call and a per-UTC-day limit on what paid calls cost, counted on disk
 * ({@link SpendStore}). A call's price is reserved before anything is signed (so two calls at once cannot both
 * pass the last cent) and given back when the call turns out not charged. A credits top-up must fit in what
 * the day's limit leaves.
 */
export class Budget {
  constructor(
    private readonly store: SpendStore,
    readonly limits: Limits,
  ) {}

  /** Today's spend. */
  today(): DaySpend {
    return this.store.read();
  }

  /** Reserves `priceMicro` for one call, or says which limit refuses it (then nothing is reserved). */
  async reserve(priceMicro: number): Promise<Refusal | undefined> {
    const { maxPerCallMicro, maxPerDayMicro } = this.limits;
    if (priceMicro > maxPerCallMicro) {
      return {
        limit: "max-usd-per-call",
        message: `refused by the bridge's budget: this call costs ${usd(priceMicro)}, above --max-usd-per-call ${microToUsd(maxPerCallMicro)}. Nothing was charged. To allow it, raise --max-usd-per-call in the host's command for \`marketgate connect\` and restart the server.`,
      };
    }
    const r = await this.store.update<Refusal>((s) =>
      s.spentMicro + priceMicro > maxPerDayMicro
        ? {
            limit: "max-usd-per-day",
            message: `refused by the bridge's budget: ${usd(s.spentMicro)} spent today (UTC ${s.day}) + this call's ${usd(priceMicro)} would pass --max-usd-per-day ${microToUsd(maxPerDayMicro)}. Nothing was charged. To allow it, raise --max-usd-per-day in the host's command for \`marketgate connect\` and restart the server, or wait for the next UTC day.`,
          }
        : { ...s, spentMicro: s.spentMicro + priceMicro, calls: s.calls + 1 },
    );
    return "limit" in r ? r : undefined;
  }

  /** Gives back a reservation of a call that was not charged. */
  async release(priceMicro: number): Promise<void> {
    await this.store.update((s) => ({ ...s, spentMicro: Math.max(0, s.spentMicro - priceMicro), calls: Math.max(0, s.calls - 1) }));
  }

  /** Reserves a credits top-up of `amountMicro` if the day's limit leaves room for it; whether it did. */
  async reserveTopUp(amountMicro: number): Promise<boolean> {
    const r = await this.store.update((s) => (s.spentMicro + amountMicro > this.limits.maxPerDayMicro ? false : { ...s, toppedUpMicro: s.toppedUpMicro + amountMicro }));
    return r !== false;
  }

  /** Gives back a top-up reservation whose payment did not go through. */
  async releaseTopUp(amountMicro: number): Promise<void> {
    await this.store.update((s) => ({ ...s, toppedUpMicro: Math.max(0, s.toppedUpMicro - amountMicro) }));
  }
}
