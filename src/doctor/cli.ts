/**
 * `marketgate doctor [--json] [--no-save]` (also `npm run doctor`): checks every venue endpoint the service uses with
 * the configuration of the environment (the same variables as `marketgate serve`), prints one line per endpoint and
 * exits 1 when any check is not ok (2 on an invalid configuration). The summary is saved to `DATA_DIR/doctor.json`
 * (not with `DATA_DIR=:memory:` or `--no-save`), where `/api/v1/status` shows it.
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config.js";
import { logger } from "../lib/log.js";
import { formatReport, runDoctor } from "./run.js";
import { saveSummary, summarize } from "./summary.js";

/** Runs the doctor for `argv` (after the command) and `env`; resolves with the process exit code. */
export async function doctorMain(
  argv: readonly string[],
  env: Record<string, string | undefined> = process.env,
  out: (s: string) => void = (s) => process.stdout.write(s),
): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { json: { type: "boolean", default: false }, "no-save": { type: "boolean", default: false } } });
  let config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      out(`marketgate doctor: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  // Venue clients log retries and backfill warnings: keep them out of the report unless asked.
  logger.level = env.LOG_LEVEL ?? "error";
  if (!values.json) out(`marketgate doctor: checking every venue endpoint once (${config.dataMode} data mode)\n\n`);
  const report = await runDoctor(config);
  const summary = summarize(report);
  const saved = values["no-save"] ? undefined : saveSummary(config.dataDir, summary);
  if (values.json) out(`${JSON.stringify({ ...summary, results: report.results }, null, 2)}\n`);
  else out(`${formatReport(report)}${saved ? `; summary saved to ${saved}` : ""}\n`);
  return report.ok ? 0 : 1;
}
