import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { spawnTied } from "../../lib/tied-child.js";

/** Options for {@link startAnvil}. */
export interface StartAnvilOptions {
  /** TCP port on 127.0.0.1; 0 or undefined picks a free port. */
  port?: number;
  /** EIP-155 chain id reported by the node; default 8453 (Base mainnet). */
  chainId?: number;
  /** How long to wait for the node to answer `eth_chainId`, in ms; default 15000. */
  startTimeoutMs?: number;
}

/** A running anvil node. */
export interface AnvilHandle {
  /** JSON-RPC endpoint, e.g. `http://127.0.0.1:8545`. */
  rpcUrl: string;
  /** TCP port the node listens on. */
  port: number;
  /** Kills the node (SIGTERM, then SIGKILL after 1 s) and resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

const localRequire = createRequire(import.meta.url);

/**
 * The npm binary packages of anvil, by Node's `<platform>-<arch>`: the five that `@foundry-rs/anvil` lists as
 * optional dependencies. package.json declares them all directly as optional dependencies (each has `os`/`cpu`,
 * so npm installs only this machine's), rather than the wrapper, whose postinstall downloads a binary when its
 * platform package is missing.
 */
export const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  "linux-x64": "@foundry-rs/anvil-linux-amd64",
  "linux-arm64": "@foundry-rs/anvil-linux-arm64",
  "darwin-x64": "@foundry-rs/anvil-darwin-amd64",
  "darwin-arm64": "@foundry-rs/anvil-darwin-arm64",
  "win32-x64": "@foundry-rs/anvil-win32-amd64",
};

/**
 * Where the anvil binary may be, in the order `@foundry-rs/anvil`'s own launcher (`bin.mjs`) and installer
 * (`postinstall.mjs`) look: the platform package's `bin/anvil` (installed directly from package.json, or
 * resolved from `@foundry-rs/anvil` when that wrapper is installed instead), the binary the wrapper's postinstall
 * downloads into its own folder when npm skipped the platform package, and its launcher's `dist` fallback.
 * `ANVIL_BINARY` (an explicit path, e.g. a `foundryup` install) comes first when set.
 */
function anvilCandidates(env: Record<string, string | undefined>, platform: string, arch: string): { tried: string[]; found?: string } {
  const tried: string[] = [];
  const exe = platform === "win32" ? "anvil.exe" : "anvil";
  const check = (path: string | undefined): string | undefined => {
    if (!path) return undefined;
    tried.push(path);
    return existsSync(path) ? path : undefined;
  };
  if (env.ANVIL_BINARY) return { tried, found: check(env.ANVIL_BINARY) };
  let wrapperDir: string | undefined;
  try {
    wrapperDir = dirname(localRequire.resolve("@foundry-rs/anvil/package.json"));
  } catch {
    tried.push("@foundry-rs/anvil (not installed)");
  }
  const pkg = PLATFORM_PACKAGES[`${platform}-${arch}`];
  if (pkg) {
    // The platform package is hoisted beside the wrapper, or nested under it: resolve it from there.
    const from = wrapperDir ? createRequire(join(wrapperDir, "package.json")) : localRequire;
    let resolved: string | undefined;
    try {
      resolved = from.resolve(`${pkg}/bin/${exe}`);
    } catch {
      tried.push(`${pkg}/bin/${exe} (package not installed)`);
    }
    const hit = check(resolved);
    if (hit) return { tried, found: hit };
  } else {
    tried.push(`no @foundry-rs/anvil binary package for ${platform}-${arch}`);
  }
  if (wrapperDir) {
    const hit = check(join(wrapperDir, exe)) ?? check(join(wrapperDir, "..", "dist", exe));
    if (hit) return { tried, found: hit };
  }
  return { tried };
}

/**
 * Absolute path of the anvil binary, found the way `@foundry-rs/anvil` finds it on every platform it ships
 * (Linux and macOS on x64 and arm64, Windows x64): see {@link anvilCandidates}. `ANVIL_BINARY` overrides.
 * @throws Error naming every place looked at, and how to get a binary, when none is there.
 */
