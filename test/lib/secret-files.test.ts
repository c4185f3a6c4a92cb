import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, SECRET_SETTINGS } from "../../src/config.js";
import { MAX_SECRET_FILE_BYTES, readSecretFiles } from "../../src/lib/secret-files.js";

/* Secrets from files (`X_FILE`, as Docker and Kubernetes mount them), on real files in a temporary directory. */
describe("secret settings read from X_FILE", () => {
  const dir = mkdtempSync(join(tmpdir(), "mg-secret-files-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string | Buffer): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it("reads the file as the setting, dropping one trailing line break, and leaves other settings alone", () => {
    const key = "k".repeat(40);
    const { env, problems } = readSecretFiles({ MPP_SECRET_KEY_FILE: file("mpp", `${key}\n`), PORT: "4021", REDIS_URL_FILE: "" }, ["MPP_SECRET_KEY", "REDIS_URL"]);
    expect(problems).toEqual([]);
    expect(env.MPP_SECRET_KEY).toBe(key);
    expect(env.PORT).toBe("4021");
    expect(env.REDIS_URL).toBeUndefined();
    // Only the names asked for: a non-secret X_FILE is not read.
    expect(readSecretFiles({ PORT_FILE: file("port", "1") }, ["MPP_SECRET_KEY"]).env.PORT).toBeUndefined();
  });

  it("reports both set, a missing file, an empty file and an oversized one, each by name", () => {
    const { problems } = readSecretFiles(
      {
        MPP_SECRET_KEY: "x".repeat(40),
        MPP_SECRET_KEY_FILE: file("both", "y".repeat(40)),
        REDIS_URL_FILE: join(dir, "absent"),
        COINGECKO_API_KEY_FILE: file("empty", "\n"),
        RELAYER_PRIVATE_KEY_FILE: file("big", Buffer.alloc(MAX_SECRET_FILE_BYTES + 1, 97)),
      },
      ["MPP_SECRET_KEY", "REDIS_URL", "COINGECKO_API_KEY", "RELAYER_PRIVATE_KEY"],
    );
    expect(problems).toEqual([
      "MPP_SECRET_KEY_FILE: set MPP_SECRET_KEY or MPP_SECRET_KEY_FILE, not both",
      `REDIS_URL_FILE: cannot read ${join(dir, "absent")} (ENOENT)`,
      `COINGECKO_API_KEY_FILE: ${join(dir, "empty")} is empty`,
      `RELAYER_PRIVATE_KEY_FILE: ${join(dir, "big")} is larger than ${MAX_SECRET_FILE_BYTES} bytes`,
    ]);
  });

  it("loadConfig takes every secret setting from its file: validated, used and registered for log redaction", () => {
    const mpp = "m".repeat(48);
    const session = "s".repeat(48);
    const relayer = `0x${"ab".repeat(32)}`;
    const config = loadConfig({
      MPP_SECRET_KEY_FILE: file("mpp-key", `${mpp}\n`),
      CREDITS_SESSION_SECRET_FILE: file("session", session),
      RELAYER_PRIVATE_KEY_FILE: file("relayer", `${relayer}\r\n`),
      COINGECKO_API_KEY_FILE: file("cg", "CG-demo-key"),
    });
    expect(config.mpp?.secretKey).toBe(mpp);
    expect(config.mpp?.secretKeyGenerated).toBe(false);
    expect(config.coingecko.apiKey).toBe("CG-demo-key");
    expect(config.secrets).toEqual(
      expect.arrayContaining([
        { setting: "MPP_SECRET_KEY", kind: "value", value: mpp },
        { setting: "CREDITS_SESSION_SECRET", kind: "value", value: session },
        { setting: "RELAYER_PRIVATE_KEY", kind: "value", value: relayer },
      ]),
    );
    // A file's content is validated like the variable: a short secret is refused.
    expect(() => loadConfig({ MPP_SECRET_KEY_FILE: file("short", "short") })).toThrow(/MPP_SECRET_KEY must be at least 32 characters/);
    // Every secret setting has its _FILE form; a problem stops the start with the setting named.
    for (const name of Object.keys(SECRET_SETTINGS)) {
      let err: unknown;
      try {
        loadConfig({ [`${name}_FILE`]: join(dir, "absent") });
      } catch (e) {
        err = e;
      }
      expect(err, name).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems, name).toEqual([`${name}_FILE: cannot read ${join(dir, "absent")} (ENOENT)`]);
    }
  });
});
