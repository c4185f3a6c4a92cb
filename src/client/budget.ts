import { SpendCapError } from "./errors.js";

/*
 * Amounts are micro-USD as bigint: USDC has 6 decimals on Base and Solana, so an atomic USDC amount is one
 * micro-USD, and sums never meet floating-point rounding.
 */

/** Micro-USD of a decimal USD amount (`"0.02"`, `5`, `"$1"`). @throws Error for anything else. */
export function usdToMicros(usd: string | number): bigint {
  const text = String(usd).trim().replace(/^\$/, "");
  const m = /^(\d+)(?:\.(\d{0,6})\d*)?$/.exec(text);
  if (!m) throw new Error(`not a USD amount: ${JSON.stringify(usd)}`);
  return BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? "").padEnd(6, "0"));
}

/** Micro-USD of an atomic token amount with `decimals` (rounded up: a cap is never under-counted). */
export function atomicToMicros(atomic: string | bigint, decimals: number): bigint {
  const n = BigInt(atomic);
  if (decimals === 6) return n;
  if (decimals < 6) return n * 10n ** BigInt(6 - decimals);
  const div = 10n ** BigInt(decimals - 6);
  return (n + div - 1n) / div;
}

/** Decimal USD of micro-USD, without trailing zeros (`20000n` → `"0.02"`). */
export function microsToUsd(micros: bigint): string {
  const whole = micros / 1_000_000n;
  const frac = (micros % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : String(whole);
}

/** A charge held against the budget until it is known to have happened ({@link Reservation.commit}) or not ({@link Reservation.release}). */
export interface Reservation {
  /** The charge happened (for `micros`, default the amount reserved). */
  commit(micros?: bigint): void;
  /** Nothing was charged. */
  release(): void;
}

/**
 * A per-call and per-session spending cap. Each charge is reserved before anything is signed: over either cap it
 * throws {@link SpendCapError} and nothing is held. Concurrent calls count each other's reservations, so N calls
 * in flight cannot together pass the session cap.
 */
export class SpendBudget {
  private spent = 0n;
  private held = 0n;
  readonly perCall?: bigint;
  readonly perSession?: bigint;

  /** Caps in USD (decimal strings or numbers); undefined: no cap. */
  constructor(perCallUsd?: string | number, perSessionUsd?: string | number) {
    this.perCall = perCallUsd === undefined ? undefined : usdToMicros(perCallUsd);
    this.perSession = perSessionUsd === undefined ? undefined : usdToMicros(perSessionUsd);
  }

  /** Charged so far in this session, micro-USD. */
  get spentMicros(): bigint {
    return this.spent;
  }

  /** What the session cap leaves for one more charge (micro-USD), undefined without a session cap. */
  get roomMicros(): bigint | undefined {
    return this.perSession === undefined ? undefined : this.perSession - this.spent - this.held;
  }

  /**
   * Holds `micros` for one charge. `perCallUsd` replaces the per-call cap for this charge (a top-up larger than it).
   * @throws SpendCapError when the charge is over the per-call cap or the session's room.
   */
  reserve(micros: bigint, perCallUsd?: string | number): Reservation {
    const perCall = perCallUsd === undefined ? this.perCall : usdToMicros(perCallUsd);
    const details = { priceUsd: microsToUsd(micros), spentUsd: microsToUsd(this.spent) };
    if (perCall !== undefined && micros > perCall) throw new SpendCapError({ cap: "per_call", limitUsd: microsToUsd(perCall), ...details });
    const room = this.roomMicros;
    if (room !== undefined && micros > room) throw new SpendCapError({ cap: "per_session", limitUsd: microsToUsd(this.perSession!), ...details });
    this.held += micros;
    let open = true;
    const close = () => {
      if (!open) return false;
      open = false;
      this.held -= micros;
      return true;
    };
    return {
      commit: (actual = micros) => {
        if (close()) this.spent += actual;
      },
      release: () => void close(),
    };
  }

  /** Counts a charge the client learns of after the fact (a stream-minute the service debited). */
  record(micros: bigint): void {
    this.spent += micros;
  }
}
