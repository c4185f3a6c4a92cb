import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { sanitizeResourceServiceMetadata, validateDiscoveryExtension, type DiscoveryExtension } from "@x402/extensions/bazaar";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { discoveryExtensions, mcpDeclaration, resourceMetadata, serviceMetadata } from "../../src/payments/bazaar.js";
import { buildOpenApi } from "../../src/docs/openapi.js";
import { bazaarOutputExample, outputExample } from "../../src/registry/output-example.js";
import { paymentOffers, priceBook } from "../../src/docs/pricing.js";
import { isFree, requestPath } from "../../src/registry/tool.js";
import { serviceInfo } from "../../src/service.js";
import { STREAMS, TOOLS } from "../../tools/index.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAY_TO = "0x1111111111111111111111111111111111111111";
const HOST = "https://marketgate.example";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

/** The OpenAPI document a deployment with the default configuration serves (payments, MPP and credits on; the live streams). */
async function document(): Promise<Doc> {
  const config = loadConfig({});
  const prices = await priceBook(TOOLS, { network: config.payments.network, payTo: PAY_TO, timeoutSec: config.payments.timeoutSec });
  return buildOpenApi(TOOLS, prices, { ...serviceInfo(config), publicUrl: HOST }, paymentOffers(config), STREAMS);
}

