#!/usr/bin/env node
/**
 * `marketgate [serve|mcp]`: `serve` (default) runs the HTTP service (needs PAY_TO), `mcp` runs the MCP
 * server on stdio (payments off by default).
 */
const command = process.argv[2] ?? "serve";

if (command === "mcp") {
  const { runStdio } = await import("../mcp/stdio.js");
  await runStdio().catch((err: unknown) => {
    process.stderr.write(`marketgate mcp: ${(err as Error).message}\n`);
    process.exit(1);
  });
} else if (command === "serve") {
  await import("../src/main.js");
} else {
  process.stderr.write("usage: marketgate [serve|mcp]\n  serve  HTTP API + MCP at /mcp (needs PAY_TO)\n  mcp    MCP server on stdio\n");
  process.exit(2);
}
