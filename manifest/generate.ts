import "../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { loadConfig } from "../src/config.js";
import { buildManifests } from "../src/docs/manifests.js";
import { paymentOffers, priceBook } from "../src/docs/pricing.js";
import { serviceInfo } from "../src/service.js";
import { STREAMS, TOOLS } from "../tools/index.js";

/** Where the source lives and where people read about it, for the MCP registry's `server.json`. */
export const REPOSITORY = { url: "https://github.com/marketgate/marketgate", source: "github" } as const;
export const WEBSITE_URL = "https://github.com/marketgate/marketgate#readme";
/** The MCP registry's one-line description (at most 100 characters). */
export const SERVER_DESCRIPTION = "Crypto market data for AI agents: prices, perp funding, CVD, liquidations, alerts; paid with x402";

/**
 * `server.json` with what the registry shows beside the package: the repository, the website and a
 * description of the whole catalogue (the generated one predates the perpetual, DEX and stream tools).
 */
function withListing(server: Record<string, unknown>): Record<string, unknown> {
  const { $schema, name, title, description: _generated, version, ...rest } = server;
  return { $schema, name, title, description: SERVER_DESCRIPTION, repository: REPOSITORY, websiteUrl: WEBSITE_URL, version, ...rest };
}

/** Folder of the generated manifests. */
export const MANIFEST_DIR = new URL("./", import.meta.url);

/**
 * Renders the manifests as they should be on disk. `payTo` and the public URL are deployment facts,
 * so the committed manifests leave them out (the live `/openapi.json` and `/.well-known/x402.json`
 * carry them). `lastUpdated` is kept from the committed x402.json unless its items changed.
 */
export async function renderManifests(): Promise<Record<string, string>> {
  const config = loadConfig({});
  const info = { ...serviceInfo(config), publicUrl: undefined };
  const prices = await priceBook(TOOLS, { network: config.payments.network, timeoutSec: config.payments.timeoutSec });
  const file = new URL("x402.json", MANIFEST_DIR);
  const previous = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { lastUpdated?: string }) : {};
  const render = (lastUpdated: string) =>
    Object.fromEntries(
      Object.entries(buildManifests(TOOLS, prices, info, lastUpdated, paymentOffers(config), STREAMS)).map(([name, doc]) => [
        name,
        `${JSON.stringify(name === "server.json" ? withListing(doc as Record<string, unknown>) : doc, null, 2)}\n`,
      ]),
    );
  const kept = render(previous.lastUpdated ?? new Date().toISOString());
  if (previous.lastUpdated && existsSync(file) && kept["x402.json"] !== readFileSync(file, "utf8")) return render(new Date().toISOString());
  return kept;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [name, text] of Object.entries(await renderManifests())) {
    writeFileSync(new URL(name, MANIFEST_DIR), text);
    process.stdout.write(`wrote manifest/${name}\n`);
  }
}
