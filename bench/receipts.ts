/**
 * `npm run bench` (part): what signed receipts cost (docs/receipts.md), in one run:
 * 1. signing per paid answer on one core: `ReceiptIssuer.seal` (the receipt's JWS, the `Content-Digest` and
 *    the RFC 9421 signature) against the unsigned answer's serialization (`JSON.stringify`, what a paid
 *    answer costs without receipts), for a small answer (`/api/v1/market/bitcoin`) and a large one
 *    (`/api/v1/market/bitcoin/history?days=365`), both real answers of the offline stack;
 * 2. cache-hit throughput of the same paid tool on two offline stacks, receipts on and off, in alternating
 *    rounds (hits are free and carry no receipt: the target is a ratio of at least 0.95).
 * Writes bench/results/receipts.json and the `receipts` section of bench/README.md.
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { cpus, loadavg } from "node:os";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { ReceiptIssuer } from "../src/payments/receipts/issuer.js";
import { ReceiptKeys } from "../src/payments/receipts/keys.js";
import { startOfflineStack, type OfflineStack } from "../src/sandbox/offline-stack.js";
import { CONNECTIONS, pairedRatio } from "./load.js";
import { percentile, writeResults, writeSection } from "./report.js";

process.env.LOG_LEVEL ??= "silent";
const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 8);
const SIGNINGS = Number(process.env.BENCH_RECEIPT_SIGNINGS ?? 2000);
/** Paired rounds of the cache-hit comparison (each side 2 s per round, at least). */
const HIT_ROUNDS = Math.max(4, 2 * Math.round(DURATION_SEC / 4));
const ROUND_SEC = 2;

/** Per-operation times of `op` run `n` times one after another (one core), µs ascending, after 200 warm-up runs. */
async function timeEach(n: number, op: () => unknown): Promise<number[]> {
  for (let i = 0; i < 200; i++) await op();
  const us: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await op();
    us.push((performance.now() - t0) * 1000);
  }
  return us.sort((a, b) => a - b);
}

const round = (x: number, d = 1) => +x.toFixed(d);

/** p50 / p99 of `us`, rounded. */
const summary = (us: number[]) => ({ p50_us: round(percentile(us, 50)), p99_us: round(percentile(us, 99)) });

async function paidAnswer(stack: OfflineStack, path: string): Promise<unknown> {
  const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(stack.payers[0]!.privateKey))));
  const res = await pay(`${stack.url}${path}`);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  return res.json();
}

async function main(): Promise<void> {
  const env = { RATE_LIMIT_PER_MIN: "100000000", STREAMS: "off" };
  const on = await startOfflineStack({ env: { ...env, RECEIPTS: "on" } });
  const off = await startOfflineStack({ env: { ...env, RECEIPTS: "off" } });
  const results: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, duration_sec: DURATION_SEC, connections: CONNECTIONS };

  // 1. Signing cost per answer, on real answers.
  const issuer = new ReceiptIssuer(ReceiptKeys.load({ dataDir: ":memory:" }));
  const facts = { payer: on.payers[0]!.address, network: "eip155:8453", transaction: `0x${"ab".repeat(32)}` };
  const signing: Record<string, unknown> = {};
  for (const [name, path] of [
    ["small", "/api/v1/market/bitcoin"],
    ["large", "/api/v1/market/bitcoin/history?days=365"],
  ] as const) {
    const value = await paidAnswer(on, path);
    const bytes = Buffer.byteLength(JSON.stringify(value));
    const request = { method: "GET", targetUri: `${on.url}${path}` };
    const unsigned = await timeEach(SIGNINGS, () => JSON.stringify(value));
    const signed = await timeEach(SIGNINGS, () => issuer.seal(request, facts, JSON.stringify(value)));
    signing[name] = { path, bytes, unsigned: summary(unsigned), signed: summary(signed), added_p50_us: round(percentile(signed, 50) - percentile(unsigned, 50)) };
    process.stdout.write(`receipt signing, ${name} (${bytes} B): ${percentile(signed, 50).toFixed(1)} µs vs unsigned ${percentile(unsigned, 50).toFixed(1)} µs\n`);
  }
  results.signing = signing;

  // 2. Cache-hit throughput, receipts on vs off (each stack pays its miss first).
  const hitPath = "/api/v1/market/bitcoin";
  await paidAnswer(off, hitPath);
  for (const s of [on, off]) {
    const hit = await fetch(`${s.url}${hitPath}`);
    await hit.arrayBuffer();
    if (hit.headers.get("x-cache") !== "HIT" || hit.headers.get("x402-receipt") !== null) throw new Error(`${s.url}${hitPath} is not a receipt-free cache hit`);
  }
  const paired = await pairedRatio(ROUND_SEC, HIT_ROUNDS, { url: `${on.url}${hitPath}` }, { url: `${off.url}${hitPath}` });
  const { a: withReceipts, b: without, ratio } = paired;
  results.cache_hit = { path: hitPath, receipts_on: withReceipts, receipts_off: without, ratio, round_ratios: paired.ratios };
  process.stdout.write(`cache hits: receipts on ${withReceipts.rps} req/s vs off ${without.rps} req/s (median paired ratio ${ratio}; rounds ${paired.ratios.join(" ")})\n`);
  await on.close();
  await off.close();

  writeResults("receipts", results);
  const s = signing as Record<
    "small" | "large",
    { path: string; bytes: number; unsigned: { p50_us: number; p99_us: number }; signed: { p50_us: number; p99_us: number }; added_p50_us: number }
  >;
  const row = (k: "small" | "large") =>
    `| receipt per paid answer, ${k} answer (\`${s[k].path}\`, ${s[k].bytes} B): JWS + Content-Digest + RFC 9421 signature | p50 ${s[k].signed.p50_us} µs, p99 ${s[k].signed.p99_us} µs | unsigned (JSON.stringify only): p50 ${s[k].unsigned.p50_us} µs, p99 ${s[k].unsigned.p99_us} µs | +${s[k].added_p50_us} µs |`;
  writeSection(
    "receipts",
    [
      `Run ${results.date as string} on ${results.cpus as number} cores, Node ${process.version}; signing: ${SIGNINGS} sequential runs each; throughput: autocannon ${CONNECTIONS} connections, ${HIT_ROUNDS} paired rounds of ${ROUND_SEC} s (ABBA order), median of the rounds' ratios (rounds: ${paired.ratios.join(", ")}), load average ${loadavg()[0]!.toFixed(1)} at the end.`,
      "",
      "| measure | receipts on | receipts off (same run) | ratio / added |",
      "|---|---|---|---|",
      row("small"),
      row("large"),
      `| cache-hit throughput, \`GET ${hitPath}\` (free, no receipt) | ${withReceipts.rps} req/s, p99 ${withReceipts.p99} ms | ${without.rps} req/s, p99 ${without.p99} ms | ${ratio} (target ≥ 0.95) |`,
    ].join("\n"),
  );
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
