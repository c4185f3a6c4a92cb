#!/usr/bin/env node
/**
 * `marketgate [serve|mcp|doctor|call|quote|connect|verify-receipt]`: `serve` (default) runs the HTTP service (needs PAY_TO), `mcp` runs the MCP
 * server on stdio (payments off by default), `doctor` checks every venue endpoint once with the environment's
 * configuration and exits non-zero on any failure (src/doctor). `call` and `quote` are clients of a running
 * service (MARKETGATE_URL): `call` pays with X402_PRIVATE_KEY and prints the answer and its cost, `quote`
 * prints what a request would cost (src/cli). `connect <url>` is a stdio MCP server for any MCP host that pays a
 * remote paid MCP server's tools from the user's wallet within a budget (src/bridge, docs/mcp.md).
 */
import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
const command = process.argv[2] ?? "serve";

if (command === "mcp") {
  // `mcp --sim`: against the built-in venue simulator (no venue variables needed; answers labelled simulated).
  // The process exits 0 when its client closes stdin or sends SIGTERM/SIGINT (mcp/stdio.ts).
  const { parseArgs } = await import("node:util");
  const { runStdio } = await import("../mcp/stdio.js");
  const start = async () => {
    const { values } = parseArgs({ args: process.argv.slice(3), options: { sim: { type: "boolean", default: false } } });
    await runStdio(process.env, { sim: values.sim });
  };
  await start().catch(async (err: unknown) => {
    // A configured URL may carry a key (src/lib/redact.ts): never printed whole.
    const { scrubUrls } = await import("../src/lib/redact.js");
    process.stderr.write(`marketgate mcp: ${scrubUrls((err as Error).message)}\n`);
    process.exit(1);
  });
} else if (command === "serve") {
  await import("../src/main.js");
} else if (command === "doctor") {
  const { doctorMain } = await import("../src/doctor/cli.js");
  const { scrubUrls } = await import("../src/lib/redact.js");
  process.exitCode = await doctorMain(process.argv.slice(3)).catch((err: unknown) => {
    process.stderr.write(`marketgate doctor: ${scrubUrls((err as Error).stack ?? String(err))}\n`);
    return 1;
  });
} else if (command === "call" || command === "quote") {
  // Client commands: pay for a call (x402 or credits) or quote one, against MARKETGATE_URL (src/cli).
  const { clientMain } = await import("../src/cli/client.js");
  process.exitCode = await clientMain(command, process.argv.slice(3));
} else if (command === "connect") {
  // A stdio MCP server for any host that pays a remote paid MCP server's tools within a budget (src/bridge).
  const { connectMain } = await import("../src/bridge/main.js");
  // Exits once the host closes stdin: open HTTP keep-alive sockets to the remote must not hold the process.
  process.exit(await connectMain(process.argv.slice(3)));
} else if (command === "verify-receipt") {
  // Checks a saved paid answer's receipt and content signature (src/cli/verify-receipt.ts, docs/receipts.md).
  const { verifyReceiptMain } = await import("../src/cli/verify-receipt.js");
  process.exitCode = await verifyReceiptMain(process.argv.slice(3));
} else {
  process.stderr.write(
    "usage: marketgate [serve|mcp|doctor|call|quote|connect|verify-receipt]\n  serve   HTTP API + MCP at /mcp (needs PAY_TO)\n  mcp     MCP server on stdio\n  doctor  check every venue endpoint once (--json, --no-save)\n" +
      "  call    call an endpoint of MARKETGATE_URL, paying with X402_PRIVATE_KEY: call <path> [--data JSON] [--method M] [--credits]\n" +
      "  quote   what a request would cost: quote <path> [--data JSON] [--method M]\n" +
      "  connect a stdio MCP server that pays a remote paid MCP server's tools within a budget: connect <url> [--max-usd-per-call N] [--max-usd-per-day N] (docs/mcp.md)\n" +
      "  verify-receipt  check a saved paid answer's receipt and content signature: verify-receipt <file> [--key KEY]\n",
  );
  process.exit(2);
}
