import "./supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { ConfigError, loadConfig } from "./config.js";
import { logger } from "./lib/log.js";
import { createService } from "./service.js";

/**
 * Production entry (`npm start`): reads the environment, refuses to start without `PAY_TO`, serves HTTP
 * (REST + MCP at /mcp) and shuts down gracefully on SIGINT/SIGTERM.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.payments.payTo) {
    process.stderr.write(
      "marketgate: PAY_TO is not set. Set PAY_TO to the address that receives USDC payments (see docs/configuration.md).\n" +
        "To try everything offline with simulated venues and a local chain, run: npm run sandbox\n",
    );
    process.exit(2);
  }
  const service = await createService({ config });
  const { url, close } = await service.listen();
  logger.info({ url, dataMode: config.dataMode, network: config.payments.network, payTo: config.payments.payTo }, "marketgate listening");
  const stop = () => {
    logger.info("shutting down");
    void close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`marketgate: ${err.message}\n`);
    process.exit(2);
  }
  logger.fatal({ err }, "marketgate failed to start");
  process.exit(1);
});
