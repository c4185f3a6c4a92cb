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
  /**
   * Which 402s carry challenges ({@link MppGate.methodsFor}; `MPP_CHALLENGES`): `negotiated` (default), only a
   * request that speaks MPP, and then one; `always`, every 402.
   */
  challenges?: "negotiated" | "always";
  /** Tempo method: token and recipient on Tempo (chain 4217 by default). */
  tempo: { currency: Address; recipient: Address; chainId: number };
}

/** CAIP-2 id of Tempo mainnet, named in the receipts of `tempo` payments. */
export const TEMPO_NETWORK = "tempo:4217";

/** An MPP payment method this service offers. */
export type MppMethod = MppSettings["methods"][number];

/**
 * What a request says about MPP, for the challenges of its 402 ({@link MppGate.methodsFor}): its `Accept-Payment`
 * value and whether it carried a Payment credential; or `all` (every method: a quote, not a 402).
 */
export type MppAsk = { acceptPayment: string | undefined; credential: boolean } | "all";

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

/** One range of an `Accept-Payment` value: `method/intent` (either may be `*`) and its weight. */
interface PaymentRange {
  method: string;
  intent: string;
  q: number;
}

/** The ranges of an `Accept-Payment` value (`evm/charge, tempo/*;q=0.5`), or undefined when it cannot be read. */
function parseAcceptPayment(value: string): PaymentRange[] | undefined {
  const out: PaymentRange[] = [];
  // Bounded: a request header, read only for a 402.
  for (const part of value.slice(0, 1024).split(",")) {
    const [token = "", ...params] = part.split(";").map((p) => p.trim().toLowerCase());
    if (!token) continue;
    const m = /^([a-z]+|\*)\/([a-z0-9-]+|\*)$/.exec(token);
    if (!m) return undefined;
    const qParam = params.find((p) => p.startsWith("q="));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q >= 0 && q <= 1)) return undefined;
    out.push({ method: m[1]!, intent: m[2]!, q });
  }
  return out.length ? out : undefined;
}

/**
 * `offered` (our methods, intent `charge`) that `Accept-Payment` accepts (`q>0` in its most specific matching range),
 * highest `q` first and in our order on ties; empty when it accepts none or cannot be read.
 */
function rankByAcceptPayment(offered: readonly MppMethod[], value: string): MppMethod[] {
  const ranges = parseAcceptPayment(value);
  if (!ranges) return [];
  const weight = (method: string): number => {
    let best: { specificity: number; q: number } | undefined;
    for (const r of ranges) {
      if ((r.method !== "*" && r.method !== method) || (r.intent !== "*" && r.intent !== "charge")) continue;
      const specificity = Number(r.method !== "*") + Number(r.intent !== "*");
      if (!best || specificity > best.specificity || (specificity === best.specificity && r.q > best.q)) best = { specificity, q: r.q };
    }
    return best?.q ?? 0;
  };
  return offered
    .map((m, i) => ({ m, i, q: weight(m) }))
    .filter((x) => x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((x) => x.m);
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

  /**
   * The methods a 402 offers a request as `WWW-Authenticate: Payment` challenges (docs/payments.md, "MPP challenges on
   * a 402"), ranked by the request's `Accept-Payment` (draft-httpauth-payment-02, "Client Payment Preferences": `q>0`
   * only, highest `q` first, our order on ties, the most specific range deciding; a header that names none of ours or
   * cannot be read is ignored, as the draft allows). `all`: every method (a quote).
   * - `negotiated` (default): none for a request that does not speak MPP (no `Accept-Payment`, no Payment credential),
   *   since each challenge adds about 0.5 KB to a header block a stock nginx reads in 4 KB; else one, the first ranked
   *   (an mppx client signs the first challenge it supports).
   * - `always`: on every 402, every ranked method (all of them without `Accept-Payment`).
   */
  methodsFor(ask: MppAsk): MppMethod[] {
    const offered = this.settings.methods;
    if (ask === "all") return [...offered];
    const ranked = ask.acceptPayment === undefined ? [] : rankByAcceptPayment(offered, ask.acceptPayment);
    const methods = ranked.length ? ranked : [...offered];
    if (this.settings.challenges === "always") return methods;
    return ask.acceptPayment === undefined && !ask.credential ? [] : methods.slice(0, 1);
  }

  /** `WWW-Authenticate` values offering the MPP methods {@link methodsFor} `ask` for one call of `tool` at `priceUsd`. */
  async challenges(tool: AnyTool, priceUsd = tool.priceUsd, ask: MppAsk = "all"): Promise<string[]> {
    const methods = this.methodsFor(ask);
    if (methods.length === 0) return [];
    const { engine, requirement } = await this.setup(tool, priceUsd);
    // No `description` (optional in the Payment scheme): the x402 requirements beside it describe the
    // resource already, and the 402's header block must stay small (http/payment-gate.ts).
    const opts = { amount: formatUnits(BigInt(requirement.amount), 6), scope: tool.name, expires: Expires.seconds(requirement.maxTimeoutSeconds) };
    const out: string[] = [];
    for (const m of methods) out.push(Challenge.serialize(await (m === "evm" ? engine.challenge.evm.charge(opts) : engine.challenge.tempo.charge(opts))));
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
