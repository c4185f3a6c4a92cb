import { getBase58Decoder, getBase58Encoder } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ByNetworkFacilitatorClient } from "../../src/payments/facilitator/by-network.js";
import { createSolanaSelfFacilitator } from "../../src/payments/facilitator/self-svm.js";
import { startLocalSolana, type LocalSolana } from "../../src/payments/local-chain/solana/index.js";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

describe("Solana facilitators", () => {
  let sol: LocalSolana;
  beforeAll(async () => {
    sol = await startLocalSolana({ payers: 1 });
  });
  afterAll(() => sol?.close());

  it("the VM-backed facilitator advertises exact on Solana mainnet with its fee payer", async () => {
    const s = await sol.facilitator.getSupported();
    expect(s.kinds).toEqual([expect.objectContaining({ x402Version: 2, scheme: "exact", network: SOLANA, extra: { feePayer: sol.feePayer.address } })]);
  });

  it("FACILITATOR=self on Solana refuses a secret key whose public half does not match, without taking the other facilitators down", async () => {
    // 64 bytes whose second half is another key's public key: base58 of the right length, but not a keypair.
    const bad = createSolanaSelfFacilitator({ rpcUrl: sol.rpc.url, feePayerPrivateKey: mismatched(sol) });
    await expect(bad.getSupported()).rejects.toThrow();
    const both = new ByNetworkFacilitatorClient([bad, sol.facilitator]);
    expect((await both.getSupported()).kinds.map((k) => k.network)).toEqual([SOLANA]);
  });

  it("the loopback RPC answers the two client calls and refuses others", async () => {
    const call = async (method: string, params: unknown[] = []) =>
      (await (await fetch(sol.rpc.url, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }) })).json()) as Record<string, unknown>;
    expect(await call("getLatestBlockhash")).toMatchObject({ id: 7, result: { value: { blockhash: expect.any(String) } } });
    expect(await call("getAccountInfo", [sol.mint, { encoding: "base64" }])).toMatchObject({ result: { value: { owner: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" } } });
    expect(await call("getAccountInfo", ["not an address"])).toMatchObject({ error: { code: -32602 } });
    expect(await call("sendTransaction", ["x"])).toMatchObject({ error: { code: -32601 } });
  });
});

/** The fee payer's seed with the recipient's public key as the second half (base58). */
function mismatched(sol: LocalSolana): string {
  const key = new Uint8Array(getBase58Encoder().encode(sol.feePayer.secretKey));
  key.set(getBase58Encoder().encode(sol.payTo.secretKey).slice(32), 32);
  return getBase58Decoder().decode(key);
}
