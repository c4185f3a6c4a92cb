import { accessSync, constants } from "node:fs";
import { describe, expect, it } from "vitest";
import { anvilBinaryPath } from "../../src/payments/local-chain/anvil.js";

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
