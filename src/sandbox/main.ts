import "../supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { TOOLS } from "../../tools/index.js";
import { logger } from "../lib/log.js";
import { runAlertDemo } from "./alert-demo.js";
import { runCreditsDemo } from "./credits-demo.js";
import { runDemo } from "./demo.js";
import { runSolanaDemo } from "./solana-demo.js";
import { startHttpsReceiver } from "./https-receiver.js";
import { startOfflineStack } from "./offline-stack.js";
import { DEMO_STREAM_MINUTE_MS, runStreamDemo, simulatedLiquidations } from "./stream-demo.js";

/**
 * `npm run sandbox [-- --port N --chain-port M --solana-port P --no-demo --replay]`: the whole service offline
 * (simulated venues, local chain, a local Solana VM with its loopback RPC, in-process facilitators, a local
 * HTTPS webhook receiver). Paid routes offer Base and Solana. With the demo (default) a client
 * pays for every market-data tool and prints the answers; creates a liquidation alert, shows its signed
 * webhook, extends it, creates and extends a price alert, cancels both; tops up credits and makes 20
 * credit-paid calls; tops up again and subscribes to the paid liquidation stream for a few seconds (a
 * billed minute lasts {@link DEMO_STREAM_MINUTE_MS} ms in the demo); and exits. With `--no-demo` it serves
 * until killed (real minutes). `--replay` makes the simulator serve the real recordings of
 * `src/sim/recordings` where one exists (docs/sandbox-replay.md): those answers carry
 * `X-Data-Source: replay`, the others `simulated`.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "4021" },
      "chain-port": { type: "string", default: "8545" },
      "solana-port": { type: "string", default: "8899" },
      "sim-port": { type: "string", default: "0" },
      seed: { type: "string", default: "42" },
      "no-demo": { type: "boolean", default: false },
      replay: { type: "boolean", default: false },
    },
  });
  // The logger exists before main() runs: set its level here (quiet unless LOG_LEVEL says otherwise).
  logger.level = process.env.LOG_LEVEL ?? "warn";
  // A local HTTPS webhook receiver with a self-signed certificate, trusted by this sandbox only.
  const receiver = await startHttpsReceiver();
  const caDir = mkdtempSync(join(tmpdir(), "marketgate-sandbox-"));
  const caFile = join(caDir, "receiver-ca.pem");
  writeFileSync(caFile, receiver.ca);
  const stack = await startOfflineStack({
    port: Number(values.port),
    chainPort: Number(values["chain-port"]),
    solana: true,
    solanaPort: Number(values["solana-port"]),
    simPort: Number(values["sim-port"]),
    seed: Number(values.seed),
    replay: values.replay,
    // The demo's stream bills short minutes, so that a few are paid in a few seconds; `--no-demo` bills real minutes.
    env: { WEBHOOK_ALLOW_LOOPBACK: "true", WEBHOOK_EXTRA_CA_FILE: caFile, ...(values["no-demo"] ? {} : { LIVE_STREAM_MINUTE_MS: String(DEMO_STREAM_MINUTE_MS) }) },
  });
  const out = (l = "") => process.stdout.write(`${l}\n`);
  if (values.replay) {
    out("marketgate sandbox: simulated venues replaying real recordings, local chain (anvil, chain id 8453), local Solana VM, in-process facilitators");
    out(`  service       ${stack.url}   (X-Data-Source: replay where a recording answered, simulated elsewhere; see docs/sandbox-replay.md)`);
  } else {
    out("marketgate sandbox: simulated venues, local chain (anvil, chain id 8453), local Solana VM, in-process facilitators");
    out(`  service       ${stack.url}   (every answer is simulated: X-Data-Source: simulated)`);
  }
  out(`  MCP (HTTP)    ${stack.url}/mcp`);
  out(`  chain RPC     ${stack.rpcUrl}`);
  out(`  test USDC     ${stack.usdcAddress}`);
  out(`  simulator     ${stack.sim.baseUrl}`);
  out(`  webhooks      ${receiver.url("/")}   (local HTTPS receiver for alert webhooks; loopback allowed in the sandbox only)`);
  out(`  operator #0   ${stack.operator.address}  (relayer and PAY_TO)`);
  out("  funded payers (1,000 test USDC each):");
  for (const p of stack.payers) out(`    #${p.index} ${p.address}  key ${p.privateKey}`);
  const sol = stack.solana!;
  out(`  solana rpc: ${sol.rpc.url}   (local Solana VM: getAccountInfo and getLatestBlockhash, what x402 clients read)`);
  out(`  solana USDC   ${sol.mint}  (the real mint address, planted on the local VM)`);
  out(`  PAY_TO_SOLANA ${sol.payTo.address}   fee payer ${sol.feePayer.address}`);
  out("  funded Solana payers (1,000 test USDC each; SOLANA_PRIVATE_KEY=<key> for marketgate call --network solana):");
  for (const p of sol.payers) out(`    #${p.index} ${p.address}  key ${p.secretKey}`);
  out("");
  out(`  try: curl -i '${stack.url}/api/v1/prices?symbols=btc,eth'   (402 with PAYMENT-REQUIRED)`);
  out(`       curl '${stack.url}/openapi.json'`);
  if (values.replay) out(`       curl '${stack.url}/api/v1/status'   (replay: true, and the endpoints answered from recordings so far)`);
  out("");

  const stop = async () => {
    await stack.close();
    await receiver.close();
    rmSync(caDir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
  if (values["no-demo"]) {
    out("serving until killed (Ctrl-C)");
    return;
  }
  const started = Date.now();
  // The stream walk-through mostly waits for a simulated liquidation (a few a minute at rest): it runs beside
  // the others (its own payer) and its lines are printed after theirs, so the demo lasts the longer of the two.
  const streamLines: string[] = [];
  let toppedUp = () => {};
  const afterTopUp = new Promise<void>((resolve) => (toppedUp = resolve));
  const stream = runStreamDemo({
    baseUrl: stack.url,
    payer: stack.payers[2]!,
    minuteMs: DEMO_STREAM_MINUTE_MS,
    simulated: simulatedLiquidations(stack.sim),
    balanceOf: stack.balanceOf,
    print: (l) => {
      streamLines.push(l);
      toppedUp();
    },
  });
  stream.catch(() => undefined); // awaited below; this only keeps an early failure from being "unhandled" meanwhile
  // Its first line comes once its x402 top-up has settled: from then on it moves nothing on chain, so the
  // balances the market-data demo prints are its own.
  await Promise.race([afterTopUp, stream]);
  out("demo client (official @x402/fetch, payer #1):\n");
  await runDemo({ baseUrl: stack.url, tools: TOOLS, payer: stack.payers[0]!, payTo: stack.operator.address, balanceOf: stack.balanceOf });
  out("\nSolana (Solana payer #1, official @x402/fetch with the @x402/svm exact scheme):\n");
  await runSolanaDemo({ baseUrl: stack.url, solana: stack.solana!, path: "/api/v1/market/solana" });
  out("\nalert walk-through (payer #1, webhook to the local receiver):\n");
  await runAlertDemo({ baseUrl: stack.url, payer: stack.payers[0]!, receiver, round: () => stack.service.alerts!.round(), balanceOf: stack.balanceOf });
  out("\nprepaid credits (payer #2: one x402 top-up, then 20 calls signed with Sign-In-With-X):\n");
  await runCreditsDemo({ baseUrl: stack.url, payer: stack.payers[1]!, balanceOf: stack.balanceOf });
  out(
    `\nlive stream (payer #3, alongside the above: one x402 top-up, then Sign-In-With-X and GET /stream/liquidations; a billed minute lasts ${DEMO_STREAM_MINUTE_MS / 1000} s in this demo):\n`,
  );
  await stream;
  for (const line of streamLines) out(line);
  out(`\ndemo done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await stop();
}

main().catch((err: unknown) => {
  process.stderr.write(`sandbox failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
