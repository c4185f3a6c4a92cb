import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { formattedSource, GENERATED_FILE } from "../../src/client/generate.js";
import { routeOf, toolRequest } from "../../src/client/requests.js";
import { STREAM_ROUTES, TOOL_ROUTES } from "../../src/client/tools.generated.js";
import { requestPath } from "../../src/registry/tool.js";
import { STREAMS, TOOLS } from "../../tools/index.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("the typed client's view of the registry", () => {
  it("src/client/tools.generated.ts is what `npm run client:generate` writes from the registry now", async () => {
    expect(readFileSync(GENERATED_FILE, "utf8"), "the registry changed: run npm run client:generate").toBe(await formattedSource());
  });

  it("has every tool and stream, and builds each example's request as the registry does", () => {
    expect(Object.keys(TOOL_ROUTES)).toEqual(TOOLS.map((t) => t.name));
    expect(Object.keys(STREAM_ROUTES)).toEqual(STREAMS.map((s) => s.topic));
    for (const tool of TOOLS) {
      const route = TOOL_ROUTES[tool.name as keyof typeof TOOL_ROUTES];
      const req = toolRequest(route, tool.example);
      // The registry's own request path (query for GET/DELETE) and, for POST, the example minus path params as body.
      expect(req.path, tool.name).toBe(requestPath(tool));
      expect(routeOf(tool.method, req.path)?.name, tool.name).toBe(tool.name);
    }
    // Paged tools name the list they page through; the market history pages three series, so has no one list.
    const items = Object.fromEntries(Object.entries(TOOL_ROUTES).flatMap(([n, r]) => ("items" in r ? [[n, r.items]] : [])));
    expect(items).toMatchObject({ liquidation_recent: "events", funding_history: "history", dex_price_history: "candles" });
    expect("items" in TOOL_ROUTES.cex_market_history).toBe(false);
    expect(TOOL_ROUTES.cex_market_history).toMatchObject({ paged: true });
  });

  it("bundles without the server: only src/client and the credits proof helpers, no registry, venues or stores", async () => {
    const out = await build({
      entryPoints: [`${ROOT}src/client/index.ts`],
      bundle: true,
      platform: "node",
      format: "esm",
      packages: "external",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const ours = Object.keys(out.metafile.inputs).filter((f) => !f.includes("node_modules/"));
    expect(ours.filter((f) => !f.startsWith("src/client/"))).toEqual(["src/payments/credits/client.ts", "src/payments/solana-keys.ts"]);
  });
});
