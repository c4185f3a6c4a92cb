import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ICON_PATH } from "../payments/bazaar.js";
import type { ServiceInfo } from "./openapi.js";

/**
 * Absolute path of Scalar's standalone browser bundle, served at `/docs/scalar.js` so that `/docs` loads nothing
 * from a CDN. The file is `dist/browser/standalone.js` of `@scalar/api-reference`, vendored byte for byte in
 * `vendor/scalar/` (version and sha256 in `vendor/scalar/source.json`, refreshed by `vendor/scalar/update.sh`):
 * the package itself is a whole Vue application of about 295 installed packages, of which the service serves
 * this one file. Found from `src/docs/` (tsx) and from `dist/src/docs/` (built). Throws when it is missing.
 */
export function scalarBundlePath(): string {
  for (const rel of ["../../vendor/scalar/standalone.js", "../../../vendor/scalar/standalone.js"]) {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error("vendor/scalar/standalone.js is missing (bash vendor/scalar/update.sh <version> restores it)");
}

/** Escapes text for HTML element content and attribute values. */
function html(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Scalar's configuration: the document at `/openapi.json`; no web fonts, telemetry, AI agent or request
 * proxy (each would call a third-party host: "try it" requests go straight to this service,
 * the page's own origin); operation ids shown, since they are the MCP tool names. The page's favicon is the
 * service icon. Scalar's MCP button is pointed at this service's own `/mcp` (its VS Code and Cursor install
 * links and "Connect MCP" name it; {@link scalarConfig} sets it): without an `mcp` setting the
 * button would instead upload the document to Scalar's hosted service to generate a server there.
 */
const SCALAR_CONFIG = {
  url: "/openapi.json",
  favicon: ICON_PATH,
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  proxyUrl: "",
  showOperationId: true,
  hideClientButton: false,
  // Scalar's developer toolbar (shown on localhost by default) offers to share and deploy the document on
  // Scalar's hosted service: a third party, like the proxy and the agent above.
  showDeveloperTools: "never",
  documentDownloadType: "json",
  _integration: "express",
};

/**
 * {@link SCALAR_CONFIG} with the MCP button's server: `PUBLIC_URL`'s `/mcp` when it is known; otherwise the page's
 * script fills in its own origin's `/mcp` (Scalar needs an absolute URL for the install links).
 */
function scalarConfig(info: ServiceInfo): Record<string, unknown> {
  return { ...SCALAR_CONFIG, mcp: { name: info.name, ...(info.publicUrl ? { url: `${info.publicUrl.replace(/\/+$/, "")}/mcp` } : {}) } };
}

/**
 * `GET /docs`: a human-readable API reference. The page explains the payment flow in a few lines, then
 * Scalar (served locally at `/docs/scalar.js`) renders `/openapi.json` below it.
 */
export function apiReferenceHtml(info: ServiceInfo): string {
  const title = `${info.name} API reference`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${html(title)}</title>
<link rel="icon" type="image/svg+xml" href="${ICON_PATH}">
<meta name="description" content="${html(info.description)}">
<style>
  body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  .mg-intro { max-width: 860px; margin: 0 auto; padding: 24px 24px 8px; line-height: 1.5; }
  .mg-intro h1 { font-size: 1.6em; margin: 0 0 8px; }
  .mg-intro code { background: rgba(127, 127, 127, 0.15); padding: 0 4px; border-radius: 3px; }
  .mg-intro ol { padding-left: 1.4em; }
</style>
</head>
<body>
<section class="mg-intro" id="how-to-pay">
  <h1>${html(info.name)} ${html(info.version)}</h1>
  <p>${html(info.description)}</p>
  <p><strong>How paying works.</strong> There are no accounts and no API keys: each paid request is paid on its own, in USDC on Base.</p>
  <ol>
    <li>Call a paid endpoint without payment: the answer is <code>402 Payment Required</code>. Its <code>PAYMENT-REQUIRED</code> header holds the x402 requirements (amount, asset, <code>payTo</code>); <code>WWW-Authenticate: Payment</code> holds the MPP challenges. <code>GET /api/v1/quote?path=…</code> shows the same without calling.</li>
    <li>Pay: an x402 client (such as <code>@x402/fetch</code>) signs an EIP-3009 USDC authorization for exactly that amount and repeats the request with it in <code>PAYMENT-SIGNATURE</code>; or an MPP client sends <code>Authorization: Payment …</code>.</li>
    <li>The service runs the request, settles the payment on chain and answers <code>200</code> with the receipt in <code>PAYMENT-RESPONSE</code>. Errors are never charged; an identical request within the cache TTL is free.</li>
  </ol>
  <p><strong>Prepaid credits.</strong> Top up once with <code>POST /api/v1/credits</code> (paid with x402 or MPP), then sign each call with Sign-In-With-X (<code>SIGN-IN-WITH-X</code> header, e.g. <code>wrapFetchWithSIWx</code>): the price is debited from the balance with no chain transaction, and <code>X-Credits-Remaining</code> shows what is left.</p>
  <p>The same tools are served over MCP at <code>/mcp</code>. Machine-readable: <a href="/openapi.json">/openapi.json</a>, <a href="/.well-known/x402.json">/.well-known/x402.json</a>, <a href="/llms.txt">/llms.txt</a>, <a href="/llms-full.txt">/llms-full.txt</a>, <a href="/">endpoint index</a>.</p>
</section>
<div id="app"></div>
<script src="/docs/scalar.js"></script>
<script>
  const config = ${JSON.stringify(scalarConfig(info)).replace(/</g, "\\u003c")};
  config.mcp.url = config.mcp.url || new URL("/mcp", location.href).href;
  Scalar.createApiReference("#app", config);
</script>
</body>
</html>
`;
}
