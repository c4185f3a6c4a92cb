import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../../errors.js";

/*
 * The part of a token source's budget that checks before payment may spend (issue 31, finding 3): without it, an
 * unpaid client asking random addresses spent the budget that paid lookups then waited for. A source's calls per
 * window are split once: unpaid checks get their share, paid and background loads keep the rest in their queue,
 * so no number of unpaid requests makes a paid one wait. A check that finds its share spent is told so at once.
 */

/** Default share of each source's budget kept for checks before payment, percent (`TOKEN_CHECK_SHARE_PCT`). */
export const UNPAID_SHARE_PCT = 20;

/** Highest share an operator may give checks before payment, percent: paid loads always keep at least half. */
export const MAX_UNPAID_SHARE_PCT = 50;

/**
 * Splits `perWindow` calls (≥ 1) of a source's budget window: `unpaid` = ⌊perWindow × sharePct / 100⌋ (0 when
 * that rounds down, e.g. a budget of 1–4 calls at 20%), `paid` the rest, never 0.
 */
export function splitBudget(perWindow: number, sharePct: number): { paid: number; unpaid: number } {
  const total = Math.max(1, Math.floor(perWindow));
  const unpaid = Math.max(0, Math.min(total - 1, Math.floor((total * Math.min(sharePct, MAX_UNPAID_SHARE_PCT)) / 100)));
  return { paid: total - unpaid, unpaid };
}

/**
 * The answer of a check before payment that would need its source's unpaid share when that is spent: 503 with
 * the seconds until the share has room again. Token sources catch it to answer "unchecked"; a caller that must
 * decide before payment (an upfront-paid alert) sends it as is. Nothing is charged.
 */
export class UnpaidShareSpent extends AppError {
  constructor(source: string, retryAfterMs: number) {
    const retryAfterSec = Math.max(1, Math.ceil(retryAfterMs / 1000));
    super("UPSTREAM_UNAVAILABLE", `the share of the ${source} request budget kept for checks before payment is spent; nothing was charged, retry in ${retryAfterSec} s`, {
      retryAfterSec,
    });
  }
}

/** `points` calls per `windowMs` for unpaid checks of one source (rate-limiter-flexible, in memory: the budgets are per replica). */
export class UnpaidShare {
  private readonly limiter?: RateLimiterMemory;

  /** @param points calls per window (0: unpaid checks never call the source); @param windowMs the source's budget window. */
  constructor(
    readonly points: number,
    private readonly windowMs: number,
  ) {
    if (points > 0) this.limiter = new RateLimiterMemory({ points, duration: windowMs / 1000 });
  }

  /**
   * Takes one call of the share, without waiting.
   * @returns 0 when taken, else the ms until one is free again.
   */
  async take(): Promise<number> {
    if (!this.limiter) return this.windowMs;
    try {
      await this.limiter.consume("share");
      return 0;
    } catch (r) {
      if (r instanceof RateLimiterRes) return Math.max(1, r.msBeforeNext);
      throw r;
    }
  }
}
