/**
 * A marketgate service without payments in its own OS process, for multi-process tests (kill and
 * restart, replicas): configuration from the environment, then the same "marketgate listening" log line
 * as the production entry. Started by `startServiceProcess(env, { entry: FREE_SERVICE_ENTRY })`.
 */
import { loadConfig } from "../../src/config.js";
import { logger } from "../../src/lib/log.js";
import { createService } from "../../src/service.js";

const service = await createService({ config: loadConfig(process.env), paymentsOff: true });
const { url } = await service.listen();
logger.info({ url }, "marketgate listening");
