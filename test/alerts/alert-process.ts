/**
 * A marketgate service in its own OS process, for the kill-and-restart test (`durability.test.ts`):
 * configuration from the environment, payments off, listening; prints `LISTENING <url>` on stdout once
 * bound. Run with `node --import tsx test/alerts/alert-process.ts`.
 */
import { loadConfig } from "../../src/config.js";
import { createService } from "../../src/service.js";

const config = loadConfig(process.env);
const service = await createService({ config, paymentsOff: true });
const { url } = await service.listen();
process.stdout.write(`LISTENING ${url}\n`);
