/**
 * Every code block with a language tag in README.md and docs/, and what test/docs/snippets.test.ts does with it.
 * A block is named by its page and a piece of its text (`has`). Each block must be named by exactly one entry,
 * and each entry must name one block, so a new block fails the test until it is listed here.
 *
 * - `sh`: run as written by `bash -e` in the checkout, against the sandbox, with the placeholders of
 *   test/docs/snippets.ts filled in; every output line it documents (its full-line comments) must be printed.
 * - `ts`: run as written by tsx in the checkout (relative imports resolve there); it must exit 0, or, for a
 *   client that keeps listening, print `until` first. `after` names a block of the same page it continues.
 * - `mcp-config`: an MCP host configuration: every server it lists is started (stdio) or reached (URL) with the
 *   official SDK client and lists its tools.
 * - `pinned`: not run here, for the reason given (what runs it elsewhere, or why it cannot run offline). The block
 *   is pinned by its sha256 (the first 12 hex digits): an edited block fails until someone checks it and updates it.
 */
export type CatalogEntry = { file: string; has: string } & (
  | { run: "sh"; payer?: number; exitCode?: number }
  | { run: "ts"; payer?: number; after?: string; times?: number; until?: RegExp }
  | { run: "mcp-config" }
  | { run: "pinned"; sha: string; why: string }
);

/** Why the host configurations of docs/mcp.md are not run here. */
const HOST_CONFIG = "a host configuration of marketgate connect (the published package name); test/docs/host-configs.test.ts launches it as its host would";

