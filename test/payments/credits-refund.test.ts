import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { createPublicClient, createWalletClient, erc20Abi, http, parseAbi, parseGwei, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteCreditLedger } from "../../src/payments/credits/index.js";
import { CreditRefunds } from "../../src/payments/credits/refunds.js";
import { RelayerRefundChain, type RefundChain } from "../../src/payments/credits/relayer.js";
import { startAnvil, type AnvilHandle } from "../../src/payments/local-chain/anvil.js";
import { provisionLocalChain, usdcBalanceOf, type ProvisionedChain } from "../../src/payments/local-chain/provision.js";
import { anvilRpc, pauseMining } from "../helpers/anvil.js";
import { cleanupAfterEach, tempDir } from "../helpers/scratch.js";

/**
 * The refund state machine against a real chain (anvil) and a real SQLite ledger: what a refund becomes
 * when its broadcast's outcome is unknown and the process restarts, when its nonce is taken, when it
 * reverts, when its sender dies before signing, and when the node refuses it. Each test uses a relayer of
 * its own and fresh wallets, so USDC balances count this test's transfers only.
 */
const mintAbi = parseAbi(["function mint(address to, uint256 value) returns (bool)"]);
const authAbi = parseAbi([
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
]);

const cleanup = cleanupAfterEach();
const newWallet = (): Address => `0x${randomBytes(20).toString("hex")}`;
/** A chain that behaves like `c` except for the methods in `over`. */
const wrap = (c: RefundChain, over: Partial<RefundChain>): RefundChain => ({
  pendingNonce: () => c.pendingNonce(),
  signTransfer: (w, a, n) => c.signTransfer(w, a, n),
  broadcast: (raw) => c.broadcast(raw),
  receipt: (h) => c.receipt(h),
  usedNonces: () => c.usedNonces(),
  known: (h) => c.known(h),
  ...over,
});