describe("OpenAPI document", () => {
  let doc: Doc;
  let dir: string;
  beforeAll(async () => {
    doc = await document();
    dir = mkdtempSync(join(tmpdir(), "marketgate-openapi-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes `redocly lint` (recommended rules) with 0 errors", async () => {
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(doc));
    const cli = join(ROOT, "node_modules/@redocly/cli/bin/cli.js");
    const out = await run(process.execPath, [cli, "lint", file, "--format=json"], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
      timeout: 120_000,
      maxBuffer: 32 * 1024 * 1024,
    }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? "" }));
    const report = JSON.parse(out.stdout) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; severity: string; message: string }> };
    expect(report.problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 120_000);

  it("declares every way to pay, security on every operation, and x-payment-info with x402, MPP and credits", () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["creditsSession", "mpp", "siwx", "x402"]);
    expect(doc.components.securitySchemes.x402).toMatchObject({ type: "apiKey", in: "header", name: "PAYMENT-SIGNATURE" });
    expect(doc.components.securitySchemes.siwx).toMatchObject({ type: "apiKey", in: "header", name: "SIGN-IN-WITH-X", "x-agentcash-auth-kind": "siwx" });
    expect(doc.components.securitySchemes.creditsSession).toMatchObject({ type: "apiKey", in: "header", name: "X-Credits-Session" });
    expect(doc.components.securitySchemes.mpp).toMatchObject({ type: "http", scheme: "Payment" });
    expect(doc.info.contact.url).toMatch(/^https:\/\//);
    for (const [path, item] of Object.entries<Record<string, Doc>>(doc.paths)) {
      for (const [method, op] of Object.entries<Doc>(item)) {
        expect(Array.isArray(op.security), `${method} ${path}`).toBe(true);
        // Credits accounts and the live streams (paid per minute from credits) take a SIWX proof or a session token.
        if (op.operationId.startsWith("stream_") && op["x-price-per-minute-usd"]) expect(op.security, `${method} ${path}`).toEqual([{ siwx: [] }, { creditsSession: [] }]);
        else if (!op["x-payment-info"] && op.operationId !== "credits_get" && op.operationId !== "credits_set_caps" && op.operationId !== "credits_refund")
          expect(op.security, `${method} ${path}`).toEqual([]);
      }
    }
    for (const t of TOOLS.filter((t) => !isFree(t))) {
      const op = doc.paths[t.path.replace(/:(\w+)/g, "{$1}")][t.method.toLowerCase()];
      const info = op["x-payment-info"];
      expect(info.protocols.map((p: object) => Object.keys(p)[0])).toEqual(["x402", "mpp", "mpp"]);
      expect(info.protocols[0].x402).toMatchObject({ x402Version: 2, network: "eip155:8453", payTo: PAY_TO, amount: String(Math.round(Number(t.priceUsd) * 1e6)) });
      expect(info.protocols.slice(1).map((p: Doc) => p.mpp.method)).toEqual(["evm", "tempo"]);
      if (t.priceOf) {
        expect(info.price).toMatchObject({ mode: "dynamic", min: t.priceUsd });
        expect(info.credits).toBeUndefined();
        expect(op.security).toEqual([{}, { mpp: [] }]);
      } else {
        expect(info.price).toEqual({ mode: "fixed", currency: "USD", amount: t.priceUsd });
        expect(info.credits).toMatchObject({ auth: "siwx", headers: ["SIGN-IN-WITH-X", "X-Credits-Session"] });
        expect(op.security).toEqual([{}, { mpp: [] }, { siwx: [] }, { creditsSession: [] }]);
      }
    }
  });

  it("types the 402 (v1 body plus credits, v2 header) and the quote's payment_required; 403/409 only where they occur; no schema named Error", () => {
    const schemas = doc.components.schemas;
    expect(schemas.Error).toBeUndefined();
    expect(schemas.ErrorBody).toBeDefined();
    expect(schemas.PaymentRequired.properties.accepts.items).toEqual({ $ref: "#/components/schemas/PaymentRequirements" });
    expect(schemas.PaymentRequiredV1.properties.credits).toEqual({ $ref: "#/components/schemas/CreditsHint" });
    const market = doc.paths["/api/v1/market/{id}"].get;
    expect(market.responses["402"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/PaymentRequiredV1" });
    expect(market.responses["402"].headers["PAYMENT-REQUIRED"].schema.contentSchema).toEqual({ $ref: "#/components/schemas/PaymentRequired" });
    expect(market.responses["403"]).toBeUndefined();
    expect(market.responses["409"].description).toMatch(/payment identifier/);
    expect(doc.paths["/api/v1/status"].get.responses["409"]).toBeUndefined();
    expect(doc.paths["/api/v1/status"].get.responses["402"]).toBeUndefined();
    expect(doc.paths["/api/v1/credits"].get.responses["402"].description).toMatch(/SIGN-IN-WITH-X/);
    for (const t of TOOLS) {
      const op = doc.paths[t.path.replace(/:(\w+)/g, "{$1}")][t.method.toLowerCase()];
      expect(op.responses["403"] !== undefined, t.name).toBe(Boolean(t.acceptsCredentials));
      if (op.responses["403"] || (op.responses["409"] && isFree(t))) expect(t.tags, t.name).toContain("alerts");
    }
    expect(doc.paths["/api/v1/quote"].get.responses["200"].content["application/json"].schema.properties.x402.properties.payment_required).toEqual({
      $ref: "#/components/schemas/PaymentRequired",
    });
    for (const p of ["/health", "/ready", "/", "/metrics", "/openapi.json", "/.well-known/x402", "/.well-known/x402.json"]) expect(doc.paths[p]?.get, p).toBeDefined();
    expect(doc.paths["/mcp"].post.operationId).toBe("mcp");
  });

  it("gives every tool an output example that its own output schema accepts (the same one the 402's bazaar extension carries)", () => {
    for (const t of TOOLS) {
      const example = outputExample(t);
      const parsed = t.output.safeParse(example);
      expect(parsed.success, `${t.name}: ${parsed.error?.message}`).toBe(true);
      const op = doc.paths[t.path.replace(/:(\w+)/g, "{$1}")][t.method.toLowerCase()];
      expect(op.responses["200"].content["application/json"].example).toEqual(example);
    }
  });

  it("declares bazaar discovery that validates for every paid route and MCP tool, with service metadata the Bazaar keeps", () => {
    for (const t of TOOLS.filter((t) => !isFree(t))) {
      const { bazaar } = discoveryExtensions(t, `${HOST}${requestPath(t)}`) as { bazaar: DiscoveryExtension };
      expect(validateDiscoveryExtension(bazaar), t.name).toEqual({ valid: true });
      expect(bazaar.info.input).toMatchObject({ type: "http", method: t.method });
      expect(bazaar.info.output?.example).toEqual(bazaarOutputExample(t));
      const mcp = mcpDeclaration(t) as unknown as DiscoveryExtension;
      expect(validateDiscoveryExtension(mcp), t.name).toEqual({ valid: true });
      expect(mcp.info.input).toMatchObject({ type: "mcp", toolName: t.name, transport: "streamable-http" });
      expect(discoveryExtensions(t, `mcp://tool/${t.name}`)).toEqual({ bazaar: mcp });
      const meta = serviceMetadata(t, HOST);
      expect(sanitizeResourceServiceMetadata({ url: HOST, ...meta })).toEqual({ serviceName: "marketgate", tags: meta.tags, iconUrl: `${HOST}/favicon.svg` });
    }
    // Behind a PUBLIC_URL with a path, the route template keeps the prefix.
    const market = TOOLS.find((t) => t.name === "cex_market")!;
    expect(discoveryExtensions(market, `${HOST}/mg/api/v1/market/bitcoin`)).toMatchObject({
      bazaar: { routeTemplate: "/mg/api/v1/market/:id", info: { input: { pathParams: { id: "bitcoin" } } } },
    });
    expect(resourceMetadata(market, `${HOST}/mg/api/v1/market/bitcoin`).iconUrl).toBe(`${HOST}/mg/favicon.svg`);
    expect(resourceMetadata(market, `${HOST}/mcp`).iconUrl).toBe(`${HOST}/favicon.svg`);
    expect(resourceMetadata(market, "mcp://tool/cex_market")).toEqual({ serviceName: "marketgate", tags: ["cex", "crypto", "market-data"] });
    // Not the tool's route (a sign-in 402 borrowing the top-up's requirements): no declaration.
    expect(
      discoveryExtensions(
        TOOLS.find((t) => t.name === "credits_top_up")!,
        `${HOST}/api/v1/credits/caps`,
      ),
    ).toEqual({});
    expect(
      discoveryExtensions(
        TOOLS.find((t) => t.name === "service_status")!,
        `${HOST}/api/v1/status`,
      ),
    ).toEqual({});
  });

  it("generates a typed client (openapi-typescript + openapi-fetch) that compiles under --strict and reads accepts[0].amount from a 402", async () => {
    writeFileSync(join(dir, "api.d.ts"), astToString(await openapiTS(doc)));
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    const program = `import createClient from "openapi-fetch";
import type { components, paths } from "./api";

type PaymentRequired = components["schemas"]["PaymentRequired"];

export async function main(baseUrl: string): Promise<string> {
  const client = createClient<paths>({ baseUrl });
  // A free endpoint, typed.
  const health = await client.GET("/health");
  const status: "ok" | undefined = health.data?.status;
  // A paid one: its 402 carries the v2 PaymentRequired in PAYMENT-REQUIRED and the v1 view in the body.
  const paid = await client.GET("/api/v1/market/{id}", { params: { path: { id: "bitcoin" } } });
  if (paid.response.status === 402) {
    const pr: PaymentRequired = JSON.parse(atob(paid.response.headers.get("PAYMENT-REQUIRED") ?? ""));
    const amount: string = pr.accepts[0].amount;
    const v1 = paid.error !== undefined && "x402Version" in paid.error ? paid.error.accepts[0].maxAmountRequired : undefined;
    return \`\${status} \${amount} \${v1 ?? ""}\`;
  }
  // The free quote types its payment_required the same way.
  const quote = await client.GET("/api/v1/quote", { params: { query: { path: "/api/v1/market/bitcoin" } } });
  const quoted: string | undefined = quote.data?.x402?.payment_required.accepts[0].amount;
  const prices = await client.GET("/api/v1/prices", { params: { query: { symbols: "btc" } } });
  const btc: number | undefined = prices.data?.data["btc"]?.price;
  return \`\${status} \${quoted ?? ""} \${btc ?? ""}\`;
}
`;
    writeFileSync(join(dir, "main.ts"), program);
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
      types: [],
      skipLibCheck: true,
    };
    const tsProgram = ts.createProgram([join(dir, "main.ts")], options);
    const diagnostics = ts.getPreEmitDiagnostics(tsProgram).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(diagnostics).toEqual([]);
    // The check has teeth: a typo in a path does not compile.
    writeFileSync(join(dir, "main.ts"), program.replace('"/health"', '"/healthz"'));
    const broken = ts.getPreEmitDiagnostics(ts.createProgram([join(dir, "main.ts")], options));
    expect(broken.length).toBeGreaterThan(0);
  }, 60_000);
});
