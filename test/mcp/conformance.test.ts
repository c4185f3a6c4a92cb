import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createService, type Service } from "../../src/service.js";
import { PAID_ENV_NO_CHAIN } from "../helpers/paid-env.js";

/** The official MCP conformance suite's CLI (`@modelcontextprotocol/conformance`, an exact devDependency). */
const CLI = (() => {
  const manifest = createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json");
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: { conformance: string } };
  return join(dirname(manifest), bin.conformance);
})();

/** One check of a scenario's `checks.json`. */
interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/**
 * Runs the suite's server scenario `scenario` against the MCP endpoint at `url` (`conformance server --url
 * <url> --scenario <name> -o <dir>`, offline); resolves with its exit code and the checks it wrote.
 */
async function runScenario(url: string, scenario: string): Promise<{ code: number; checks: Check[]; output: string }> {
  const out = mkdtempSync(join(tmpdir(), "mg-conformance-"));
  try {
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) =>
      execFile(process.execPath, [CLI, "server", "--url", url, "--scenario", scenario, "-o", out], { timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, output: `${stdout}${stderr}` }),
      ),
    );
    const runs = readdirSync(out);
    const checks = runs.length === 1 ? (JSON.parse(readFileSync(join(out, runs[0]!, "checks.json"), "utf8")) as Check[]) : [];
    return { code, checks, output };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * Issue 31, finding 7: the conformance scenario `dns-rebinding-protection` (0.1.16) failed: on a loopback bind,
 * `POST /mcp` with `Host: evil.example.com` and `Origin: http://evil.example.com` answered 200. It runs here,
 * in `npm test`, against the service listening on loopback with payments and credits on, on both MCP
 * endpoints (`/mcp` stateless, `/mcp/live` with sessions).
 */
describe("MCP conformance suite: dns-rebinding-protection", () => {
  let service: Service;
  let listening: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    const config = loadConfig({
      ...PAID_ENV_NO_CHAIN,
      HOST: "127.0.0.1",
    });
    service = await createService({ config });
    listening = await service.listen();
  });
  afterAll(async () => {
    await listening?.close();
    await service?.close();
  });

  it.each(["/mcp", "/mcp/live"])(
    "passes on %s of a loopback bind: a rebinding request is refused, a loopback one answered",
    async (path) => {
      const { code, checks, output } = await runScenario(`${listening.url}${path}`, "dns-rebinding-protection");
      expect(checks.map((c) => c.id).sort(), output).toEqual(["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"]);
      for (const c of checks) expect(c.status, `${c.id}: ${c.errorMessage ?? ""}`).toBe("SUCCESS");
      expect(code, output).toBe(0);
    },
    90_000,
  );
});