export const CATALOG: CatalogEntry[] = [
  // First: it probes every listed resource unpaid, which must answer 402 (not a cache hit a snippet paid for).
  { file: "docs/discovery.md", has: "npm run discovery-check", run: "sh" },
  // README: the tour, in the order a reader follows it, with one payer (#1) throughout.
  {
    file: "README.md",
    has: "npm ci && npm run sandbox\nnpm test",
    run: "pinned",
    sha: "6b4c06867ef9",
    why: "npm ci reinstalls, npm test is this suite; test/sandbox.test.ts runs the demo",
  },
  {
    file: "README.md",
    has: "npm run sandbox -- --no-demo",
    run: "pinned",
    sha: "0e67de6e0c2b",
    why: "the sandbox these tests run (src/sandbox/main.ts --no-demo, on free ports); test/sandbox/children.test.ts",
  },
  { file: "README.md", has: "curl -si 'http://localhost:4021/api/v1/prices", run: "sh" },
  // Twice: a second run within the cache TTL is a free hit, which the snippet must handle.
  { file: "README.md", has: "const payFetch = wrapFetchWithPayment", run: "ts", payer: 1, times: 2 },
  { file: "README.md", has: "wrapFetchWithSIWx(fetch, account)", run: "ts", payer: 1, after: "const payFetch = wrapFetchWithPayment" },
  // Twice: the second run is a cache hit, which the snippet prints as free.
  { file: "README.md", has: "client.tools.open_interest", run: "ts", payer: 1, times: 2 },
  { file: "README.md", has: "bin/marketgate.ts quote /futures/basis/SOL", run: "sh", payer: 1 },
  { file: "README.md", has: '"url": "http://127.0.0.1:4021/mcp"', run: "mcp-config" },
  { file: "README.md", has: "PUBLIC_URL=https://data.example.com FACILITATOR=", run: "pinned", sha: "78b30b732f50", why: "a deployment: your facilitator, live venues" },

  { file: "docs/client.md", has: 'client.topUp("1"', run: "ts", payer: 6 },
  {
    file: "docs/adding-a-tool.md",
    has: "export const openInterest = defineTool",
    run: "pinned",
    sha: "08e8fc805320",
    why: "an excerpt of a tools/ file; tools/*.ts are the real ones",
  },
  {
    file: "docs/alerts.md",
    has: 'crypto.createHmac("sha256", secret)',
    run: "pinned",
    sha: "c96e2ee9063e",
    why: "one expression of a receiver; verifyWebhookSignature computes it (test/alerts/webhook.test.ts)",
  },
  { file: "docs/cli.md", has: "marketgate quote '/api/v1/prices?symbols=btc,eth'", run: "sh", payer: 2 },
  { file: "docs/configuration.md", has: "FACILITATOR=self RELAYER_PRIVATE_KEY", run: "pinned", sha: "058a725b0042", why: "a deployment: your facilitator or relayer, live venues" },
  { file: "docs/credits.md", has: "setSpendControls(false)", run: "ts", payer: 3 },
  { file: "docs/examples.md", has: "pip install", run: "pinned", sha: "b4dd18a149cc", why: "Python: the x402 SDK comes from PyPI, which these machines cannot reach" },
  { file: "docs/examples.md", has: "x402ClientSync()", run: "pinned", sha: "0b2ff895ee8b", why: "Python: the x402 SDK comes from PyPI, which these machines cannot reach" },
  { file: "docs/mcp.md", has: '"--prefix", "/path/to/marketgate"', run: "mcp-config" },
  { file: "docs/mcp.md", has: '{ "mcpServers": { "marketgate": { "url": "http://127.0.0.1:4021/mcp" } } }', run: "mcp-config" },
  { file: "docs/mcp.md", has: "--package=/path/to/marketgate-0.1.0.tgz", run: "mcp-config" },
  // docs/mcp.md "Connect from a host": `npx -y marketgate connect` (the published name) and remote configurations
  // with a session token; test/docs/host-configs.test.ts launches each as its host would.
  { file: "docs/mcp.md", has: "--transport stdio --env X402_PRIVATE_KEY", run: "pinned", sha: "e854eb783a8d", why: HOST_CONFIG },
  { file: "docs/mcp.md", has: "claude mcp add --transport http", run: "pinned", sha: "17cbc29c45e6", why: HOST_CONFIG },
  { file: "docs/mcp.md", has: '"--max-usd-per-day", "2"', run: "pinned", sha: "d2749de3841e", why: HOST_CONFIG },
  { file: "docs/mcp.md", has: 'mcp"],\n      "env": { "X402_PRIVATE_KEY": "0xYOUR_KEY" }', run: "pinned", sha: "6944acd35ba1", why: HOST_CONFIG },
  { file: "docs/mcp.md", has: '"mcpServers": {\n    "marketgate": {\n      "url": "https://data.example.com/mcp"', run: "pinned", sha: "dc9e89f58a78", why: HOST_CONFIG },
  { file: "docs/mcp.md", has: '"id": "x402-key"', run: "pinned", sha: "a95ffe492bd5", why: HOST_CONFIG },
  { file: "docs/mcp.md", has: '"type": "http"', run: "pinned", sha: "c3457f4e0c8c", why: HOST_CONFIG },
  // After docs/credits.md: payer #3 has credits.
  { file: "docs/mcp.md", has: "marketgate://liquidations/ETH", run: "ts", payer: 3, until: /remaining_usd/ },
  { file: "docs/methods/coverage.md", has: '"exchanges_used"', run: "pinned", sha: "5c236e74a7e3", why: "fields of an answer, not input" },
  { file: "docs/operations/deploy.md", has: "marketgate doctor", run: "pinned", sha: "e13f5a5e1baf", why: "a deployment: your facilitator, live venues" },
  { file: "docs/operations/deploy.md", has: "docker build", run: "pinned", sha: "32712bd0a362", why: "Docker (test/deploy-files.test.ts checks the Dockerfile)" },
  { file: "docs/operations/deploy.md", has: "MPP_SECRET_KEY_FILE", run: "pinned", sha: "a982e46f8760", why: "Docker with secret files (test/lib/secret-files.test.ts)" },
  { file: "docs/operations/deploy.md", has: "docker compose up", run: "pinned", sha: "36d871f367e3", why: "Docker Compose (test/deploy-files.test.ts checks compose.yaml)" },
  {
    file: "docs/operations/deploy.md",
    has: "proxy_pass http://127.0.0.1:4021;",
    run: "pinned",
    sha: "1ea391c8734f",
    why: "nginx in front of a deployment (test/integration/nginx-proxy.test.ts)",
  },
  { file: "docs/operations/deploy.md", has: "reverse_proxy 127.0.0.1:4021", run: "pinned", sha: "4c69eb2708ff", why: "Caddy in front of a deployment" },
  { file: "docs/operations/deploy.md", has: "loadBalancer:", run: "pinned", sha: "dd86df3708cb", why: "Traefik in front of a deployment" },
  {
    file: "docs/operations/replicas.md",
    has: "REDIS_URL=redis://10.0.0.5:6379",
    run: "pinned",
    sha: "594f58e61663",
    why: "replicas of a deployment (test/replicas/ runs replicas on one Redis)",
  },
  { file: "docs/operations/replicas.md", has: "[Service]", run: "pinned", sha: "a66ed2bab12d", why: "a systemd unit of a deployment" },
  {
    file: "docs/receipts.md",
    has: "marketgate verify-receipt answer.http",
    run: "pinned",
    sha: "7f44efa53bf4",
    why: "a paid answer of a deployment (test/payments/receipts.test.ts verifies saved answers)",
  },
  {
    file: "docs/sandbox.md",
    has: "npm ci && npm run sandbox\nnpm test",
    run: "pinned",
    sha: "6b4c06867ef9",
    why: "npm ci reinstalls, npm test is this suite; test/sandbox.test.ts runs the demo",
  },
  {
    file: "docs/sandbox.md",
    has: "npm run sandbox -- --no-demo [--port 4021]",
    run: "pinned",
    sha: "c91d67dce8c1",
    why: "its options in brackets; these tests run it with --port, --chain-port and --solana-port",
  },
  { file: "docs/streams.md", has: '"reason":"a resume replays at most', run: "pinned", sha: "f1a3b95b9a4c", why: "an event's data, not input" },
  // After docs/credits.md: payer #3 has credits.
  { file: "docs/streams.md", has: "export URL=http://localhost:4021/stream/liquidations", run: "sh", payer: 3, exitCode: 28 },
  { file: "docs/streams.md", has: 'import { EventSource } from "eventsource"', run: "ts", payer: 3, until: /^paid /m },
];
