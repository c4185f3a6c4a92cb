import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import type { Abi, Hex } from "viem";

/** Compiled TestUSDC artifact: ABI plus creation and runtime bytecode (0x-prefixed hex). */
export interface TestUsdcArtifact {
  /** Contract ABI (viem `Abi`). */
  abi: Abi;
  /** Creation (deploy) bytecode. */
  bytecode: Hex;
  /** Runtime bytecode, i.e. what `eth_getCode` returns after deployment. */
  deployedBytecode: Hex;
}

/** Solidity source file name, also used as the key in the solc standard-JSON input. */
const SOURCE_NAME = "TestUSDC.sol";
const CONTRACT_NAME = "TestUSDC";

let cached: TestUsdcArtifact | undefined;

interface SolcOutput {
  errors?: { severity: string; formattedMessage?: string; message: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>;
}

interface SolcModule {
  compile(input: string): string;
}

/**
 * Loads solc-js lazily. soljson (emscripten) installs a process-wide
 * `unhandledRejection` listener that rethrows; it is removed again so that
 * loading the compiler does not change the host process's error handling.
 */
function loadSolc(): SolcModule {
  const before = new Set(process.listeners("unhandledRejection"));
  const solc = createRequire(import.meta.url)("solc") as SolcModule;
  for (const listener of process.listeners("unhandledRejection")) {
    if (!before.has(listener)) process.removeListener("unhandledRejection", listener);
  }
  return solc;
}

/**
 * Locates TestUSDC.sol: next to this module (tsx, vitest), or, when running the tsc
 * output from `dist/src/payments/local-chain/` (tsc does not copy .sol files), in the
 * repository's `src/payments/local-chain/`.
 */
function sourcePath(): string {
  const candidates = [new URL(`./${SOURCE_NAME}`, import.meta.url), new URL(`../../../../src/payments/local-chain/${SOURCE_NAME}`, import.meta.url)].map((u) => fileURLToPath(u));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`TestUSDC.sol not found; looked in: ${candidates.join(", ")}`);
  return found;
}

/**
 * Compiles `TestUSDC.sol` (next to this module) with solc-js: standard JSON input,
 * optimizer on (200 runs), evmVersion "paris". The result is memoised for the process,
 * so only the first call pays the ~1 s compile cost.
 *
 * @returns `{ abi, bytecode, deployedBytecode }` of the TestUSDC contract.
 * @throws Error if the source file cannot be read or solc reports any error
 *   (the message includes solc's formatted diagnostics).
 */
export function compileTestUsdc(): TestUsdcArtifact {
  if (cached) return cached;

  const source = readFileSync(sourcePath(), "utf8");
  const input = {
    language: "Solidity",
    sources: { [SOURCE_NAME]: { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "paris",
      outputSelection: { [SOURCE_NAME]: { [CONTRACT_NAME]: ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };

  const output = JSON.parse(loadSolc().compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new Error(`TestUSDC compilation failed:\n${errors.map((e) => e.formattedMessage ?? e.message).join("\n")}`);
  }
  const contract = output.contracts?.[SOURCE_NAME]?.[CONTRACT_NAME];
  if (!contract || !contract.evm.bytecode.object || !contract.evm.deployedBytecode.object) {
    throw new Error("TestUSDC compilation produced no bytecode");
  }

  cached = {
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
  };
  return cached;
}