export function anvilBinaryPath(env: Record<string, string | undefined> = process.env, platform: string = process.platform, arch: string = process.arch): string {
  const { tried, found } = anvilCandidates(env, platform, arch);
  if (found) return found;
  throw new Error(
    `anvil: no binary found for ${platform}-${arch} (looked at: ${tried.join("; ")}). ` +
      (env.ANVIL_BINARY
        ? "ANVIL_BINARY does not name an existing file."
        : "Run `npm install` with optional dependencies (not --omit=optional) so that @foundry-rs/anvil installs its platform package, or install Foundry (https://getfoundry.sh) and set ANVIL_BINARY to the anvil path."),
  );
}

/** Asks the OS for a free TCP port on 127.0.0.1 (closed again before returning). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("anvil: could not pick a free port"))));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One `eth_chainId` call; resolves to the chain id, or undefined if the node does not answer yet. */
async function queryChainId(rpcUrl: string): Promise<number | undefined> {
  try {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { result?: string };
    return typeof body.result === "string" ? Number.parseInt(body.result, 16) : undefined;
  } catch {
    return undefined;
  }
}

/** Spawns anvil once on `port`; rejects (leaving no process behind) if it dies or does not answer in time. */
async function spawnOnce(port: number, chainId: number, startTimeoutMs: number): Promise<AnvilHandle> {
  // The chain starts at this process's clock (anvil keeps the offset for later blocks), so EIP-3009 validity windows
  // signed with `Date.now()` hold on chain even when the clock is moved (test/clock/shift.js).
  const genesis = String(Math.floor(Date.now() / 1000));
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId), "--timestamp", genesis, "--silent"];
  // Tied to this process: anvil dies with it however it ends, a crash or SIGKILL included, so that no node is
  // left holding the port (src/lib/tied-child.ts).
  const tied = spawnTied(anvilBinaryPath(), args);
  const child = tied.child;

  // Keep only the tail of anvil's output, for error messages.
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-4000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);

  let exited: string | undefined;
  let spawnError: Error | undefined;
  child.once("error", (err) => {
    spawnError = err;
  });
  child.once("exit", (code, signal) => {
    exited = signal ? `signal ${signal}` : `code ${code}`;
  });

  const fail = async (reason: string): Promise<never> => {
    await tied.stop();
    const tail = output.trim();
    throw new Error(`anvil failed to start on 127.0.0.1:${port}: ${reason}${tail ? `\n${tail}` : ""}`);
  };

  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (spawnError) return fail(`spawn error: ${spawnError.message}`);
    if (exited) return fail(`process exited (${exited})`);
    const answered = await queryChainId(rpcUrl);
    if (answered !== undefined) {
      if (answered !== chainId) return fail(`eth_chainId returned ${answered}, expected ${chainId}`);
      break;
    }
    if (Date.now() > deadline) return fail(`no answer to eth_chainId within ${startTimeoutMs} ms`);
    await sleep(50);
  }
  // The port answered but may belong to another process if ours died meanwhile.
  if (exited) return fail(`process exited (${exited})`);

  return { rpcUrl, port, stop: () => tied.stop() };
}

/**
 * Starts a local anvil node from the npm-shipped binary ({@link anvilBinaryPath}), bound to 127.0.0.1 only,
 * with `--silent` and `--chain-id`. Resolves once the node answers `eth_chainId`
 * with the requested id. When `port` is 0/undefined a free port is picked (retried
 * up to 3 times if it is taken meanwhile). The node is also killed when the host
 * process exits without calling `stop()`, or crashes.
 *
 * @returns `{ rpcUrl, port, stop }`.
 * @throws Error if the binary cannot be found, or anvil crashes, reports the wrong
 *   chain id, or does not answer within `startTimeoutMs`; no process is left running.
 */
export async function startAnvil(opts: StartAnvilOptions = {}): Promise<AnvilHandle> {
  const chainId = opts.chainId ?? 8453;
  const startTimeoutMs = opts.startTimeoutMs ?? 15_000;
  if (!Number.isInteger(chainId) || chainId <= 0) throw new Error(`anvil: invalid chainId ${chainId}`);
  if (opts.port) return spawnOnce(opts.port, chainId, startTimeoutMs);

  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await spawnOnce(await freePort(), chainId, startTimeoutMs);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}
