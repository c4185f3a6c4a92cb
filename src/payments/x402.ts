import { HTTPFacilitatorClient, type PaymentOption } from "@x402/core/http";
import { x402ResourceServer, type FacilitatorClient } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentIdentifierResourceServerExtension } from "@x402/extensions/payment-identifier";
import { ExactSvmScheme } from "@x402/svm/exact/server";
import type { Config, FacilitatorConfig } from "../config.js";
import { logger } from "../lib/log.js";
import { isFree, type AnyTool } from "../registry/tool.js";
import { ByNetworkFacilitatorClient } from "./facilitator/by-network.js";
import { createSelfFacilitator } from "./facilitator/self.js";
import { createSolanaSelfFacilitator } from "./facilitator/self-svm.js";
import { FailoverFacilitatorClient } from "./failover.js";

/** Settings a payment needs: recipient, CAIP-2 network, authorization validity. */
export type PaymentSettings = Config["payments"] & { payTo: `0x${string}` };

/**
 * Builds one facilitator client: an HTTP facilitator (auth header sent on verify, settle and supported;
 * `timeoutMs` per call), or `self`, an in-process facilitator that settles with the operator's relayer
 * key over `RPC_URL` (and, when configured, on Solana with the fee payer's key over `SOLANA_RPC_URL`).
 */
export function createFacilitatorClient(cfg: FacilitatorConfig, network: `${string}:${string}`, timeoutMs = 15_000, solanaNetwork?: `${string}:${string}`): FacilitatorClient {
  if (cfg.kind === "self") {
    const evm = createSelfFacilitator({ rpcUrl: cfg.rpcUrl, privateKey: cfg.relayerPrivateKey, network, receiptPollMs: cfg.receiptPollMs });
    if (!cfg.solana || !solanaNetwork) return evm;
    return new ByNetworkFacilitatorClient([
      evm,
      createSolanaSelfFacilitator({ rpcUrl: cfg.solana.rpcUrl, feePayerPrivateKey: cfg.solana.feePayerPrivateKey, network: solanaNetwork }),
    ]);
  }
  const auth = cfg.authHeader;
  return new HTTPFacilitatorClient({
    url: cfg.url,
    timeoutMs,
    ...(auth
      ? {
          createAuthHeaders: async () => {
            const h = { [auth.name]: auth.value };
            return { verify: h, settle: h, supported: h };
          },
        }
      : {}),
  });
}

/** The configured facilitators, in failover order, as one client (undefined when none is configured). */
export function createFacilitators(p: Config["payments"]): FacilitatorClient | undefined {
  const named = p.facilitators.map((f) => ({ name: f.kind === "self" ? "self" : f.url, client: createFacilitatorClient(f, p.network, p.facilitatorTimeoutMs, p.solana?.network) }));
  if (named.length === 0) return undefined;
  return named.length === 1 ? named[0]!.client : new FailoverFacilitatorClient(named);
}

/**
 * The x402 resource server (official `@x402/core`): EVM `exact` scheme for the network, the official SVM
 * `exact` scheme for `solanaNetwork` when Solana is offered, `payment-identifier` extension.
 */
export function createResourceServer(facilitator: FacilitatorClient, network: `${string}:${string}`, solanaNetwork?: `${string}:${string}`): x402ResourceServer {
  const rs = new x402ResourceServer(facilitator).register(network, new ExactEvmScheme());
  if (solanaNetwork) rs.register(solanaNetwork, new ExactSvmScheme());
  return rs.registerExtension(paymentIdentifierResourceServerExtension);
}

/** The x402 payment option of a paid tool: `exact` scheme, USDC, `priceUsd` (default: the tool's price). */
export function paymentOption(tool: AnyTool, s: PaymentSettings, priceUsd = tool.priceUsd): PaymentOption {
  return { scheme: "exact", network: s.network, payTo: s.payTo, price: `$${priceUsd}`, maxTimeoutSeconds: s.timeoutSec };
}