describe("credit refunds on a local chain", () => {
  let anvil: AnvilHandle;
  let chain: ProvisionedChain;
  const usdc = (a: Address) => usdcBalanceOf(anvil.rpcUrl, chain.usdcAddress, a);
  const deployer = () => createWalletClient({ account: privateKeyToAccount(chain.relayer.privateKey), transport: http(anvil.rpcUrl) });
  const publicClient = () => createPublicClient({ transport: http(anvil.rpcUrl) });

  /** A relayer key of its own with `usdcMicro` USDC and, unless `gas` is false, ETH for gas. */
  const freshRelayer = async (usdcMicro: bigint, gas = true) => {
    const privateKey = generatePrivateKey();
    const address = privateKeyToAccount(privateKey).address;
    if (gas) await anvilRpc(anvil.rpcUrl, "anvil_setBalance", [address, "0x56bc75e2d63100000"]);
    const hash = await deployer().writeContract({ address: chain.usdcAddress, abi: mintAbi, functionName: "mint", args: [address, usdcMicro], chain: null });
    await publicClient().waitForTransactionReceipt({ hash });
    const refundChain = new RelayerRefundChain({ rpcUrl: anvil.rpcUrl, privateKey, network: "eip155:8453", asset: async () => chain.usdcAddress });
    return { privateKey, address, refundChain };
  };
  const ledger = (path = ":memory:") => {
    const l = new SqliteCreditLedger(path);
    cleanup.push(() => void l.close());
    return l;
  };

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 8453 });
    chain = await provisionLocalChain({ rpcUrl: anvil.rpcUrl, fundedAccounts: [1] });
  });
  afterAll(() => anvil?.stop());

  it("a broadcast whose outcome is unknown stays pending; after a restart the transaction the node never got is sent again, and the wallet is paid once", async () => {
    const { refundChain } = await freshRelayer(5_000_000n);
    const file = join(tempDir(cleanup, "mg-refund-"), "credits.sqlite");
    const w = newWallet();
    const first = new SqliteCreditLedger(file);
    await first.credit(w, 500_000, "top-up");
    // The RPC drops the connection before the node got the transaction: nobody can tell it was not sent.
    const lossy = wrap(refundChain, { broadcast: async () => Promise.reject(new Error("socket hang up")) });
    const answer = await new CreditRefunds(first, lossy, { confirmMs: 300, pollMs: 50 }).refund(w);
    expect(answer).toMatchObject({ status: "pending", refund: { amountMicro: 500_000, status: "pending" } });
    const txHash = answer.status === "pending" ? answer.refund.tx!.txHash : "";
    expect(await refundChain.known(txHash)).toBe(false);
    expect(await first.account(w)).toMatchObject({ balanceMicro: 0, refundPendingMicro: 500_000 });
    await first.close();

    const second = ledger(file);
    // A reconciler leaves a refund its sender may still be working on alone (staleMs, 2 minutes by default).
    expect(await new CreditRefunds(second, refundChain, { confirmMs: 0 }).reconcileAll()).toBe(0);
    expect(await refundChain.known(txHash)).toBe(false);
    const after = new CreditRefunds(second, refundChain, { confirmMs: 0, staleMs: 0 });
    expect(await after.reconcileAll()).toBe(0);
    expect(await refundChain.known(txHash)).toBe(true);
    expect(await after.reconcileAll()).toBe(1);
    expect(await usdc(w)).toBe(500_000n);
    expect(await second.latestRefund(w)).toMatchObject({ status: "confirmed", tx: { txHash } });
    expect(await second.account(w)).toMatchObject({ balanceMicro: 0, refundPendingMicro: 0 });
    expect(await after.refund(w)).toEqual({ status: "none" });
    expect(await after.reconcileAll()).toBe(0);
    expect(await usdc(w)).toBe(500_000n);
  });

  it("takes a fresh nonce when the chosen one is taken, and concurrent refunds of one wallet pay once", async () => {
    const { refundChain, privateKey, address } = await freshRelayer(5_000_000n);
    // Nonce 0 of the relayer is used by another transaction.
    const relayer = createWalletClient({ account: privateKeyToAccount(privateKey), transport: http(anvil.rpcUrl) });
    await publicClient().waitForTransactionReceipt({ hash: await relayer.sendTransaction({ to: address, value: 0n, chain: null }) });
    let asked = 0;
    const stale = wrap(refundChain, { pendingNonce: async () => (asked++ === 0 ? 0 : refundChain.pendingNonce()) });
    const l = ledger();
    const w = newWallet();
    await l.credit(w, 700_000, "top-up");
    // Three processes (one ledger) asked at once: one takes the balance and sends; its first nonce is refused.
    const answers = await Promise.all([0, 1, 2].map(() => new CreditRefunds(l, stale, { confirmMs: 10_000, pollMs: 50 }).refund(w)));
    expect(asked).toBe(2);
    expect(answers.filter((a) => a.status === "confirmed")).toHaveLength(1);
    expect(answers.filter((a) => a.status === "pending")).toHaveLength(2);
    expect(await usdc(w)).toBe(700_000n);
    expect(await l.latestRefund(w)).toMatchObject({ status: "confirmed", amountMicro: 700_000, tx: { nonce: 1 } });
    expect(await l.account(w)).toMatchObject({ balanceMicro: 0, refundPendingMicro: 0 });
  });

  it("a transfer that reverts on chain is restored to the balance exactly once", async () => {
    const { refundChain, privateKey, address } = await freshRelayer(1_000_000n);
    const l = ledger();
    const w = newWallet();
    await l.credit(w, 600_000, "top-up");
    const refunds = new CreditRefunds(l, refundChain, { confirmMs: 200, pollMs: 50 });
    const resume = await pauseMining(anvil.rpcUrl);
    try {
      expect(await refunds.refund(w)).toMatchObject({ status: "pending" });
      // Before it is mined, another account submits (with a higher tip) an EIP-3009 transfer of all the
      // relayer's USDC, signed by the relayer: mined first in the block, it leaves the refund nothing to send.
      const [name, version] = await Promise.all(
        ["name", "version"].map((f) => publicClient().readContract({ address: chain.usdcAddress, abi: authAbi, functionName: f as "name" })),
      );
      const message = { from: address, to: chain.relayer.address, value: 1_000_000n, validAfter: 0n, validBefore: 2n ** 40n, nonce: `0x${randomBytes(32).toString("hex")}` as Hex };
      const signature = await privateKeyToAccount(privateKey).signTypedData({
        domain: { name, version, chainId: 8453, verifyingContract: chain.usdcAddress },
        types: {
          TransferWithAuthorization: [
            { name: "from", type: "address" },
            { name: "to", type: "address" },
            { name: "value", type: "uint256" },
            { name: "validAfter", type: "uint256" },
            { name: "validBefore", type: "uint256" },
            { name: "nonce", type: "bytes32" },
          ],
        },
        primaryType: "TransferWithAuthorization",
        message,
      });
      await deployer().writeContract({
        address: chain.usdcAddress,
        abi: authAbi,
        functionName: "transferWithAuthorization",
        args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, signature],
        gas: 200_000n,
        maxFeePerGas: parseGwei("200"),
        maxPriorityFeePerGas: parseGwei("100"),
        chain: null,
      });
    } finally {
      await resume();
    }
    const seen = await Promise.all([refunds.reconcileWallet(w), refunds.reconcileWallet(w), refunds.reconcileAll()]);
    expect(seen[0]).toMatchObject({ status: "restored", reason: "reverted" });
    expect(await l.account(w)).toMatchObject({ balanceMicro: 600_000, refundPendingMicro: 0 });
    expect(await refunds.reconcileWallet(w)).toBeUndefined();
    expect(await l.account(w)).toMatchObject({ balanceMicro: 600_000 });
    expect(await usdc(w)).toBe(0n);
    expect(await publicClient().readContract({ address: chain.usdcAddress, abi: erc20Abi, functionName: "balanceOf", args: [address] })).toBe(0n);
  });

  it("restores a refund whose sender died before signing, once it is stale, and never one in progress", async () => {
    const l = ledger();
    const [dead, alive] = [newWallet(), newWallet()];
    await l.credit(dead, 300_000, "a");
    await l.credit(alive, 200_000, "b");
    const now = Date.now();
    await l.startRefund(dead, "dead", now - 3 * 60_000);
    await l.startRefund(alive, "alive", now - 1_000);
    // The chain is never asked about a refund that has no transaction.
    const silent = wrap({} as RefundChain, {});
    const refunds = new CreditRefunds(l, silent, { confirmMs: 0 });
    expect(await refunds.reconcileAll()).toBe(1);
    expect(await refunds.reconcileAll()).toBe(0);
    expect(await l.account(dead)).toMatchObject({ balanceMicro: 300_000, refundPendingMicro: 0 });
    expect(await l.latestRefund(dead)).toMatchObject({ status: "restored", reason: "not_sent" });
    expect(await l.account(alive)).toMatchObject({ balanceMicro: 0, refundPendingMicro: 200_000 });
  });

  it("a transfer the node refuses (no gas) answers 503 and restores the balance at once; nothing is paid", async () => {
    const { refundChain } = await freshRelayer(1_000_000n, false);
    const l = ledger();
    const w = newWallet();
    await l.credit(w, 400_000, "top-up");
    const refunds = new CreditRefunds(l, refundChain, { confirmMs: 1_000, pollMs: 50 });
    await expect(refunds.refund(w)).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining("your balance is restored") });
    expect(await l.account(w)).toMatchObject({ balanceMicro: 400_000, refundPendingMicro: 0 });
    expect((await l.latestRefund(w))?.status).toBe("restored");
    expect(await usdc(w)).toBe(0n);
  });
});
