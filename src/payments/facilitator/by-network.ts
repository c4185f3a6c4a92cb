import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from "@x402/core/types";
import { logger } from "../../lib/log.js";

/**
 * Several facilitators, each for its own networks, behind one `FacilitatorClient` (e.g. the Base `self`
 * facilitator and the Solana one): `getSupported` merges their kinds, and `verify`/`settle` go to the
 * first facilitator whose kinds name the requirements' network. A part that cannot answer `getSupported`
 * (a bad Solana key, say) is left out, logged, and asked again on the next call, so it never takes the
 * other networks down. Unlike {@link FailoverFacilitatorClient}, nothing is retried on another facilitator.
 */
export class ByNetworkFacilitatorClient implements FacilitatorClient {
  /** Each part's supported kinds once all have answered (until then, asked on every call). */
  private supported?: Array<SupportedResponse | undefined>;

  constructor(private readonly parts: readonly FacilitatorClient[]) {
    if (parts.length === 0) throw new Error("ByNetworkFacilitatorClient needs at least one facilitator");
  }

  private async each(): Promise<Array<SupportedResponse | undefined>> {
    if (this.supported) return this.supported;
    const settled = await Promise.allSettled(this.parts.map((p) => p.getSupported()));
    const out = settled.map((s, i) => {
      if (s.status === "fulfilled") return s.value;
      logger.warn({ err: s.reason, part: i }, "a facilitator's supported kinds could not be read; its networks are left out for now");
      return undefined;
    });
    if (out.every((s) => s === undefined)) throw (settled[0] as PromiseRejectedResult).reason;
    if (out.every((s) => s !== undefined)) this.supported = out;
    return out;
  }

  private async forNetwork(network: string): Promise<FacilitatorClient> {
    const all = await this.each();
    const i = all.findIndex((s) => s?.kinds.some((k) => k.network === network));
    if (i < 0) throw new Error(`no configured facilitator settles on ${network}`);
    return this.parts[i]!;
  }

  /** The kinds, extensions and signers of every part that answers, merged. @throws when none answers. */
  async getSupported(): Promise<SupportedResponse> {
    const all = (await this.each()).filter((s): s is SupportedResponse => s !== undefined);
    const signers: Record<string, string[]> = {};
    for (const s of all) for (const [family, addresses] of Object.entries(s.signers ?? {})) signers[family] = [...(signers[family] ?? []), ...addresses];
    return { kinds: all.flatMap((s) => s.kinds), extensions: [...new Set(all.flatMap((s) => s.extensions ?? []))], signers };
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return (await this.forNetwork(requirements.network)).verify(payload, requirements);
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    return (await this.forNetwork(requirements.network)).settle(payload, requirements);
  }
}
