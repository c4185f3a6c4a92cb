import { HTTPFacilitatorClient, type PaymentOption } from "@x402/core/http";
import { x402ResourceServer, type FacilitatorClient } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentIdentifierResourceServerExtension } from "@x402/extensions/payment-identifier";
import type { Config, FacilitatorConfig } from "../config.js";
import { isFree, type AnyTool } from "../registry/tool.js";
import { createSelfFacilitator } from "./facilitator/self.js";
import { FailoverFacilitatorClient } from "./failover.js";

/** Settings a payment needs: recipient, CAIP-2 network, authorization validity. */
export type PaymentSettings = Config["payments"] & { payTo: `0x${string}` };

/**
 * Builds one facilitator client: an HTTP facilitator (auth header sent on verify, settle and supported;
 * `timeoutMs` per call), or `self`, an in-process facilitator that settles with the operator's relayer
 * key over `RPC_URL`.
 */
export function createFacilitatorClient(cfg: FacilitatorConfig, network: `${string}:${string}`, timeoutMs = 15_000): FacilitatorClient {
  if (cfg.kind === "self") return createSelfFacilitator({ rpcUrl: cfg.rpcUrl, privateKey: cfg.relayerPrivateKey, network, receiptPollMs: cfg.receiptPollMs });
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
  const named = p.facilitators.map((f) => ({ name: f.kind === "self" ? "self" : f.url, client: createFacilitatorClient(f, p.network, p.facilitatorTimeoutMs) }));
  if (named.length === 0) return undefined;
  return named.length === 1 ? named[0]!.client : new FailoverFacilitatorClient(named);
}

/** The x402 resource server (official `@x402/core`): EVM `exact` scheme for the network, `payment-identifier` extension. */
export function createResourceServer(facilitator: FacilitatorClient, network: `${string}:${string}`): x402ResourceServer {
  return new x402ResourceServer(facilitator).register(network, new ExactEvmScheme()).registerExtension(paymentIdentifierResourceServerExtension);
}

/** The x402 payment option of a paid tool: `exact` scheme, USDC, `priceUsd` (default: the tool's price). */
export function paymentOption(tool: AnyTool, s: PaymentSettings, priceUsd = tool.priceUsd): PaymentOption {
  return { scheme: "exact", network: s.network, payTo: s.payTo, price: `$${priceUsd}`, maxTimeoutSeconds: s.timeoutSec };
}

/**
 * The requirements a tool's 402 will carry, computed without a facilitator (for OpenAPI, discovery and
 * manifests). The live 402 remains authoritative.
 */
export async function staticRequirements(tool: AnyTool, s: { network: `${string}:${string}`; payTo: string; timeoutSec: number }): Promise<PaymentRequirements> {
  const { amount, asset, extra } = await new ExactEvmScheme().parsePrice(`$${tool.priceUsd}`, s.network);
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

  private async build(): Promise<Map<string, PaymentRequirements[]>> {
    await this.resourceServer.initialize();
    const map = new Map<string, PaymentRequirements[]>();
    for (const t of this.tools) {
      if (isFree(t)) continue;
      const o = paymentOption(t, this.settings);
      map.set(t.name, await this.resourceServer.buildPaymentRequirements({ ...o, price: o.price as string, payTo: this.settings.payTo }));
    }
    return map;
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
    if (priceUsd !== tool.priceUsd) {
      const o = paymentOption(tool, this.settings, priceUsd);
      return this.resourceServer.buildPaymentRequirements({ ...o, price: o.price as string, payTo: this.settings.payTo });
    }
    const reqs = built.get(tool.name);
    if (!reqs) throw new Error(`no payment requirements for ${tool.name}`);
    return reqs;
  }
}
