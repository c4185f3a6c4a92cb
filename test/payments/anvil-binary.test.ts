import { accessSync, constants, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { anvilBinaryPath, PLATFORM_PACKAGES } from "../../src/payments/local-chain/anvil.js";

describe("anvilBinaryPath (@foundry-rs/anvil)", () => {
  it("finds the executable binary of this platform's package", () => {
    const path = anvilBinaryPath({});
    expect(path).toMatch(/@foundry-rs[\\/]anvil/);
    accessSync(path, constants.X_OK);
  });

  it("prefers ANVIL_BINARY, and says so when it names no file", () => {
    const real = anvilBinaryPath({});
    expect(anvilBinaryPath({ ANVIL_BINARY: real })).toBe(real);
    expect(() => anvilBinaryPath({ ANVIL_BINARY: "/nonexistent/anvil" })).toThrow(/no binary found.*\/nonexistent\/anvil.*ANVIL_BINARY does not name an existing file/s);
  });

  it("explains what to install when no binary exists for the platform", () => {
    expect(() => anvilBinaryPath({}, "sunos", "x64")).toThrow(/no binary found for sunos-x64.*no @foundry-rs\/anvil binary package for sunos-x64.*getfoundry\.sh/s);
    // A supported platform whose package npm did not install (another OS): the package and the fallbacks are named.
    const other = process.platform === "darwin" ? ["linux", "x64"] : ["darwin", "arm64"];
    const expected = other[0] === "darwin" ? "@foundry-rs/anvil-darwin-arm64" : "@foundry-rs/anvil-linux-amd64";
    expect(() => anvilBinaryPath({}, other[0]!, other[1]!)).toThrow(new RegExp(`${expected}/bin/anvil \\(package not installed\\)`));
  });
});

describe("anvil's platform packages in package.json and the lockfile", () => {
  const read = (name: string) => JSON.parse(readFileSync(new URL(`../../${name}`, import.meta.url), "utf8")) as Record<string, unknown>;
  const pkg = read("package.json") as { optionalDependencies: Record<string, string> };
  const lock = read("package-lock.json") as { packages: Record<string, { version: string; optional?: boolean; os?: string[]; cpu?: string[] }> };

  it("declares every platform's package at one version, each locked for its own OS and CPU only", () => {
    const names = Object.values(PLATFORM_PACKAGES);
    expect(names).toHaveLength(5);
    const versions = new Set(names.map((n) => pkg.optionalDependencies[n]));
    expect([...versions]).toEqual(["1.7.1"]);
    for (const [platformArch, name] of Object.entries(PLATFORM_PACKAGES)) {
      const [platform, arch] = platformArch.split("-");
      const entry = lock.packages[`node_modules/${name}`];
      expect(entry, name).toMatchObject({ version: "1.7.1", optional: true, os: [platform], cpu: [arch] });
    }
    // Not the wrapper: its postinstall would download a binary when the platform package is missing.
    expect(Object.keys(lock.packages)).not.toContain("node_modules/@foundry-rs/anvil");
  });
});
