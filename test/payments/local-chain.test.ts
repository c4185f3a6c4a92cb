import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { x402Client } from "@x402/core/client";
import { x402ResourceServer } from "@x402/core/server";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme as ExactEvmClientScheme } from "@x402/evm/exact/client";
import { ExactEvmScheme as ExactEvmServerScheme } from "@x402/evm/exact/server";
import { createServer, type Server } from "node:net";
import { createPublicClient, createWalletClient, http, parseAbi, toHex, type Hex } from "viem";
import { mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { startAnvil, type AnvilHandle } from "../../src/payments/local-chain/anvil.js";
import { DEV_ACCOUNTS, DEV_MNEMONIC, devAccount } from "../../src/payments/local-chain/dev-accounts.js";
import { BASE_USDC_ADDRESS, provisionLocalChain, usdcBalanceOf } from "../../src/payments/local-chain/provision.js";
import { chainIdOfNetwork, createSelfFacilitator } from "../../src/payments/facilitator/self.js";

const NETWORK = "eip155:8453" as const;

const tokenAbi = parseAbi([
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function decimals() view returns (uint8)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)",
]);

const authTypes = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
  CancelAuthorization: [
    { name: "authorizer", type: "address" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

describe("dev accounts", () => {
  it("match the standard mnemonic", () => {
    expect(DEV_ACCOUNTS).toHaveLength(10);
    for (const acct of DEV_ACCOUNTS) {
      expect(mnemonicToAccount(DEV_MNEMONIC, { addressIndex: acct.index }).address).toBe(acct.address);
      expect(privateKeyToAccount(acct.privateKey).address).toBe(acct.address);
    }
    expect(() => devAccount(10)).toThrow(RangeError);
  });
});

describe("chainIdOfNetwork", () => {
  it("parses eip155 networks and rejects others", () => {
    expect(chainIdOfNetwork("eip155:8453")).toBe(8453);
    expect(chainIdOfNetwork("eip155:84532")).toBe(84532);
    expect(() => chainIdOfNetwork("solana:mainnet")).toThrow(/eip155/);
    expect(() => chainIdOfNetwork("eip155:")).toThrow();
    expect(() => chainIdOfNetwork("eip155:0x2105")).toThrow();
  });
});

describe("local chain + self facilitator (anvil)", () => {
  let anvil: AnvilHandle;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 8453 });
    await provisionLocalChain({ rpcUrl: anvil.rpcUrl });
  }, 20_000);

  afterAll(async () => {
    await anvil?.stop();
  });

  const balance = (index: number) => usdcBalanceOf(anvil.rpcUrl, BASE_USDC_ADDRESS, devAccount(index).address);

  it("funds #1..#9 with 1000 USDC at the Base USDC address", async () => {
    for (let i = 1; i <= 9; i++) expect(await balance(i)).toBe(1000_000_000n);
    expect(await balance(0)).toBe(0n);

    const client = createPublicClient({ transport: http(anvil.rpcUrl) });
    const abi = tokenAbi;
    expect(await client.readContract({ address: BASE_USDC_ADDRESS, abi, functionName: "name" })).toBe("USD Coin");
    expect(await client.readContract({ address: BASE_USDC_ADDRESS, abi, functionName: "version" })).toBe("2");
    expect(await client.readContract({ address: BASE_USDC_ADDRESS, abi, functionName: "decimals" })).toBe(6);
  });

  it("verifies and settles an x402 exact payment once, and rejects the replay", async () => {
    const payer = devAccount(1);
    const payee = devAccount(9);
    const facilitator = createSelfFacilitator({ rpcUrl: anvil.rpcUrl, privateKey: devAccount(0).privateKey, network: NETWORK });
    const rs = new x402ResourceServer(facilitator).register(NETWORK, new ExactEvmServerScheme());
    await rs.initialize();

    const accepts = await rs.buildPaymentRequirements({
      scheme: "exact",
      network: NETWORK,
      payTo: payee.address,
      price: "$0.01",
      maxTimeoutSeconds: 60,
    });
    expect(accepts[0]).toMatchObject({ asset: BASE_USDC_ADDRESS, amount: "10000" });

    const paymentRequired: PaymentRequired = {
      x402Version: 2,
      resource: { url: "http://x/y", description: "", mimeType: "application/json" },
      accepts,
    };
    const client = new x402Client().register(NETWORK, new ExactEvmClientScheme(privateKeyToAccount(payer.privateKey)));
    const payload = await client.createPaymentPayload(paymentRequired);
    const requirements = accepts[0]!;

    const before1 = await balance(1);
    const before9 = await balance(9);

    const verified = await rs.verifyPayment(payload, requirements);
    expect(verified.isValid, JSON.stringify(verified)).toBe(true);

    const settled = await rs.settlePayment(payload, requirements);
    expect(settled.success, JSON.stringify(settled)).toBe(true);
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    expect(before1 - (await balance(1))).toBe(10_000n);
    expect((await balance(9)) - before9).toBe(10_000n);

    // Replay of the same authorization: the on-chain nonce is used, so it must not pay twice.
    let replayOk: boolean;
    try {
      const again = await rs.settlePayment(payload, requirements);
      replayOk = again.success;
    } catch {
      replayOk = false;
    }
    expect(replayOk).toBe(false);
    expect(before1 - (await balance(1))).toBe(10_000n);
    expect((await balance(9)) - before9).toBe(10_000n);
  });

  it("TestUSDC: bytes-signature overload, FiatToken revert messages, cancelAuthorization", async () => {
    const from = privateKeyToAccount(devAccount(2).privateKey);
    const to = devAccount(3).address;
    const relayer = createWalletClient({ account: privateKeyToAccount(devAccount(0).privateKey), transport: http(anvil.rpcUrl) });
    const client = createPublicClient({ transport: http(anvil.rpcUrl) });
    const domain = { name: "USD Coin", version: "2", chainId: 8453, verifyingContract: BASE_USDC_ADDRESS } as const;
    const now = BigInt(Math.floor(Date.now() / 1000));
    const sign = (nonce: Hex, validBefore: bigint, value = 5n) =>
      from.signTypedData({
        domain,
        types: authTypes,
        primaryType: "TransferWithAuthorization",
        message: { from: from.address, to, value, validAfter: 0n, validBefore, nonce },
      });
    const simulate = (nonce: Hex, validBefore: bigint, signature: Hex, value = 5n) =>
      client.simulateContract({
        account: relayer.account,
        address: BASE_USDC_ADDRESS,
        abi: tokenAbi,
        functionName: "transferWithAuthorization",
        args: [from.address, to, value, 0n, validBefore, nonce, signature],
      });

    const before = await balance(3);
    const nonce1 = toHex(1n, { size: 32 });
    const sig1 = await sign(nonce1, now + 600n);
    const { request } = await simulate(nonce1, now + 600n, sig1);
    const hash = await relayer.writeContract({ ...request, chain: null });
    expect((await client.waitForTransactionReceipt({ hash })).status).toBe("success");
    expect((await balance(3)) - before).toBe(5n);
    expect(await client.readContract({ address: BASE_USDC_ADDRESS, abi: tokenAbi, functionName: "authorizationState", args: [from.address, nonce1] })).toBe(true);

    await expect(simulate(nonce1, now + 600n, sig1)).rejects.toThrow(/authorization is used or canceled/);
    const nonce2 = toHex(2n, { size: 32 });
    await expect(simulate(nonce2, now - 1n, await sign(nonce2, now - 1n))).rejects.toThrow(/authorization is expired/);
    await expect(simulate(nonce2, now + 600n, await sign(nonce2, now + 600n), 6n)).rejects.toThrow(/invalid signature/);
    await expect(
      client.simulateContract({
        account: relayer.account,
        address: BASE_USDC_ADDRESS,
        abi: tokenAbi,
        functionName: "receiveWithAuthorization",
        args: [from.address, to, 5n, 0n, now + 600n, nonce2, await sign(nonce2, now + 600n)],
      }),
    ).rejects.toThrow(/caller must be the payee/);

    const cancelSig = await from.signTypedData({ domain, types: authTypes, primaryType: "CancelAuthorization", message: { authorizer: from.address, nonce: nonce2 } });
    const cancelHash = await relayer.writeContract({
      chain: null,
      address: BASE_USDC_ADDRESS,
      abi: tokenAbi,
      functionName: "cancelAuthorization",
      args: [from.address, nonce2, cancelSig],
    });
    expect((await client.waitForTransactionReceipt({ hash: cancelHash })).status).toBe("success");
    await expect(simulate(nonce2, now + 600n, await sign(nonce2, now + 600n))).rejects.toThrow(/authorization is used or canceled/);
  });
});

describe("startAnvil failures", () => {
  it("rejects with a clear error when the port is taken", async () => {
    const blocker: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const address = blocker.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      await expect(startAnvil({ port, startTimeoutMs: 5000 })).rejects.toThrow(/anvil failed to start/);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
