import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, SECRET_SETTINGS } from "../src/config.js";
import { doctorMain } from "../src/doctor/cli.js";
import { redactSettingValue } from "../src/lib/redact.js";

/** What no message may contain: every credential below has it in its user info, path, query or fragment. */
const NEEDLE = /SECRET/i;

/** Every setting whose value is a URL (or a list of them): the secret ones, and the public origins, which are refused with credentials. */
const URL_SETTINGS = [
  ...Object.entries(SECRET_SETTINGS)
    .filter(([, kind]) => kind === "url" || kind === "urls")
    .map(([name]) => name),
  "PUBLIC_URL",
  "PUBLIC_ORIGINS",
];

/** Values of a URL setting as operators write them wrong or right, each carrying a key (`SECRET…`). */
const SHAPES = [
  "https://user:SECRETPW@host.example/SECRETPATH?apikey=SECRETQ#SECRETF",
  "host.example/v2/SECRETPATH?apikey=SECRETQ",
  "ftp://user:SECRETPW@host.example/SECRETPATH?apikey=SECRETQ",
  "user:SECRETPW@host.example/SECRETPATH",
  "http//host.example/SECRETPATH?apikey=SECRETQ",
  "https://host.example/SECRETPATH?apikey=SECRETQ x",
  "self,https://host.example?apikey=SECRETQ,bad/SECRETPATH",
];

/** A valid value of each URL setting that carries a key (`redis://` where the schema wants it). */
function keyedUrls(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of URL_SETTINGS) {
    const scheme = name === "REDIS_URL" ? "redis" : name.endsWith("_WS_URL") ? "wss" : "https";
    env[name] = `${scheme}://user:SECRETPW@${name.toLowerCase().replace(/_/g, "-")}.example/SECRETPATH?apikey=SECRETQ`;
  }
  env.FACILITATOR = `self,${env.FACILITATOR}`;
  delete env.PUBLIC_ORIGINS;
  env.PUBLIC_URL = "https://data.example.com";
  return env;
}

/** The problems `loadConfig(env)` is refused with, as one text (empty when accepted). */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
    return "";
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    expect(err.problems.join("\n")).not.toMatch(NEEDLE);
    return err.message;
  }
}

/** Runs `node --import tsx <args>` with `env` over the test's environment; its exit code and stderr. */
async function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], { env: { ...process.env, LOG_LEVEL: "error", ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  return { code, stderr };
}

/**
 * Issue 31, finding 6: a start-up error quoted `FACILITATOR` (and `PUBLIC_URL`, `PUBLIC_ORIGINS`) as written,
 * API key included. Every configuration problem now shows a URL setting as `scheme://host/…` at most.
 */
describe("configuration errors never print a URL setting's credentials, path or query", () => {
  it("redactSettingValue keeps a host at most, for URLs and for values that only look like one", () => {
    expect(redactSettingValue("https://user:SECRETPW@host.example:8443/SECRETPATH?apikey=SECRETQ")).toBe("https://[redacted]@host.example:8443/…");
    expect(redactSettingValue("host.example/v2?apikey=SECRETQ")).toBe("host.example/…");
    expect(redactSettingValue("user:SECRETPW@host.example/SECRETPATH")).toBe("[redacted]@host.example/…");
    expect(redactSettingValue(" notaurl ")).toBe("notaurl");
    expect(redactSettingValue("localhost:8080")).toBe("localhost:8080");
    for (const opaque of ["SECRETKEY0123456789", "sk_live_SECRET", "a:SECRET", "http//x.example/SECRET", ""]) expect(redactSettingValue(opaque), opaque).not.toMatch(NEEDLE);
  });

  it("every URL setting, in every shape, alone and beside other errors: refused or accepted, never quoted", () => {
    let refused = 0;
    for (const name of URL_SETTINGS) {
      for (const value of SHAPES) {
        const env = { [name]: value, ...(name === "PUBLIC_ORIGINS" ? { PUBLIC_URL: "https://data.example.com" } : {}) };
        if (refusal(env)) refused++;
        // Beside another refused setting that quotes its own value, and with the rest of the URL settings keyed.
        refusal({ ...keyedUrls(), ...env, TRUST_PROXY: "https://proxy.example/SECRETPATH?apikey=SECRETQ" });
      }
    }
    expect(refused).toBeGreaterThan(URL_SETTINGS.length);
    // The problems still say what is wrong, and where.
    expect(refusal({ FACILITATOR: "self,facilitator.example/v2?apikey=SECRETQ" })).toMatch(
      /FACILITATOR entries must be "self" or http\(s\) URLs; entry 2 is not \(facilitator\.example\/…\)/,
    );
    expect(refusal({ PUBLIC_URL: "https://user:SECRETPW@data.example.com/?apikey=SECRETQ" })).toMatch(
      /PUBLIC_URL .* has credentials and a query \(https:\/\/\[redacted\]@data\.example\.com\/…\)/,
    );
    expect(refusal({ PUBLIC_URL: "https://data.example.com", PUBLIC_ORIGINS: "https://alt.example.com/SECRETPATH" })).toMatch(/got https:\/\/alt\.example\.com\/…/);
    // Example URLs in the problems' own prose read as written.
    expect(refusal({ REDIS_URL: "http://x.example" })).toContain("expected redis://host:port or rediss://…");
  });

  it("the production entry, `marketgate mcp` and `marketgate doctor` print the refused start-up without the key", async () => {
    const env = {
      ...keyedUrls(),
      PAY_TO: "0x000000000000000000000000000000000000dEaD",
      FACILITATOR: "https://user:SECRETPW@facilitator.example/SECRETPATH?apikey=SECRETQ,facilitator.example/v2?apikey=SECRETQ",
    };
    const [serve, mcp] = await Promise.all([run(["src/main.ts"], env), run(["bin/marketgate.ts", "mcp"], env)]);
    for (const [what, r] of [
      ["serve", serve],
      ["mcp", mcp],
    ] as const) {
      expect(r.stderr, what).not.toMatch(NEEDLE);
      expect(r.stderr, what).toMatch(/FACILITATOR entries must be "self" or http\(s\) URLs; entry 2 is not \(facilitator\.example\/…\)/);
      expect(r.code, what).not.toBe(0);
    }
    let out = "";
    expect(await doctorMain(["--no-save"], env, (s) => (out += s))).toBe(2);
    expect(out).toMatch(/entry 2 is not/);
    expect(out).not.toMatch(NEEDLE);
  }, 60_000);
});
