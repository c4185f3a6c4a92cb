import type { Config } from "../../config.js";
import type { Metrics } from "../../core/metrics.js";
import type { CreditAccountsPort } from "../../core/types.js";
import { logger } from "../../lib/log.js";
import type { AnyTool } from "../../registry/tool.js";
import type { RedisHandle } from "../../state/redis.js";
import type { PaymentLedger } from "../ledger.js";
import type { PaymentCatalog } from "../x402.js";
import { CreditGate } from "./gate.js";
import { createCreditLedger } from "./index.js";
import { usdToMicro } from "./ledger.js";
import { CreditRefunds } from "./refunds.js";
import { RelayerRefundChain } from "./relayer.js";
import { CreditSessions } from "./session.js";
import { SiwxVerifier } from "./siwx.js";

/**
 * Prepaid credits as the service wires them: the gate the mounts pay through, and the tools' credit port
 * ({@link CreditAccountsPort}: the gate's ledger and settings and, with a `self` facilitator, refunds).
 */
export interface CreditService extends CreditAccountsPort {
  gate: CreditGate;
  /**
   * Refunds paid by the `self` facilitator's relayer. Present whenever that facilitator is configured, so
   * that refunds left pending are reconciled even after `CREDITS_REFUND` was turned off; new refunds are
   * accepted only when `settings.refund` is on.
   */
  refunds?: CreditRefunds;
  /** Counts a top-up in `/metrics` (`marketgate_credits_credited_usd_total`). */
  onCredited(amountMicro: number): void;
  /** Stops the hold sweeper and closes the ledger. */
  close(): Promise<void>;
}

/** How often expired holds (of requests that died) are returned and open refunds reconciled, ms. */
const SWEEP_EVERY_MS = 60_000;

/**
 * What a hold outlives the request deadline by, ms: a call's hold spans its handler (venue calls bounded by
 * `REQUEST_DEADLINE_MS`; a replica may first wait up to 15 s for another's identical run) and its commit.
 */
export const HOLD_MARGIN_MS = 60_000;

/**
 * Wires prepaid credits from the configuration: the ledger (SQLite `<DATA_DIR>/credits.sqlite`, or Redis
 * with replicas) whose holds expire `REQUEST_DEADLINE_MS` + {@link HOLD_MARGIN_MS} after they were taken,
 * the SIWX verifier (payment networks; smart wallets over `RPC_URL`), the gate, refunds by ERC-20 transfer
 * from the `self` facilitator's relayer key ({@link CreditRefunds}; open ones are reconciled at once), and
 * a sweeper that every minute returns expired holds and reconciles open refunds.
 */
export function createCreditService(
  config: Config,
  deps: {
    catalog: PaymentCatalog;
    idempotency: PaymentLedger;
    topUpTool: AnyTool;
    metrics: Metrics;
    redis?: RedisHandle;
    /** Per-wallet budget of credit-paid calls (keys `wallet:<address>`). */
    walletLimiter?: { consume(key: string): Promise<unknown> };
  },
): CreditService | undefined {
  const c = config.credits;
  if (!c) return undefined;
  const ledger = createCreditLedger({ dataDir: c.dataDir, redis: deps.redis, holdTtlMs: config.requestDeadlineMs + HOLD_MARGIN_MS });
  const micro = (v?: string) => (v === undefined ? undefined : usdToMicro(v));
  const networks = [config.payments.network, ...(config.payments.solana ? [config.payments.solana.network] : [])];
  const siwx = new SiwxVerifier(ledger, { networks, rpcUrl: config.payments.rpcUrl });
  const gate = new CreditGate(
    ledger,
    siwx,
    deps.idempotency,
    {
      minTopUpUsd: c.minTopUpUsd,
      maxTopUpUsd: c.maxTopUpUsd,
      globalCaps: { perCallMaxMicro: micro(c.capPerCallUsd), perHourMaxMicro: micro(c.capPerHourUsd), perDayMaxMicro: micro(c.capPerDayUsd) },
      refund: c.refund,
    },
    deps.topUpTool,
    deps.metrics,
    deps.walletLimiter,
    c.sessionTtlSec > 0 ? new CreditSessions(c.sessionSecret, c.sessionTtlSec) : undefined,
  );
  deps.metrics.observeCredits(() => ledger.totals());
  const self = config.payments.facilitators.find((f) => f.kind === "self");
  const refunds =
    self?.kind === "self"
      ? new CreditRefunds(
          ledger,
          new RelayerRefundChain({
            rpcUrl: self.rpcUrl,
            privateKey: self.relayerPrivateKey,
            network: config.payments.network,
            asset: async () => (await deps.catalog.requirements(deps.topUpTool))[0]!.asset,
          }),
          { confirmMs: c.refundConfirmMs },
        )
      : undefined;
  // Refunds left open by a previous process (a restart mid-refund) are settled from the chain at once,
  // then every minute (one pass at a time).
  let reconciling: Promise<unknown> | undefined;
  const reconcile = () => {
    reconciling ??= (refunds?.reconcileAll() ?? Promise.resolve())
      .catch((err: unknown) => logger.warn({ err }, "credit refund reconciliation failed"))
      .finally(() => (reconciling = undefined));
  };
  reconcile();
  const sweeper = setInterval(() => {
    ledger.sweep().catch((err: unknown) => logger.warn({ err }, "credit hold sweep failed"));
    reconcile();
  }, SWEEP_EVERY_MS);
  sweeper.unref();
  return {
    gate,
    settings: gate.settings,
    ledger,
    refunds,
    onCredited: (amountMicro) => deps.metrics.creditsCreditedUsd.inc(amountMicro / 1e6),
    close: async () => {
      clearInterval(sweeper);
      await ledger.close();
    },
  };
}
