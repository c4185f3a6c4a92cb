import { AppError } from "../errors.js";

/**
 * Open streams per process and per wallet (in this process: on replicas each one counts its own).
 * `acquire` throws before anything is debited; the returned release is idempotent.
 */
export class StreamLimits {
  private total = 0;
  /** Open sessions' closers, so that a shutdown can end them (open SSE responses would hold the server). */
  private readonly closers = new Set<() => void>();
  private readonly perWallet = new Map<string, number>();

  constructor(
    readonly maxStreams: number,
    readonly maxPerWallet: number,
  ) {}

  /** Registers how to end an open stream at shutdown; returns the function that unregisters it. */
  track(close: () => void): () => void {
    this.closers.add(close);
    return () => this.closers.delete(close);
  }

  /** Ends every open stream (shutdown). */
  closeAll(): void {
    for (const c of [...this.closers]) c();
  }

  /** Streams open in this process. */
  get open(): number {
    return this.total;
  }

  /**
   * Takes one stream slot for `wallet` (undefined: payments off, only the process limit applies).
   * @throws AppError RATE_LIMITED when the wallet has `maxPerWallet` open; UPSTREAM_UNAVAILABLE (503,
   *   retry later) when the process has `maxStreams` open.
   */
  acquire(wallet: string | undefined): () => void {
    if (this.total >= this.maxStreams) {
      throw new AppError("UPSTREAM_UNAVAILABLE", `this instance serves its maximum of ${this.maxStreams} streams; retry shortly`, { retryAfterSec: 10 });
    }
    const mine = wallet ? (this.perWallet.get(wallet) ?? 0) : 0;
    if (wallet && mine >= this.maxPerWallet) {
      throw new AppError("RATE_LIMITED", `wallet ${wallet} already has ${this.maxPerWallet} open streams (the maximum); close one first`, { retryAfterSec: 60 });
    }
    this.total++;
    if (wallet) this.perWallet.set(wallet, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      if (!wallet) return;
      const n = (this.perWallet.get(wallet) ?? 1) - 1;
      if (n <= 0) this.perWallet.delete(wallet);
      else this.perWallet.set(wallet, n);
    };
  }
}
