import { readFileSync } from "node:fs";
import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { MANIFEST_DIR, renderManifests } from "../manifest/generate.js";
import { TOOLS } from "../tools/index.js";

describe("generated manifests", () => {
  it("are up to date with the registry (run `npm run manifest` when this fails)", async () => {
    for (const [name, expected] of Object.entries(await renderManifests())) {
      expect(readFileSync(new URL(name, MANIFEST_DIR), "utf8"), `manifest/${name}`).toBe(expected);
    }
  });

  it("list every paid tool in x402.json with its price in atomic USDC, and a valid OpenAPI document", async () => {
    const x402 = JSON.parse(readFileSync(new URL("x402.json", MANIFEST_DIR), "utf8"));
    const paid = TOOLS.filter((t) => t.priceUsd !== "free");
    expect(x402.items.map((i: { name: string }) => i.name)).toEqual(paid.map((t) => t.name));
    for (const t of paid) {
      const item = x402.items.find((i: { name: string }) => i.name === t.name);
      expect(item.accepts[0].amount).toBe(String(Math.round(Number(t.priceUsd) * 1e6)));
    }
    await SwaggerParser.validate(JSON.parse(readFileSync(new URL("openapi.json", MANIFEST_DIR), "utf8")));
    const server = JSON.parse(readFileSync(new URL("server.json", MANIFEST_DIR), "utf8"));
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    expect(server.description.length).toBeLessThanOrEqual(100);
  });
});
