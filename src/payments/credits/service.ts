import { createWalletClient, erc20Abi, getAddress, http, publicActions, type Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Config } from "../../config.js";
import type { Metrics } from "../../core/metrics.js";
import { logger } from "../../lib/log.js";
import type { AnyTool } from "../../registry/tool.js";
import type { RedisHandle } from "../../state/redis.js";
import type { PaymentLedger } from "../ledger.js";
import type { PaymentCatalog } from "../x402.js";
import { CreditGate } from "./gate.js";
import { createCreditLedger } from "./index.js";
import { usdToMicro } from "./ledger.js";
import { CreditSessions } from "./session.js";
import { SiwxVerifier } from "./siwx.js";

/** Prepaid credits as the tools see them: the gate (ledger, settings) and, when refunds are possible, the transfer. */
export interface CreditService {
  gate: CreditGate;
  /** Transfers `amountMicro` USDC to `wallet` from the operator's relayer; resolves the transaction hash. */
  refund?: (wallet: string, amountMicro: number) => Promise<string>;
  /** Counts a top-up in `/metrics` (`marketgate_credits_credited_usd_total`). */
  onCredited(amountMicro: number): void;
  /** Stops the hold sweeper and closes the ledger. */
  close(): Promise<void>;
}

/** How often open holds of dead requests are returned, and how old they must be (longer than any request). */
const SWEEP_EVERY_MS = 60_000;
const HOLD_MAX_AGE_MS = 10 * 60_000;

/**
 * Wires prepaid credits from the configuration: the ledger (SQLite `<DATA_DIR>/credits.sqlite`, or Redis
 * with replicas), the SIWX verifier (payment networks; smart wallets over `RPC_URL`), the gate, a sweeper
 * that returns holds older than 10 minutes (their request died), and refunds by ERC-20 transfer from the
 * `self` facilitator's relayer key when `CREDITS_REFUND=on`.
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
  const ledger = createCreditLedger({ dataDir: c.dataDir, redis: deps.redis });
  const micro = (v?: string) => (v === undefined ? undefined : usdToMicro(v));
  const siwx = new SiwxVerifier(ledger, { networks: [config.payments.network], rpcUrl: config.payments.rpcUrl });
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
  const sweeper = setInterval(() => {
    ledger.sweep(HOLD_MAX_AGE_MS).catch((err: unknown) => logger.warn({ err }, "credit hold sweep failed"));
  }, SWEEP_EVERY_MS);
  sweeper.unref();
  const self = config.payments.facilitators.find((f) => f.kind === "self");
  const refund =
    c.refund && self?.kind === "self"
      ? async (wallet: string, amountMicro: number): Promise<string> => {
          const [req] = await deps.catalog.requirements(deps.topUpTool);
          const client = createWalletClient({ account: privateKeyToAccount(self.relayerPrivateKey), transport: http(self.rpcUrl) }).extend(publicActions);
          const hash = await client.writeContract({
            address: req!.asset as Address,
            abi: erc20Abi,
            functionName: "transfer",
            args: [getAddress(wallet), BigInt(amountMicro)],
            chain: null,
          });
          const receipt = await client.waitForTransactionReceipt({ hash, timeout: 60_000 });
          if (receipt.status !== "success") throw new Error(`refund transfer ${hash} reverted`);
          return hash;
        }
      : undefined;
  return {
    gate,
    refund,
    onCredited: (amountMicro) => deps.metrics.creditsCreditedUsd.inc(amountMicro / 1e6),
    close: async () => {
      clearInterval(sweeper);
      await ledger.close();
    },
  };
}
