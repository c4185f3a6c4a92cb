import { AppError } from "../errors.js";
import { logger } from "../lib/log.js";
import { microToUsd } from "../payments/credits/ledger.js";
import type { CreditGate } from "../payments/credits/gate.js";
import type { SignedReceipt } from "@x402/extensions/offer-receipt";
import type { StreamDef } from "../registry/stream.js";
import type { LiveHub } from "./hub.js";
import type { StreamLimits } from "./limits.js";
import type { LiveEvent } from "./types.js";

/** What a transport gives a stream session. */
export interface StreamTransport {
  /**
   * Queues one event; false when the subscriber is over its unread-bytes budget (it is then dropped).
   * `replay`: part of the backlog, sent whatever the budget (it is bounded by the resume limits, resume.ts).
   */
  send(e: LiveEvent, replay?: boolean): boolean;
  /** Sends `last` (when given) and closes the connection or the subscription. */
  end(last?: LiveEvent): void;
}

/** Everything a stream session needs besides its transport. */
export interface StreamSessionOptions {
  hub: LiveHub;
  limits: StreamLimits;
  def: StreamDef;
  /** Validated base, or undefined (all liquidations). */
  symbol: string | undefined;
  lastEventId?: string;
  /** The SIWX wallet paying; undefined when payments are off (streams are then free). */
  wallet?: string;
  /** Debits the stream-minutes; undefined when payments are off. */
  gate?: CreditGate;
  /** Length of one billed minute, ms. */
  minuteMs: number;
  /** A fresh credits session token for the wallet (sent with each `debit`, so a reconnect never needs a new signature). */
  renewSession?: () => string | undefined;
  /** Signs the receipt of a paid minute for the wallet (receipts on; HttpPaymentGate.streamReceipt), sent in its `debit` event. */
  receipt?: (wallet: string) => Promise<SignedReceipt | undefined>;
}

/** How to top up, in `payment_required` events. */
const TOP_UP = { method: "POST" as const, path: "/api/v1/credits", body: { amount_usd: "5" } };

/**
 * One subscriber of one topic, whatever the transport (SSE connection, WebSocket subscription):
 * takes a stream slot, subscribes to the hub, debits the first minute from credits, then sends the
 * `debit` event, the backlog (resume) and the live events in order, and debits each following minute at
 * its start. A minute that cannot be paid ends the stream with `payment_required`; a subscriber that
 * falls behind its byte budget is ended with `dropped`.
 */
export class StreamSession {
  private unsubscribe?: () => void;
  private release?: () => void;
  private timer?: NodeJS.Timeout;
  private minute = 0;
  private started = false;
  private ended = false;
  /** Live events that arrived while the first minute was being debited. */
  private early: LiveEvent[] = [];

  private constructor(
    private readonly opts: StreamSessionOptions,
    private readonly transport: StreamTransport,
  ) {}

  /**
   * Opens a session: `{ refused }` (nothing debited, nothing held) when the first minute cannot be paid,
   * else the running session.
   * @throws AppError RATE_LIMITED / UPSTREAM_UNAVAILABLE over the stream limits or without live stores;
   *   UPSTREAM_UNAVAILABLE when the credits ledger is unreachable (nothing debited).
   */
  static async open(opts: StreamSessionOptions, transport: StreamTransport): Promise<StreamSession | { refused: string }> {
    const s = new StreamSession(opts, transport);
    const free = opts.limits.acquire(opts.wallet);
    const untrack = opts.limits.track(() => s.close({ event: "dropped", data: { reason: "the server is shutting down; reconnect with Last-Event-ID" } }));
    s.release = () => {
      free();
      untrack();
    };
    let backlog: LiveEvent[];
    try {
      const sub = opts.hub.subscribe(opts.def.topic, opts.symbol, opts.lastEventId, (e) => (s.started ? s.deliver(e) : s.early.push(e)));
      s.unsubscribe = sub.unsubscribe;
      backlog = sub.backlog;
      const paid = await s.debit();
      if (paid === "refused") {
        s.stop();
        return { refused: s.refusal! };
      }
    } catch (err) {
      s.stop();
      if (err instanceof AppError) throw err;
      logger.warn({ err }, "credits ledger unreachable when opening a stream");
      throw new AppError("UPSTREAM_UNAVAILABLE", "the credits ledger is unreachable; nothing was debited", { retryAfterSec: 5, cause: err });
    }
    if (s.ended) return s;
    s.started = true;
    if (s.firstDebit) s.deliver(s.firstDebit);
    for (const e of backlog) if (!s.deliver(e, true)) return s;
    const early = s.early;
    s.early = [];
    for (const e of early) if (!s.deliver(e)) return s;
    s.schedule();
    return s;
  }

  private refusal?: string;
  private firstDebit?: LiveEvent;

  /** Debits the next minute; "refused" (reason in `refusal`) or "paid"; throws when the ledger is unreachable. */
  private async debit(): Promise<"paid" | "refused"> {
    const { gate, wallet, def } = this.opts;
    this.minute++;
    if (!gate || !wallet) return "paid";
    const out = await gate.debit(wallet, def.pricePerMinuteUsd, `stream_${def.topic}`);
    if (out.kind === "payment_required") {
      this.refusal = out.reason;
      return "refused";
    }
    this.opts.hub.paidMinute(def.topic, this.opts.symbol);
    const session = this.opts.renewSession?.();
    const receipt = await this.opts.receipt?.(wallet);
    const e: LiveEvent = {
      event: "debit",
      data: {
        topic: def.topic,
        minute: this.minute,
        price_usd: def.pricePerMinuteUsd,
        remaining_usd: microToUsd(out.remainingMicro),
        ...(session ? { session } : {}),
        ...(receipt ? { receipt } : {}),
      },
    };
    if (this.started) this.deliver(e);
    else this.firstDebit = e;
    return "paid";
  }

  private schedule(): void {
    if (this.ended) return;
    this.timer = setTimeout(() => void this.nextMinute(), this.opts.minuteMs);
    this.timer.unref();
  }

  private async nextMinute(): Promise<void> {
    if (this.ended) return;
    try {
      if ((await this.debit()) === "refused") {
        return this.close({ event: "payment_required", data: { topic: this.opts.def.topic, reason: this.refusal, top_up: TOP_UP } });
      }
    } catch (err) {
      logger.warn({ err }, "credits ledger unreachable: stream closed");
      return this.close({ event: "dropped", data: { reason: "the credits ledger is unreachable; nothing was debited for this minute. Reconnect with Last-Event-ID" } });
    }
    this.schedule();
  }

  /** Sends one event; a subscriber over its budget is dropped. False once the session has ended. */
  private deliver(e: LiveEvent, replay = false): boolean {
    if (this.ended) return false;
    if (this.transport.send(e, replay)) return true;
    this.close({ event: "dropped", data: { reason: "slow consumer: too many unread bytes; reconnect with Last-Event-ID to resume" } });
    return false;
  }

  /** Ends the session with `last` (when given) and closes the transport. Idempotent. */
  close(last?: LiveEvent): void {
    if (this.ended) return;
    this.stop();
    this.transport.end(last);
  }

  /** Ends the session without touching the transport (it closed). Idempotent. */
  stop(): void {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.release?.();
    this.early = [];
  }
}
