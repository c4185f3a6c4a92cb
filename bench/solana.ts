/**
 * `npm run bench` (part): what paying from Solana costs. Latency of one call paid each way, in one run, on
 * the offline stack (venue simulator, anvil, the local Solana VM, in-process facilitators):
 * - unpaid: the same requests on a service with payments off (the baseline, measured in this run);
 * - x402 on Base: the official `@x402/fetch` client with the EVM `exact` scheme (402, sign, verify, settle on anvil);
 * - x402 on Solana: the same client with the official `@x402/svm` `exact` scheme (402, two RPC reads of the
 *   local VM, sign, verify by simulation, settle on the VM).
 * Writes bench/results/solana.json and the `solana` section of bench/README.md.
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { SOLANA_MAINNET_CAIP2 } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { loadConfig } from "../src/config.js";
import { startOfflineStack } from "../src/sandbox/offline-stack.js";
import { simEnv } from "../src/sandbox/sim-env.js";
import { createService } from "../src/service.js";
import { startSimulator } from "../src/sim/server.js";
import { pricePaths, timeEach } from "./paid-calls.js";
import { percentile, writeResults, writeSection } from "./report.js";

process.env.LOG_LEVEL ??= "silent";
const N = Number(process.env.BENCH_PAID_REQUESTS ?? 120);

async function main(): Promise<void> {
  // The simulated CoinGecko's budget is raised so that misses measure our path, not the venue's limit.
  const env = { RATE_LIMIT_PER_MIN: "100000000", STREAMS: "off", COINGECKO_CALLS_PER_MIN: "1000000" };
  const stack = await startOfflineStack({ solana: true, env });
  const sol = stack.solana!;
  const baseFetch = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(stack.payers[3]!.privateKey))));
  const solFetch = wrapFetchWithPayment(fetch, new x402Client().register(SOLANA_MAINNET_CAIP2, new ExactSvmScheme(sol.payers[0]!.signer, { rpcUrl: sol.rpc.url })));
  const sim = await startSimulator();
  const free = await createService({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), ...env }) });
  const freeListening = await free.listen();

  // One warm-up call each (first-use compilation of the schemes and the VM), not counted.
  await timeEach(pricePaths(1, 10 * N), (p) => solFetch(`${stack.url}${p}`));
  await timeEach(pricePaths(1, 10 * N + 1), (p) => baseFetch(`${stack.url}${p}`));
  const spentBefore = await sol.balanceOf(sol.payers[0]!.address);
  const unpaid = await timeEach(pricePaths(N, 0), (p) => fetch(`${freeListening.url}${p}`));
  const base = await timeEach(pricePaths(N, N), (p) => baseFetch(`${stack.url}${p}`));
  const solana = await timeEach(pricePaths(N, 2 * N), (p) => solFetch(`${stack.url}${p}`));
  const spentUsdc = Number(spentBefore - (await sol.balanceOf(sol.payers[0]!.address))) / 1e6;

  await freeListening.close();
  await sim.close();
  await stack.close();

  const r2 = (x: number) => +x.toFixed(2);
  const row = (ms: number[]) => ({ p50: r2(percentile(ms, 50)), p99: r2(percentile(ms, 99)) });
  const over = (ms: number[]) => r2(percentile(ms, 50) - percentile(unpaid, 50));
  const ratio = (ms: number[]) => r2(percentile(ms, 50) / percentile(unpaid, 50));
  const results = {
    date: new Date().toISOString(),
    requests: N,
    unpaid: row(unpaid),
    x402_base_anvil: row(base),
    x402_solana_local_vm: row(solana),
    p50_over_unpaid_ms: { x402_base_anvil: over(base), x402_solana_local_vm: over(solana) },
    p50_ratio_to_unpaid: { x402_base_anvil: ratio(base), x402_solana_local_vm: ratio(solana) },
    solana_usdc_spent: spentUsdc,
  };
  writeResults("solana", results);
  const table = [
    `Run ${results.date}: ${N} sequential distinct \`/api/v1/prices\` requests per row (cache misses against the venue simulator), client, service, facilitators, anvil and the Solana VM in one process on loopback. The Solana payer spent ${spentUsdc} USDC on the VM.`,
    "",
    "| paid how | p50 | p99 | p50 over the unpaid call | p50 ÷ unpaid p50 |",
    "|---|---|---|---|---|",
    `| unpaid (payments off; baseline) | ${results.unpaid.p50} ms | ${results.unpaid.p99} ms | — | 1 |`,
    `| x402 on Base (\`@x402/evm\` exact, settled on anvil) | ${results.x402_base_anvil.p50} ms | ${results.x402_base_anvil.p99} ms | +${results.p50_over_unpaid_ms.x402_base_anvil} ms | ${results.p50_ratio_to_unpaid.x402_base_anvil} |`,
    `| x402 on Solana (\`@x402/svm\` exact, settled on the local VM) | ${results.x402_solana_local_vm.p50} ms | ${results.x402_solana_local_vm.p99} ms | +${results.p50_over_unpaid_ms.x402_solana_local_vm} ms | ${results.p50_ratio_to_unpaid.x402_solana_local_vm} |`,
  ].join("\n");
  writeSection("solana", table);
  process.stdout.write(`${table}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
