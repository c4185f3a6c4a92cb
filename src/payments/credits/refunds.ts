import { randomUUID } from "node:crypto";
import { AppError } from "../../errors.js";
import { logger } from "../../lib/log.js";
import { microToUsd, type CreditLedger, type CreditRefund, type RefundEnd, type RefundReason, type RefundTx } from "./ledger.js";
import type { RefundChain } from "./relayer.js";
import type { RefundAnswer } from "./types.js";

/** Options of {@link CreditRefunds}. */
export interface CreditRefundOptions {
  /** How long a refund request waits for its transfer's receipt before answering `pending`, ms (`CREDITS_REFUND_CONFIRM_MS`). */
  confirmMs: number;
  /** How often the receipt is asked for meanwhile, ms; default 500. */
  pollMs?: number;
  /**
   * How long a refund must have been left alone by its sender before a reconciliation acts on it, ms
   * (default 120,000): a `preparing` refund is then restored (nothing was signed), and a `pending` one whose
   * transaction the node does not know is broadcast again. Longer than a sender ever works on one.
   */
  staleMs?: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/** How long a sender keeps trying to get a transaction accepted (new nonces after clashes), ms. */
const SEND_WINDOW_MS = 30_000;
const MAX_SEND_ATTEMPTS = 8;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Refunds of unspent credits, paid exactly once. A refund moves the whole balance into a refund record
 * (`preparing`); the sender chooses the relayer's nonce, signs the USDC transfer and records nonce, hash and
 * signed transaction (`pending`, a compare-and-set) before broadcasting it, then waits up to `confirmMs`
 * for the receipt. From then on only the chain decides: the refund is `confirmed` when the transaction is
 * mined, and `restored` (the amount back in the balance) only when it can no longer be: it reverted, or
 * its nonce was used by another transaction (counted some blocks below the head), or it was never
 * broadcast or accepted. A refund that is neither stays `pending`, whatever the request answers, and any
 * later call reconciles it: a refund or balance request of the wallet, the periodic sweep, the start of
 * a process. A second refund while one is open pays nothing more. Every step that ends a refund is a
 * compare-and-set in the ledger, so concurrent reconcilers (replicas) end it once.
 */
export class CreditRefunds {
  private readonly pollMs: number;
  private readonly staleMs: number;
  private readonly now: () => number;

