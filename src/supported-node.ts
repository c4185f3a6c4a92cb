/**
 * Refuses to run on a Node.js marketgate does not support, with one line on stderr and exit code 1, before any
 * native addon loads: on Node 20, better-sqlite3 13 segfaults at its first statement (exit 139, no message).
 *
 * Every entry point imports this module FIRST (`import "./supported-node.js";`, or first before its dynamic
 * imports). ES modules run their imports in order, depth first, so a first import with no imports of its own
 * runs before any other module of the program is evaluated; test/supported-node.test.ts checks that each
 * entry point does so, and runs them on Node 20. Node built-ins only: they are no addons.
 */
import { writeSync } from "node:fs";

/** The supported versions, as package.json `engines.node` states them (a test keeps the two equal). */
export const SUPPORTED_NODE = "^22.13.0 || >=24";

/**
 * The one line an unsupported Node gets, or undefined when `version` (`process.versions.node`, e.g. "20.20.2")
 * satisfies {@link SUPPORTED_NODE}.
 */
export function unsupportedNodeMessage(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major >= 24 || (major === 22 && minor >= 13)) return undefined;
  return (
    `marketgate needs Node.js 22.13+ or 24+ (package.json engines "${SUPPORTED_NODE}"), and this is Node.js ${version}: ` +
    "install Node.js 24 from https://nodejs.org/en/download or with a version manager (nvm install 24)."
  );
}

const message = unsupportedNodeMessage(process.versions.node);
if (message !== undefined) {
  // Written synchronously: process.stderr may be an asynchronous pipe (macOS), cut short by the exit.
  writeSync(2, `${message}\n`);
  process.exit(1);
}
