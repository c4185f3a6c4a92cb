import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { scalarBundlePath } from "../../src/docs/api-page.js";

/*
 * `/docs/scalar.js` serves Scalar's standalone bundle from vendor/scalar/ (one file instead of the whole
 * @scalar/api-reference application as a dependency). The file must be the published one, byte for byte:
 * vendor/scalar/update.sh writes it and records its sha256 in source.json.
 */
describe("vendored Scalar bundle", () => {
  const source = JSON.parse(readFileSync(new URL("../../vendor/scalar/source.json", import.meta.url), "utf8")) as {
    package: string;
    version: string;
    file: string;
    sha256: string;
  };

  it("is the file source.json names, unchanged (sha256), and defines window.Scalar.createApiReference", () => {
    const path = scalarBundlePath();
    expect(path.endsWith("vendor/scalar/standalone.js")).toBe(true);
    const bytes = readFileSync(path);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(source.sha256);
    expect(source).toMatchObject({ package: "@scalar/api-reference", file: "dist/browser/standalone.js" });
    expect(bytes.toString("utf8")).toContain("window.Scalar={createApiReference:");
  });

  it("is not also installed as a dependency", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as Record<string, Record<string, string> | string[]>;
    for (const field of ["dependencies", "devDependencies", "optionalDependencies"]) expect(Object.keys(pkg[field] ?? {})).not.toContain(source.package);
    // The package ships the bundle, its licence and its source record (package.json `files`), not the update script.
    expect(pkg.files).toEqual(expect.arrayContaining(["vendor/scalar/standalone.js", "vendor/scalar/LICENSE", "vendor/scalar/source.json"]));
  });
});
