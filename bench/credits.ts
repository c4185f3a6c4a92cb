/**
 * `npm run bench` (part): what prepaid credits buy. Latency of one paid call paid four ways, in one run,
 * on the offline stack (anvil, in-process facilitator, venue simulator):
 * - unpaid: the same requests on a service with payments off (the baseline);
 * - x402 per call: the official `@x402/fetch` client (402, sign, verify, handler, settle on chain);
 * - credits, official client: `wrapFetchWithSIWx` (two round trips: the 402 challenge, then the signed retry);
 * - credits, one round trip: the client signs its own proof (own nonce) before calling.
 * Then the server's own cost per credit-paid call on one core: SIWX verification (ECDSA recovery) and the
 * SQLite ledger's reserve + commit. Writes bench/results/credits.json and the `credits` section of
 * bench/README.md.
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { loadConfig } from "../src/config.js";
import { startOfflineStack } from "../src/sandbox/offline-stack.js";
import { simEnv } from "../src/sandbox/sim-env.js";
import { createService } from "../src/service.js";
import { startSimulator } from "../src/sim/server.js";
import { SqliteCreditLedger } from "../src/payments/credits/sqlite-ledger.js";
import { SiwxVerifier } from "../src/payments/credits/siwx.js";
import { siwxHeader } from "../src/payments/credits/client.js";
import { pricePaths, timeEach } from "./paid-calls.js";
import { percentile, writeResults, writeSection } from "./report.js";

process.env.LOG_LEVEL ??= "silent";
const N = Number(process.env.BENCH_PAID_REQUESTS ?? 120);
const THROUGHPUT_CALLS = Number(process.env.BENCH_CREDIT_CALLS ?? 1500);

/** Operations per second of `op` run `n` times one after another (one core). */
async function rate(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await op(i);
  return Math.round(n / ((performance.now() - t0) / 1000));
}

