import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

const BASE = { PAY_TO: "0x000000000000000000000000000000000000dEaD", RELAYER_PRIVATE_KEY: `0x${"11".repeat(32)}`, RPC_URL: "http://127.0.0.1:8545", HOST: "127.0.0.1" };
const PAY_TO_SOLANA = "9ABx61wTPB6NxoJBxX3Ybk3GEkQAMX7MeYMvbwTDq6RM";
const FEE_PAYER = "miN8mqGdYCn7ABCfmmN2RxBq44wj89qhUGkpAmf65Q3KLZFwGhnunVgsGAWuSRQHonapEmCdrDwfD7vA8hSpKoD";

describe("Solana settings", () => {
  it("offers Solana only with PAY_TO_SOLANA, on mainnet", () => {
    expect(loadConfig(BASE).payments.solana).toBeUndefined();
    const c = loadConfig({ ...BASE, PAY_TO_SOLANA, SOLANA_RPC_URL: "http://127.0.0.1:8899", SOLANA_FEE_PAYER_PRIVATE_KEY: FEE_PAYER });
    expect(c.payments.solana).toEqual({ payTo: PAY_TO_SOLANA, network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" });
    expect(c.payments.facilitators[0]).toMatchObject({ kind: "self", solana: { rpcUrl: "http://127.0.0.1:8899", feePayerPrivateKey: FEE_PAYER } });
  });

  it("refuses PAY_TO_SOLANA with FACILITATOR=self alone unless the Solana fee payer and RPC are set", () => {
    expect(() => loadConfig({ ...BASE, PAY_TO_SOLANA })).toThrow(/SOLANA_RPC_URL and SOLANA_FEE_PAYER_PRIVATE_KEY/);
    expect(() => loadConfig({ ...BASE, PAY_TO_SOLANA, SOLANA_RPC_URL: "http://127.0.0.1:8899" })).toThrow(ConfigError);
    // A facilitator URL may settle on Solana (CDP's does): its /supported decides at start-up.
    expect(loadConfig({ ...BASE, PAY_TO_SOLANA, FACILITATOR: "https://facilitator.example/" }).payments.solana?.payTo).toBe(PAY_TO_SOLANA);
  });

  it("checks the shapes: a base58 address and a base58 64-byte secret key", () => {
    expect(() => loadConfig({ ...BASE, PAY_TO_SOLANA: "0x000000000000000000000000000000000000dEaD" })).toThrow(/PAY_TO_SOLANA/);
    expect(() => loadConfig({ ...BASE, PAY_TO_SOLANA, SOLANA_RPC_URL: "http://127.0.0.1:8899", SOLANA_FEE_PAYER_PRIVATE_KEY: "not-a-key" })).toThrow(
      /SOLANA_FEE_PAYER_PRIVATE_KEY/,
    );
  });
});
