import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFree, requestPath } from "../../src/registry/tool.js";
import { TOOLS } from "../../tools/index.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";

/*
 * The documents for people and language models: `/docs` (Scalar, served locally) and `/llms.txt`,
 * `/llms-full.txt`. No headless browser is installed on these machines, so the page is checked by
 * fetching it and its script, not by rendering it.
 */
describe("GET /docs, /llms.txt, /llms-full.txt", () => {
  let stack: FreeStack;
  beforeAll(async () => {
    stack = await startFreeStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("/docs is an HTML page that loads the local Scalar bundle, points it at /openapi.json and explains paying", async () => {
    const res = await fetch(`${stack.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await res.text();
    expect(page).toContain('<script src="/docs/scalar.js"></script>');
    expect(page).toContain('"url":"/openapi.json"');
    expect(page).toContain("Scalar.createApiReference(");
    // Nothing is loaded from another host: no CDN script, no web fonts, no telemetry.
    expect(page).not.toMatch(/<script[^>]+src="https?:/);
    expect(page).toContain('"withDefaultFonts":false');
    expect(page).toContain('"telemetry":false');
    expect(page).toContain('"proxyUrl":""');
    for (const words of ["402", "PAYMENT-REQUIRED", "PAYMENT-SIGNATURE", "MPP", "POST /api/v1/credits", "SIGN-IN-WITH-X"]) expect(page).toContain(words);
    // The service icon as the favicon, served by the service.
    expect(page).toContain('<link rel="icon" type="image/svg+xml" href="/favicon.svg">');
    expect((await fetch(`${stack.url}/favicon.svg`)).headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    // Scalar's MCP button names this service's /mcp (its PUBLIC_URL's, else the page's origin's), never Scalar's own service.
    const config = JSON.parse(/const config = (\{.*\});/.exec(page)![1]!) as { favicon: string; mcp: { name: string; url?: string } };
    expect(config.favicon).toBe("/favicon.svg");
    expect(page).toContain('"showDeveloperTools":"never"');
    expect(config.mcp.name).toBe("marketgate");
    if (config.mcp.url === undefined) expect(page).toContain('config.mcp.url = config.mcp.url || new URL("/mcp", location.href).href;');
    else expect(config.mcp.url).toBe(`${stack.url}/mcp`);

    const openapi = await fetch(`${stack.url}/openapi.json`);
    expect(openapi.status).toBe(200);
    expect(((await openapi.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);
  });

  it("/docs/scalar.js is the standalone bundle, as JavaScript, cacheable for a day", async () => {
    const res = await fetch(`${stack.url}/docs/scalar.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^(text|application)\/javascript/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
    const js = await res.text();
    expect(js.length).toBeGreaterThan(1_000_000);
    expect(js).toContain("createApiReference");
  });

  it("/llms.txt names every tool with its price and an example call on this server", async () => {
    const res = await fetch(`${stack.url}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text.startsWith("# marketgate\n\n> ")).toBe(true);
    expect(text).toContain("## How to pay");
    for (const t of TOOLS) {
      const at = text.indexOf(`### ${t.name}:`);
      expect(at, t.name).toBeGreaterThan(0);
      const next = text.indexOf("\n### ", at + 1);
      const head = text.slice(at, next > 0 ? next : undefined);
      expect(head).toContain(`\`${t.method} ${t.path}\``);
      expect(head).toContain(isFree(t) ? "Price: free" : `Price: ${t.priceUsd} USDC`);
      expect(head).toContain(`${stack.url}${requestPath(t)}`);
      if (t.method === "POST") expect(head).toMatch(/curl -i -X POST '[^']+' -H 'content-type: application\/json' -d '\{/);
    }
    expect(text).toContain(`${stack.url}/llms-full.txt`);
  });

  it("/llms-full.txt adds each tool's input parameters and output fields", async () => {
    const text = await (await fetch(`${stack.url}/llms-full.txt`)).text();
    expect(text.match(/^Input parameters:$/gm)).toHaveLength(TOOLS.length);
    expect(text).toContain("- `symbols` (query, string, required): Comma-separated lowercase symbols");
    expect(text).toContain('- `period` (query, "1h" | "4h" | "24h" | "7d", default "1h")');
    expect(text).toContain("- `webhook_url` (body, string, required)");
    expect(text).toContain("- `data.{key}.price` (number): USD price");
    expect(text).toContain("- `window_start` (string)");
    expect(text).toContain("Or (an interim answer, free and uncached):");
  });

  it("/ lists the new documents as free and gives stdio MCP commands that work before publication", async () => {
    const { body } = await stack.get("/");
    expect(body.free_endpoints).toEqual(expect.arrayContaining(["GET /docs", "GET /llms.txt", "GET /llms-full.txt"]));
    expect(body.mcp.stdio).toContain("npm run mcp");
    expect(body.mcp.stdio).toMatch(/npm pack && npx \.\/marketgate-\d+\.\d+\.\d+\.tgz mcp/);
    expect(body.description).not.toContain("CEX prices and market history");
  });
});
