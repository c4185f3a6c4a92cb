import { ConfigError, loadConfig } from "../../src/config.js";

/** The problems `loadConfig` refuses `env` with (empty when it is accepted). @throws anything but a ConfigError. */
export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}
