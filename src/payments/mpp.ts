import { createHash } from "node:crypto";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { Challenge, Credential, Receipt } from "mppx";
import { Expires, Mppx, evm, tempo } from "mppx/server";
import { formatUnits, getAddress, type Address } from "viem";
import { AppError } from "../errors.js";
import type { AnyTool } from "../registry/tool.js";
import { chainIdOfNetwork } from "./facilitator/self.js";
import type { PaymentCatalog } from "./x402.js";

/** MPP ("Payment" HTTP authentication, mppx 0.11) settings. */
export interface MppSettings {
  /** HMAC key binding challenges to this service (≥ 32 bytes); shared by every replica. */
  secretKey: string;
  /** Realm named in challenges; part of the HMAC and of the EIP-3009 nonce, so keep it stable. */
  realm: string;
  /** Methods offered: `evm` (EIP-3009 USDC on the x402 network, settled by our facilitator) and/or `tempo`. */
  methods: ReadonlyArray<"evm" | "tempo">;
  /** Tempo method: token and recipient on Tempo (chain 4217 by default). */
  tempo: { currency: Address; recipient: Address; chainId: number };
}

/** CAIP-2 id of Tempo mainnet, named in the receipts of `tempo` payments. */
export const TEMPO_NETWORK = "tempo:4217";

/** An MPP credential turned into something the pipeline can settle. */
export type MppPayment =
  /** `evm`: the same EIP-3009 authorization as x402, settled through the payment processor. */
  | { method: "evm"; payload: PaymentPayload }
  /**
   * `tempo`: validated by mppx; `settle()` broadcasts it on Tempo after the handler succeeded. `key` (a
   * digest of the signed credential) claims it in the shared payment ledger, so it runs the handler once.
   */
  | { method: "tempo"; key: string; settle(): Promise<string> };

/** EIP-3009 payload of an MPP `evm` credential (mppx `evm.charge`). */
interface EvmCredentialPayload {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
  signature: string;
}

/** The headless mppx engine: `evm` bound to the x402 requirement's asset, EIP-712 domain and payTo; `tempo` from settings. */
function createEngine(settings: MppSettings, r: PaymentRequirements) {
  const extra = r.extra as { name: string; version: string };
  return Mppx.create({
    secretKey: settings.secretKey,
    realm: settings.realm,
    methods: [
      evm.charge({
        chainId: chainIdOfNetwork(r.network),
        currency: getAddress(r.asset),
        decimals: 6,
        recipient: getAddress(r.payTo),
        authorization: { name: extra.name, version: extra.version },
        // Never called: evm credentials are settled by our x402 resource server (see class comment).
        settle: async () => {
          throw new Error("evm credentials settle through the x402 resource server");
        },
      }),
      tempo.charge({ currency: settings.tempo.currency, recipient: settings.tempo.recipient, chainId: settings.tempo.chainId }),
    ],
  });
}

type MppEngine = ReturnType<typeof createEngine>;

/**
 * MPP beside x402 on the same 402 (`WWW-Authenticate: Payment ...` challenges) and on the same settlement
 * path: an `evm` credential is validated by mppx (HMAC-bound challenge, expiry, tool scope, amount,
 * recipient, signature) and then becomes an x402 payload for our resource server, so exactly-once rules
 * apply unchanged. mppx is used as a headless engine; its HTTP handlers are not (they would add their own
 * x402 header). Challenges need no network; Tempo verification needs the Tempo RPC (live only).
 */
export class MppGate {
  private engine?: MppEngine;

  constructor(
    private readonly settings: MppSettings,
    private readonly catalog: PaymentCatalog,
  ) {}

  private async setup(tool: AnyTool, priceUsd: string): Promise<{ engine: MppEngine; requirement: PaymentRequirements }> {
    const [requirement] = await this.catalog.requirements(tool, priceUsd);
    if (!requirement) throw new Error(`no payment requirement for ${tool.name}`);
    this.engine ??= createEngine(this.settings, requirement);
    return { engine: this.engine, requirement };
  }

  private routeOptions(tool: AnyTool, r: PaymentRequirements) {
    return { request: { amount: formatUnits(BigInt(r.amount), 6) }, scope: tool.name };
  }

  /** `WWW-Authenticate` values offering the configured MPP methods for one call of `tool` at `priceUsd`. */
  async challenges(tool: AnyTool, priceUsd = tool.priceUsd): Promise<string[]> {
    const { engine, requirement } = await this.setup(tool, priceUsd);
    // No `description` (optional in the Payment scheme): the x402 requirements beside it describe the
    // resource already, and the 402's header block must stay small (http/payment-gate.ts).
    const opts = { amount: formatUnits(BigInt(requirement.amount), 6), scope: tool.name, expires: Expires.seconds(requirement.maxTimeoutSeconds) };
    const out: string[] = [];
    if (this.settings.methods.includes("evm")) out.push(Challenge.serialize(await engine.challenge.evm.charge(opts)));
    if (this.settings.methods.includes("tempo")) out.push(Challenge.serialize(await engine.challenge.tempo.charge(opts)));
    return out;
  }

  /** The MPP credential of an `Authorization` header value, or null when it is not the `Payment` scheme. */
  static credentialOf(authorization: string | undefined): string | null {
    return authorization ? Credential.extractPaymentScheme(authorization) : null;
  }

  /**
   * Validates a credential for one call of `tool`.
   * @throws AppError PAYMENT_REQUIRED with the reason when the credential is malformed, expired, not ours,
   *   for another tool or amount, or for a method we do not offer.
   */
  async accept(tool: AnyTool, credential: string, resourceUrl: string, priceUsd = tool.priceUsd): Promise<MppPayment> {
    const { engine, requirement } = await this.setup(tool, priceUsd);
    const opts = this.routeOptions(tool, requirement);
    let cred: Credential.Credential;
    try {
      cred = Credential.deserialize(credential);
      if (!this.settings.methods.includes(cred.challenge.method as "evm" | "tempo")) throw new Error(`method ${cred.challenge.method} is not offered`);
      await engine.validateCredential(cred, opts);
    } catch (err) {
      throw new AppError("PAYMENT_REQUIRED", `MPP credential refused: ${(err as Error).message.split("\n")[0]}`);
    }
    if (cred.challenge.method === "tempo") {
      const key = `tempo:${createHash("sha256").update(JSON.stringify(cred.payload)).digest("hex")}`;
      return { method: "tempo", key, settle: async () => (await engine.broadcastCredential(cred, opts)).reference };
    }
    const p = cred.payload as EvmCredentialPayload;
    return {
      method: "evm",
      payload: {
        x402Version: 2,
        accepted: requirement,
        resource: { url: resourceUrl },
        payload: { authorization: { from: p.from, to: p.to, value: p.value, validAfter: p.validAfter, validBefore: p.validBefore, nonce: p.nonce }, signature: p.signature },
      },
    };
  }

  /** `Payment-Receipt` header value for a settled MPP payment. */
  static receipt(method: "evm" | "tempo", reference: string): string {
    return Receipt.serialize(Receipt.from({ method, reference, status: "success", timestamp: new Date().toISOString() }));
  }

  /** `Payment-Receipt` for an x402 settlement reached through an `evm` credential. */
  static receiptOf(r: SettleResponse): string {
    return MppGate.receipt("evm", r.transaction);
  }
}