  constructor(
    private readonly ledger: CreditLedger,
    private readonly chain: RefundChain,
    private readonly opts: CreditRefundOptions,
  ) {
    this.pollMs = opts.pollMs ?? 500;
    this.staleMs = opts.staleMs ?? 120_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Refunds the wallet's whole balance (open holds stay), or answers the refund already open.
   * @throws AppError UPSTREAM_UNAVAILABLE when the transfer was not sent or not accepted, or reverted (the
   *   balance is restored); the ledger's errors (UPSTREAM_UNAVAILABLE for Redis, nothing taken).
   */
  async refund(wallet: string): Promise<RefundAnswer> {
    // A refund that ended meanwhile frees the wallet for a new one.
    await this.reconcileWallet(wallet).catch((err: unknown) => logger.warn({ err, wallet }, "credit refund reconciliation failed"));
    const started = await this.ledger.startRefund(wallet, randomUUID(), this.now());
    if (!started) return { status: "none" };
    if (!started.created) return { status: "pending", refund: started.refund };
    return this.awaitReceipt(await this.send(started.refund));
  }

  /** Reconciles the wallet's open refund, if any; resolves it as it now stands (undefined: none was open). @throws on RPC or ledger failures. */
  async reconcileWallet(wallet: string): Promise<CreditRefund | undefined> {
    const [open] = await this.ledger.openRefunds({ wallet });
    return open && this.check(open);
  }

  /** Reconciles every open refund (up to 100 per call, oldest first); resolves how many ended. Failures are logged. */
  async reconcileAll(): Promise<number> {
    let ended = 0;
    for (const r of await this.ledger.openRefunds({ limit: 100 })) {
      const now = await this.check(r).catch((err: unknown) => logger.warn({ err, refund: r.id }, "credit refund reconciliation failed"));
      if (now && now.status !== r.status && (now.status === "confirmed" || now.status === "restored")) ended++;
    }
    return ended;
  }

  /**
   * Signs and broadcasts a `preparing` refund's transfer: a fresh nonce per attempt, recorded before the
   * broadcast; a new nonce when the node says the nonce is taken (the refused transaction can never be
   * mined). Resolves the refund `pending` once a broadcast was accepted or its outcome is unknown (or as
   * the ledger holds it when a reconciler ended it first).
   * @throws AppError UPSTREAM_UNAVAILABLE when nothing was accepted (the refund is restored).
   */
  private async send(refund: CreditRefund): Promise<CreditRefund> {
    const deadline = this.now() + SEND_WINDOW_MS;
    let previous: string | null = null;
    for (let attempt = 1; ; attempt++) {
      let tx: RefundTx;
      let recorded: boolean;
      const at = this.now();
      try {
        tx = await this.chain.signTransfer(refund.wallet, refund.amountMicro, await this.chain.pendingNonce());
        recorded = await this.ledger.recordRefundTx(refund.id, previous, tx, at);
      } catch (err) {
        return this.notSent(refund, "not_sent", err);
      }
      // Another reconciler ended it meanwhile (restored: nothing of it was accepted): never broadcast it.
      if (!recorded)
        return (await this.ledger.latestRefund(refund.wallet).then((l) => (l?.id === refund.id ? l : undefined))) ?? { ...refund, status: "restored", reason: "not_sent" };
      const sent: CreditRefund = { ...refund, status: "pending", tx, updatedAtMs: at };
      let outcome;
      try {
        outcome = await this.chain.broadcast(tx.rawTx);
      } catch (err) {
        logger.warn({ err, refund: refund.id, tx: tx.txHash }, "credit refund broadcast outcome unknown; the refund stays pending until the chain tells");
        return sent;
      }
      if (outcome === "sent") {
        logger.info({ refund: refund.id, wallet: refund.wallet, amount_usd: microToUsd(refund.amountMicro), tx: tx.txHash, nonce: tx.nonce }, "credit refund sent");
        return sent;
      }
      if (outcome === "rejected" || attempt >= MAX_SEND_ATTEMPTS || this.now() > deadline) return this.notSent(refund, outcome === "rejected" ? "rejected" : "not_sent");
      previous = tx.txHash;
      await sleep(30 + Math.random() * 120 * attempt);
    }
  }

  /** Waits up to `confirmMs` for a sent refund to end; answers `confirmed`, or `pending`. @throws AppError when it was restored. */
  private async awaitReceipt(refund: CreditRefund): Promise<RefundAnswer> {
    const until = this.now() + this.opts.confirmMs;
    let r = refund;
    for (;;) {
      r = await this.check(r).catch((err: unknown) => {
        logger.warn({ err, refund: refund.id }, "credit refund receipt check failed");
        return r;
      });
      if (r.status === "confirmed") return { status: "confirmed", refund: r };
      if (r.status === "restored") throw restoredError(r);
      const left = until - this.now();
      if (left <= 0) return { status: "pending", refund: r };
      await sleep(Math.min(this.pollMs, left));
    }
  }

  /**
   * One reconciliation of an open refund: the receipt of its transaction decides (success: confirmed;
   * reverted: restored); without one, its nonce used for good by another transaction restores it; else it
   * stays pending, and is broadcast again if the node forgot it and its sender left it alone for `staleMs`.
   * A stale `preparing` refund (its sender died before signing) is restored. Resolves the refund as it
   * stands. @throws on RPC or ledger failures (nothing changed).
   */
  private async check(r: CreditRefund): Promise<CreditRefund> {
    const stale = this.now() - r.updatedAtMs >= this.staleMs;
    if (r.status === "preparing") return stale ? this.finish(r, "restored", "not_sent") : r;
    if (r.status !== "pending" || !r.tx) return r;
    const tx = r.tx;
    const mined = await this.chain.receipt(tx.txHash);
    if (mined) return this.finish(r, mined === "success" ? "confirmed" : "restored", mined === "success" ? null : "reverted");
    if ((await this.chain.usedNonces()) > tx.nonce) {
      // Mined between the two questions, or never: ask once more before concluding.
      const late = await this.chain.receipt(tx.txHash);
      if (late) return this.finish(r, late === "success" ? "confirmed" : "restored", late === "success" ? null : "reverted");
      return this.finish(r, "restored", "dropped");
    }
    if (stale && !(await this.chain.known(tx.txHash))) {
      const outcome = await this.chain.broadcast(tx.rawTx).catch((err: unknown) => String(err));
      logger.warn({ refund: r.id, tx: tx.txHash, outcome }, "credit refund transaction unknown to the node; broadcast again");
    }
    return r;
  }

  /** Ends `r` with `outcome` (once across reconcilers) and resolves it as the ledger now holds it. */
  private async finish(r: CreditRefund, outcome: RefundEnd, reason: RefundReason | null): Promise<CreditRefund> {
    const now = this.now();
    if (await this.ledger.finishRefund(r.id, outcome, reason, now)) {
      logger.info({ refund: r.id, wallet: r.wallet, amount_usd: microToUsd(r.amountMicro), tx: r.tx?.txHash, outcome, reason }, `credit refund ${outcome}`);
      return { ...r, status: outcome, ...(reason ? { reason } : {}), updatedAtMs: now };
    }
    const latest = await this.ledger.latestRefund(r.wallet);
    return latest?.id === r.id ? latest : r;
  }

  /** Restores a refund none of whose transactions was accepted, and builds the error that says so. */
  private async notSent(r: CreditRefund, reason: "not_sent" | "rejected", cause?: unknown): Promise<never> {
    logger.warn({ err: cause, refund: r.id, reason }, "credit refund not sent");
    const restored = await this.ledger.finishRefund(r.id, "restored", reason, this.now()).catch((err: unknown) => {
      logger.error({ err, refund: r.id }, "credit refund could not be restored now; reconciliation restores it");
      return false;
    });
    if (restored) throw restoredError({ ...r, status: "restored", reason });
    throw new AppError(
      "UPSTREAM_UNAVAILABLE",
      "the refund transfer could not be sent now; GET /api/v1/credits shows its state (it is restored to your balance or completed shortly)",
      {
        retryAfterSec: 30,
        cause,
      },
    );
  }
}

/** The error answering a refund request whose refund was restored (or ended otherwise while it ran). */
function restoredError(r: CreditRefund): AppError {
  const why =
    r.reason === "reverted"
      ? `the refund transfer ${r.tx?.txHash ?? ""} reverted on chain`
      : r.reason === "dropped"
        ? "the refund transfer was dropped by the chain"
        : r.reason === "rejected"
          ? "the chain node refused the refund transfer"
          : "the refund transfer could not be sent";
  return new AppError("UPSTREAM_UNAVAILABLE", `${why}; nothing was paid and your balance is restored`, {
    retryAfterSec: 30,
    details: { refund_id: r.id, status: r.status, reason: r.reason ?? null },
  });
}
