/**
 * The production start-up (as src/main.ts: configuration from the environment, the service, the
 * "marketgate listening" line), then the worst that a careless log line or a library error echoing its
 * input could do: the value of every secret setting (`SECRET_SETTINGS`) that is set is logged through the
 * process logger in a message, a plain field, a nested field and an error with a cause, and the whole
 * configuration is dumped. Logs at `debug` after start-up. Ends with "secrets echoed"; SIGTERM closes the
 * service. For test/lib/secret-logs.test.ts, which reads every line of its stderr.
 */
import { loadConfig, SECRET_SETTINGS, type SecretSetting } from "../../src/config.js";
import { logger } from "../../src/lib/log.js";
import { createService } from "../../src/service.js";

const config = loadConfig(process.env);
const service = await createService({ config });
const { url, close } = await service.listen();
logger.info({ url }, "marketgate listening");
logger.level = "debug";

for (const setting of Object.keys(SECRET_SETTINGS) as SecretSetting[]) {
  const value = process.env[setting];
  if (!value) continue;
  const err = new Error(`upstream refused the request made with ${value}`, { cause: new Error(`credential: ${value}`) });
  logger.warn({ setting, value, nested: { list: [value], again: { value } }, err }, `echo ${setting}=${value}`);
}
logger.info({ config }, "configuration");
logger.info("secrets echoed");

process.on("SIGTERM", () => {
  logger.info("shutting down");
  void close().then(() => process.exit(0));
});