async function main(): Promise<void> {
  // The simulated CoinGecko's budget is raised so that misses measure our path, not the venue's limit.
  const env = { RATE_LIMIT_PER_MIN: "100000000", STREAMS: "off", COINGECKO_CALLS_PER_MIN: "1000000" };
  const stack = await startOfflineStack({ env: { ...env, CREDITS_MAX_TOP_UP_USD: "100" } });
  const payer = stack.payers[2]!;
  const account = privateKeyToAccount(payer.privateKey);
  const payFetch = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(account)));
  // The official client refuses single payments above $1 unless told otherwise: a top-up client raises it.
  const topUpFetch = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(account)).setSpendControls(false));
  const top = await topUpFetch(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "50" }) });
  if (top.status !== 200) throw new Error(`top-up answered ${top.status}`);

  const sim = await startSimulator();
  const free = await createService({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), ...env }) });
  const freeListening = await free.listen();

  const siwxFetch = wrapFetchWithSIWx(fetch, account);
  const unpaid = await timeEach(pricePaths(N, 0), (p) => fetch(`${freeListening.url}${p}`));
  const x402 = await timeEach(pricePaths(N, N), (p) => payFetch(`${stack.url}${p}`));
  const official = await timeEach(pricePaths(N, 2 * N), (p) => siwxFetch(`${stack.url}${p}`));
  const oneTrip = await timeEach(pricePaths(N, 3 * N), async (p) =>
    fetch(`${stack.url}${p}`, { headers: { "SIGN-IN-WITH-X": await siwxHeader(payer.privateKey, `${stack.url}${p}`) } }),
  );
  // A session token from one verified proof pays the following calls without a signature.
  const first = await fetch(`${stack.url}/api/v1/prices?symbols=btc,session`, {
    headers: { "SIGN-IN-WITH-X": await siwxHeader(payer.privateKey, `${stack.url}/api/v1/prices?symbols=btc,session`) },
  });
  const token = first.headers.get("x-credits-session");
  if (!token) throw new Error("no session token minted");
  const sessionMs = await timeEach(pricePaths(N, 5 * N), (p) => fetch(`${stack.url}${p}`, { headers: { "X-Credits-Session": token } }));

  // Server-side cost per credit-paid call, on one core: SIWX verification (ecrecover) and the ledger's
  // reserve + commit (SQLite, as embedded deployments run it).
  const origin = "https://bench.example";
  const proofs = await Promise.all(Array.from({ length: THROUGHPUT_CALLS }, (_, i) => siwxHeader(payer.privateKey, `${origin}/api/v1/prices?symbols=btc,zz${i}`)));
  const ledger = new SqliteCreditLedger(":memory:");
  const verifier = new SiwxVerifier(ledger, { networks: ["eip155:8453"] });
  const verifyRate = await rate(proofs.length, async (i) => {
    const r = await verifier.verify(proofs[i], origin);
    if ("refusal" in r) throw new Error(r.refusal);
  });
  const wallet = account.address.toLowerCase();
  await ledger.credit(wallet, 1_000_000_000, "bench");
  const debitRate = await rate(THROUGHPUT_CALLS, async () => {
    const h = await ledger.reserve(wallet, 5_000, { globalCaps: {} });
    if (!h.ok) throw new Error(h.reason);
    await ledger.commit(h.holdId, { tool: "bench" });
  });
  await ledger.close();

  await freeListening.close();
  await sim.close();
  await stack.close();

  const r2 = (x: number) => +x.toFixed(2);
  const row = (ms: number[]) => ({ p50: r2(percentile(ms, 50)), p99: r2(percentile(ms, 99)) });
  const results = {
    date: new Date().toISOString(),
    requests: N,
    unpaid: row(unpaid),
    x402_per_call: row(x402),
    credits_wrapFetchWithSIWx: row(official),
    credits_one_round_trip: row(oneTrip),
    credits_session_token: row(sessionMs),
    p50_over_unpaid_ms: {
      x402_per_call: r2(percentile(x402, 50) - percentile(unpaid, 50)),
      credits_wrapFetchWithSIWx: r2(percentile(official, 50) - percentile(unpaid, 50)),
      credits_one_round_trip: r2(percentile(oneTrip, 50) - percentile(unpaid, 50)),
      credits_session_token: r2(percentile(sessionMs, 50) - percentile(unpaid, 50)),
    },
    server_cost_per_core: { calls: THROUGHPUT_CALLS, siwx_verify_per_sec: verifyRate, sqlite_reserve_commit_per_sec: debitRate },
  };
  writeResults("credits", results);
  const d = results.p50_over_unpaid_ms;
  const signed = (x: number) => (x >= 0 ? `+${x}` : `${x}`);
  const table = [
    `Run ${results.date}: ${N} sequential distinct \`/api/v1/prices\` requests per row (cache misses against the venue simulator), client and servers in one process on loopback.`,
    "",
    "| paid how | p50 | p99 | p50 over the unpaid call |",
    "|---|---|---|---|",
    `| unpaid (payments off; baseline) | ${results.unpaid.p50} ms | ${results.unpaid.p99} ms | — |`,
    `| x402 per call on anvil (\`@x402/fetch\`: 402, sign, verify, settle) | ${results.x402_per_call.p50} ms | ${results.x402_per_call.p99} ms | ${signed(d.x402_per_call)} ms |`,
    `| credits, official \`wrapFetchWithSIWx\` (402 challenge + signed retry) | ${results.credits_wrapFetchWithSIWx.p50} ms | ${results.credits_wrapFetchWithSIWx.p99} ms | ${signed(d.credits_wrapFetchWithSIWx)} ms |`,
    `| credits, one round trip (client-built SIWX proof, signing included) | ${results.credits_one_round_trip.p50} ms | ${results.credits_one_round_trip.p99} ms | ${signed(d.credits_one_round_trip)} ms |`,
    `| credits, session token (\`X-Credits-Session\` from the first verified proof; no signature) | ${results.credits_session_token.p50} ms | ${results.credits_session_token.p99} ms | ${signed(d.credits_session_token)} ms |`,
    "",
    `Server cost of a credit-paid call on one core (${THROUGHPUT_CALLS} calls): SIWX verification ${verifyRate} proofs/s (the ECDSA recovery bounds a core at this rate, hence session tokens); ledger reserve + commit (SQLite) ${debitRate} debits/s.`,
  ].join("\n");
  writeSection("credits", table);
  process.stdout.write(`${table}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
