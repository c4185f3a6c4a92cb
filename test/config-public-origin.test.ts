import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { isLoopbackBind, isValidHostHeader, PublicOrigins } from "../src/lib/public-origins.js";
import { createService } from "../src/service.js";
import { PAID_ENV_NO_CHAIN } from "./helpers/paid-env.js";

/** A paid service's environment that needs no running chain until a payment arrives (credits on by default). */
const PAID = PAID_ENV_NO_CHAIN;

/** Starts a service on `HOST` and stops it; resolves with the origin a request of `host` is bound to. */
async function startOn(env: Record<string, string>, host = "other-x402-service.example"): Promise<{ url: string; origin: string }> {
  const config = loadConfig({ ...PAID, ...env });
  const service = await createService({ config });
  try {
    const l = await service.listen();
    try {
      return { url: l.url, origin: await originOf(l.url, host) };
    } finally {
      await l.close();
    }
  } finally {
    await service.close();
  }
}

/** The SIWX domain in the 402 challenge a request naming `host` gets (the origin it is bound to). */
async function originOf(url: string, host: string): Promise<string> {
  const { request } = await import("node:http");
  const to = new URL(url);
  const header = await new Promise<string>((resolve, reject) => {
    const r = request({ host: to.hostname.replace(/^\[(.*)\]$/, "$1"), port: to.port, path: "/api/v1/credits", headers: { host }, agent: false }, (res) => {
      res.resume();
      resolve(String(res.headers["payment-required"]));
    });
    r.on("error", reject);
    r.end();
  });
  const info = JSON.parse(Buffer.from(header, "base64").toString()).extensions["sign-in-with-x"].info as { uri: string };
  return new URL(info.uri).origin;
}