/** The Solana payment option of a paid tool (USDC at its mint, to `PAY_TO_SOLANA`), or undefined when Solana is not offered. */
export function solanaPaymentOption(tool: AnyTool, s: PaymentSettings, priceUsd = tool.priceUsd): PaymentOption | undefined {
  if (!s.solana) return undefined;
  return { scheme: "exact", network: s.solana.network, payTo: s.solana.payTo, price: `$${priceUsd}`, maxTimeoutSeconds: s.timeoutSec };
}

/**
 * The requirements a tool's 402 will carry, computed without a facilitator (for OpenAPI, discovery and
 * manifests). The live 402 remains authoritative.
 */
export async function staticRequirements(tool: AnyTool, s: { network: `${string}:${string}`; payTo: string; timeoutSec: number }): Promise<PaymentRequirements> {
  // Solana's `extra.feePayer` comes from the facilitator: only the live 402 carries it.
  const scheme = s.network.startsWith("solana:") ? new ExactSvmScheme() : new ExactEvmScheme();
  const { amount, asset, extra } = await scheme.parsePrice(`$${tool.priceUsd}`, s.network);
  return { scheme: "exact", network: s.network, amount, asset, payTo: s.payTo, maxTimeoutSeconds: s.timeoutSec, extra: extra ?? {} };
}

/**
 * Per-tool payment requirements built once by the resource server after it has synced with the
 * facilitator (`initialize`). Initialisation is retried on the next call after a failure, so a
 * facilitator that is down at boot does not take the free endpoints with it.
 */
export class PaymentCatalog {
  private ready?: Promise<Map<string, PaymentRequirements[]>>;

  constructor(
    readonly resourceServer: x402ResourceServer,
    private readonly tools: readonly AnyTool[],
    readonly settings: PaymentSettings,
  ) {}

  /** Whether the Solana entry is offered: `PAY_TO_SOLANA` set and a facilitator that settles there (checked after `initialize`). */
  private solanaOffered = false;

  private async build(): Promise<Map<string, PaymentRequirements[]>> {
    await this.resourceServer.initialize();
    const sol = this.settings.solana;
    this.solanaOffered = sol !== undefined && this.resourceServer.getSupportedKind(2, sol.network, "exact") !== undefined;
    if (sol && !this.solanaOffered) logger.warn({ network: sol.network }, "PAY_TO_SOLANA is set but no configured facilitator settles on Solana: only Base is offered");
    const map = new Map<string, PaymentRequirements[]>();
    for (const t of this.tools) if (!isFree(t)) map.set(t.name, await this.buildFor(t, t.priceUsd));
    return map;
  }

  /** Base `exact` first (clients that take the first entry they support keep paying on Base), then Solana `exact` when offered. */
  private async buildFor(tool: AnyTool, priceUsd: string): Promise<PaymentRequirements[]> {
    const options = [paymentOption(tool, this.settings, priceUsd), this.solanaOffered ? solanaPaymentOption(tool, this.settings, priceUsd) : undefined];
    const out: PaymentRequirements[] = [];
    for (const o of options) if (o) out.push(...(await this.resourceServer.buildPaymentRequirements({ ...o, price: o.price as string, payTo: o.payTo as string })));
    return out;
  }

  /**
   * Requirements of a paid tool, at `priceUsd` when the call's price depends on its input (built per call:
   * the price is validated input, so nothing caller-chosen is cached).
   * @throws the facilitator's error when it cannot be reached.
   */
  async requirements(tool: AnyTool, priceUsd = tool.priceUsd): Promise<PaymentRequirements[]> {
    this.ready ??= this.build().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    const built = await this.ready;
    if (priceUsd !== tool.priceUsd) return this.buildFor(tool, priceUsd);
    const reqs = built.get(tool.name);
    if (!reqs) throw new Error(`no payment requirements for ${tool.name}`);
    return reqs;
  }
}