describe("PUBLIC_URL and PUBLIC_ORIGINS", () => {
  it("PUBLIC_ORIGINS lists further http(s) origins beside PUBLIC_URL; anything else is refused at start", () => {
    const c = loadConfig({ PUBLIC_URL: "https://data.example.com/mg/", PUBLIC_ORIGINS: " https://alt.example.com , http://10.0.0.5:8080/ " });
    expect(c.publicUrl).toBe("https://data.example.com/mg");
    expect(c.publicOrigins).toEqual(["https://alt.example.com", "http://10.0.0.5:8080"]);
    expect(loadConfig({}).publicOrigins).toEqual([]);
    const refused = (env: Record<string, string>) => () => loadConfig(env);
    expect(refused({ PUBLIC_ORIGINS: "https://alt.example.com" })).toThrow(/PUBLIC_ORIGINS needs PUBLIC_URL/);
    expect(refused({ PUBLIC_URL: "https://a.example", PUBLIC_ORIGINS: "https://b.example/path" })).toThrow(ConfigError);
    expect(refused({ PUBLIC_URL: "https://a.example", PUBLIC_ORIGINS: "b.example" })).toThrow(ConfigError);
    expect(refused({ PUBLIC_URL: "https://a.example", PUBLIC_ORIGINS: "http://a.example" })).toThrow(/listed twice/);
    expect(refused({ PUBLIC_URL: "ftp://a.example" })).toThrow(/PUBLIC_URL must be the http\(s\) URL/);
    expect(refused({ PUBLIC_URL: "https://user:pw@a.example" })).toThrow(ConfigError);
  });

  it("binds a request to the configured origin its Host names, any other Host to PUBLIC_URL's, never to the Host itself", () => {
    const o = new PublicOrigins(loadConfig({ PUBLIC_URL: "https://data.example.com/mg", PUBLIC_ORIGINS: "https://alt.example.com,http://10.0.0.5:8080" }));
    expect(o.origin({ host: "data.example.com" })).toBe("https://data.example.com");
    expect(o.origin({ host: "ALT.example.com:443" })).toBe("https://alt.example.com");
    expect(o.origin({ host: "10.0.0.5:8080", protocol: "https" })).toBe("http://10.0.0.5:8080");
    for (const host of ["other-x402-service.example", "10.0.0.5", "alt.example.com:8443", "a b", undefined])
      expect(o.origin({ host }), String(host)).toBe("https://data.example.com");
    expect(o.origin()).toBe("https://data.example.com");
    expect(o.baseUrl({ host: "alt.example.com" })).toBe("https://alt.example.com/mg");
    expect(o.baseUrl({ host: "evil.example", protocol: "https" })).toBe("https://data.example.com/mg");
  });

  it("without PUBLIC_URL: a loopback bind derives the origin from its address and bound port; a public bind has none", () => {
    const loop = new PublicOrigins({ host: "127.0.0.1", port: 0 });
    loop.listening("127.0.0.1", 43123, { siwx: true });
    expect(loop.origin({ host: "other-x402-service.example" })).toBe("http://127.0.0.1:43123");
    expect(loop.origin({ host: "localhost:43123" })).toBe("http://localhost:43123");
    const v6 = new PublicOrigins({ host: "::1", port: 4021 });
    expect(v6.origin({ host: "evil.example" })).toBe("http://[::1]:4021");
    expect(new PublicOrigins({ host: "localhost", port: 4021 }).list()).toEqual(["http://localhost:4021", "http://127.0.0.1:4021", "http://[::1]:4021"]);

    const open = new PublicOrigins({ host: "0.0.0.0", port: 4021 });
    expect(open.configured).toBe(false);
    expect(() => open.listening("0.0.0.0", 4021, { siwx: true })).toThrow(/PUBLIC_URL is required when credits are on/);
    expect(() => open.listening("0.0.0.0", 4021, { siwx: false })).not.toThrow();
    // Credits off: never a Host-derived origin; URLs in answers may use the (checked) Host.
    expect(open.origin({ host: "evil.example" })).toBe("http://localhost:4021");
    expect(open.baseUrl({ host: "data.example.com", protocol: "https" })).toBe("https://data.example.com");
    expect(open.baseUrl({ host: "a b", protocol: "javascript" })).toBe("http://localhost:4021");
  });

  it("knows loopback binds and well-formed Host values", () => {
    for (const h of ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"]) expect(isLoopbackBind(h), h).toBe(true);
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "192.168.1.2", "example.com", "localhost.example.com", ""]) expect(isLoopbackBind(h), h).toBe(false);
    for (const h of ["example.com", "example.com:443", "127.0.0.1:4021", "[::1]", "[::1]:80", "a-b.c_d"]) expect(isValidHostHeader(h), h).toBe(true);
    for (const h of ["[::1", "a b", "%zz", "@@", "", "a:99999", "[zz]", "a/b", "a:b:c", "x".repeat(300)]) expect(isValidHostHeader(h), h).toBe(false);
  });
});

describe("starting a paid service: the SIWX origin must come from configuration", () => {
  it("refuses a public bind with credits on and no PUBLIC_URL (ConfigError), before serving anything", async () => {
    const service = await createService({ config: loadConfig({ ...PAID, HOST: "0.0.0.0" }) });
    try {
      await expect(service.listen()).rejects.toThrow(/PUBLIC_URL is required when credits are on/);
      await expect(service.listen(0, "::")).rejects.toBeInstanceOf(ConfigError);
    } finally {
      await service.close();
    }
  });

  it("starts on loopback binds (origin: the bound address and port), with PUBLIC_URL (its origin), or with CREDITS=off", async () => {
    for (const host of ["127.0.0.1", "::1", "localhost"]) {
      const { url, origin } = await startOn({ HOST: host });
      expect(origin, host).toBe(url);
    }
    expect((await startOn({ HOST: "0.0.0.0", PUBLIC_URL: "https://data.example.com" })).origin).toBe("https://data.example.com");
    const config = loadConfig({ ...PAID, HOST: "0.0.0.0", CREDITS: "off" });
    const service = await createService({ config });
    const l = await service.listen();
    await l.close();
  });

  it("the production entry exits 2 with the reason", async () => {
    const env: Record<string, string | undefined> = { ...process.env, ...PAID, HOST: "0.0.0.0", LOG_LEVEL: "error" };
    delete env.PUBLIC_URL;
    delete env.PUBLIC_ORIGINS;
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((r) => child.once("exit", r));
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(/marketgate: Invalid configuration:[\s\S]*PUBLIC_URL is required when credits are on/);
  }, 60_000);
});
