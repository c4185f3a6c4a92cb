import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { hostname } from "node:os";
import ipaddr from "ipaddr.js";
import { validate as validateCron } from "node-cron";
import { z } from "zod";
import {
  COINGECKO_ENDPOINTS,
  DEXSCREENER_ENDPOINTS as DEXSCREENER,
  GECKOTERMINAL_ENDPOINTS as GECKOTERMINAL,
  LIVE_VENUE_HOSTS,
  REST_URL_SETTINGS,
  VENUE_REST_URLS,
  VENUE_WS_URLS,
  WS_URL_SETTINGS,
  type VenueRestSetting,
  type VenueRestUrls,
  type VenueWsUrls,
  type WsUrlSetting,
} from "./venues/endpoints.js";
import { redactSettingValue, scrubUrls, type SecretKind } from "./lib/redact.js";
import { readSecretFiles } from "./lib/secret-files.js";
import { MAX_UNPAID_SHARE_PCT, UNPAID_SHARE_PCT } from "./venues/dex/unpaid-share.js";

/** CAIP-2 network id, e.g. `eip155:8453` (Base mainnet). */
const Caip2 = z.string().regex(/^[a-z0-9-]+:[A-Za-z0-9-]+$/, "expected a CAIP-2 network id such as eip155:8453");
const EvmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte address");
const PrivateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 0x-prefixed 32-byte hex key");
/** Solana mainnet's CAIP-2 id (`SOLANA_MAINNET_CAIP2` of `@x402/svm`, not imported here to keep the package off the config path). */
export const SOLANA_MAINNET_CAIP2 = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
/** A Solana address: base58 of 32 bytes (32 to 44 characters). */
const SolanaAddress = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, "expected a base58 Solana address");
/** A Solana secret key in the wallet format: base58 of 64 bytes (87 or 88 characters). */
const SolanaSecretKey = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{86,88}$/, "expected a base58 64-byte Solana secret key (wallet format)");
/** A USD amount: a decimal string with at most 6 decimals (USDC's precision). */
const UsdAmount = z.string().regex(/^\d{1,9}(\.\d{1,6})?$/, "expected a USD amount such as 0.10 (at most 6 decimals)");
const Bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
/** Comma-separated TCP ports, e.g. `443,8443` (duplicates dropped). */
const PortList = z
  .string()
  .regex(/^\s*\d{1,5}(\s*,\s*\d{1,5})*\s*$/, "expected comma-separated TCP ports such as 443,8443")
  .transform((v) => [...new Set(v.split(",").map((p) => Number(p.trim())))])
  .refine((ports) => ports.every((p) => p >= 1 && p <= 65535), "ports must be between 1 and 65535");

/** Each venue REST base setting (`OKX_BASE_URL`, …) with its live default, from src/venues/<venue>/endpoints.ts. */
const VENUE_REST_SCHEMA = Object.fromEntries(VENUE_REST_URLS.map((u) => [u.setting, z.url().default(u.url)])) as {
  [S in VenueRestSetting]: z.ZodDefault<z.ZodURL>;
};
/** Each venue websocket base setting (`OKX_WS_URL`, …) with its live default. */
const VENUE_WS_SCHEMA = Object.fromEntries(VENUE_WS_URLS.map((u) => [u.setting, z.string().default(u.url)])) as { [S in WsUrlSetting]: z.ZodDefault<z.ZodString> };
/** Every venue URL setting is a secret of kind `url` (a self-hosted proxy's URL may carry a key). */
const VENUE_URL_SECRETS = Object.fromEntries([...VENUE_REST_URLS, ...VENUE_WS_URLS].map((u) => [u.setting, "url"])) as { readonly [S in VenueRestSetting | WsUrlSetting]: "url" };

/**
 * Environment variables read by the service. Every variable is optional except `PAY_TO` for `npm start`.
 * See docs/configuration.md for the meaning of each one.
 */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4021),
  HOST: z.string().default("0.0.0.0"),
  PUBLIC_URL: z.url().optional(),
  PUBLIC_ORIGINS: z.string().optional(),
  DATA_MODE: z.enum(["live", "sim"]).default("live"),
  SIM_REPLAY: z.enum(["on", "off"]).default("off"),
  PAY_TO: EvmAddress.optional(),
  NETWORK: Caip2.default("eip155:8453"),
  PAY_TO_SOLANA: SolanaAddress.optional(),
  SOLANA_RPC_URL: z.url().optional(),
  SOLANA_FEE_PAYER_PRIVATE_KEY: SolanaSecretKey.optional(),
  FACILITATOR: z.string().default("self"),
  FACILITATOR_AUTH_HEADER: z.string().optional(),
  FACILITATOR_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  RECONCILE_WINDOW_MS: z.coerce.number().int().min(0).default(15_000),
  RELAYER_PRIVATE_KEY: PrivateKey.optional(),
  SETTLE_RECEIPT_POLL_MS: z.coerce.number().int().min(10).max(10_000).default(250),
  RPC_URL: z.url().optional(),
  PAYMENT_TIMEOUT_SEC: z.coerce.number().int().min(10).max(3600).default(120),
  RATE_LIMIT_PER_MIN: z.coerce.number().int().min(1).default(500),
  FREE_RATE_LIMIT_PER_MIN: z.coerce.number().int().min(1).optional(),
  TRUST_PROXY: z.string().default("false"),
  CORS_ORIGINS: z.string().default("*"),
  CACHE_MAX_ENTRIES: z.coerce.number().int().min(100).default(10_000),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).default(8_000),
  REQUEST_DEADLINE_MS: z.coerce.number().int().min(100).default(10_000),
  CIRCUIT_FAILURES: z.coerce.number().int().min(1).default(5),
  CIRCUIT_HALF_OPEN_MS: z.coerce.number().int().min(10).default(30_000),
  COINGECKO_BASE_URL: z.url().optional(),
  // Venue base URLs and their defaults are stated once, in src/venues/<venue>/endpoints.ts.
  ...VENUE_REST_SCHEMA,
  GECKOTERMINAL_CALLS_PER_MIN: z.coerce.number().int().min(1).default(GECKOTERMINAL.rest.api.callsPerMin),
  DEXSCREENER_CALLS_PER_MIN: z.coerce.number().int().min(1).default(DEXSCREENER.rest.api.callsPerMin),
  TOKEN_CHECK_SHARE_PCT: z.coerce.number().int().min(0).max(MAX_UNPAID_SHARE_PCT).default(UNPAID_SHARE_PCT),
  TOKEN_CHECKS_PER_MIN: z.coerce.number().int().min(1).max(100_000).default(30),
  COINGECKO_API_KEY: z.string().optional(),
  COINGECKO_PLAN: z.enum(["public", "demo", "pro"]).optional(),
  COINGECKO_CALLS_PER_MIN: z.coerce.number().int().min(1).optional(),
  MCP_PAYMENTS: Bool.optional(),
  MCP_TOOLSETS: z.string().optional(),
  STREAMS: z.enum(["on", "off"]).default("on"),
  DATA_DIR: z.string().default(".data"),
  STREAM_MAX_ON_DEMAND: z.coerce.number().int().min(0).max(500).default(20),
  STREAM_IDLE_MIN: z.coerce.number().min(1).default(30),
  STREAM_WARMUP_SEC: z.coerce.number().min(0).default(10),
  STREAM_WARMUPS_PER_MIN: z.coerce.number().int().min(1).max(10_000).default(10),
  ...VENUE_WS_SCHEMA,
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "expected redis://host:port or rediss://…")
    .optional(),
  REDIS_PREFIX: z.string().min(1).max(40).default("mg:"),
  REPLICA_ID: z.string().min(1).max(100).optional(),
  LEASE_TTL_MS: z.coerce.number().int().min(500).max(120_000).default(10_000),
  ALERTS: z.enum(["on", "off"]).default("on"),
  CREDITS: z.enum(["on", "off"]).default("on"),
  CREDITS_MIN_TOP_UP_USD: UsdAmount.default("0.10"),
  CREDITS_MAX_TOP_UP_USD: UsdAmount.default("100"),
  CREDITS_CAP_PER_CALL_USD: UsdAmount.optional(),
  CREDITS_CAP_PER_HOUR_USD: UsdAmount.optional(),
  CREDITS_CAP_PER_DAY_USD: UsdAmount.optional(),
  CREDITS_REFUND: z.enum(["on", "off"]).default("off"),
  CREDITS_REFUND_CONFIRM_MS: z.coerce.number().int().min(0).max(300_000).default(30_000),
  CREDITS_SESSION_SECRET: z.string().min(32, "CREDITS_SESSION_SECRET must be at least 32 characters").optional(),
  CREDITS_SESSION_TTL_SEC: z.coerce.number().int().min(0).max(3600).default(300),
  LIVE_STREAMS_MAX: z.coerce.number().int().min(1).max(100_000).default(1000),
  LIVE_STREAMS_PER_WALLET: z.coerce.number().int().min(1).max(1000).default(5),
  LIVE_STREAM_BUFFER_KB: z.coerce.number().int().min(16).max(65_536).default(1024),
  LIVE_STREAM_MINUTE_MS: z.coerce.number().int().min(500).max(60_000).default(60_000),
  LIVE_HEARTBEAT_SEC: z.coerce.number().int().min(1).max(300).default(15),
  LIVE_FUNDING_POLL_SEC: z.coerce.number().int().min(1).max(600).default(15),
  LIVE_RESUME_WINDOW_SEC: z.coerce.number().int().min(0).max(86_400).default(600),
  ALERT_EVAL_CRON: z
    .string()
    .default("*/30 * * * * *")
    .refine((v) => validateCron(v), "expected a node-cron expression such as */30 * * * * *"),
  ALERT_COOLDOWN_MIN: z.coerce.number().min(0).default(15),
  ALERT_MAX_ACTIVE: z.coerce.number().int().min(1).default(50_000),
  ALERT_DISPATCH_POLL_MS: z.coerce.number().int().min(10).default(1000),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(6),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).default(10_000),
  WEBHOOK_ALLOW_LOOPBACK: Bool.default(false),
  WEBHOOK_ALLOWED_PORTS: PortList.default([443]),
  WEBHOOK_EXTRA_CA_FILE: z.string().optional(),
  MPP: z.enum(["on", "off"]).default("on"),
  MPP_SECRET_KEY: z.string().min(32, "MPP_SECRET_KEY must be at least 32 characters").optional(),
  MPP_REALM: z.string().min(1).optional(),
  MPP_METHODS: z.string().default("evm,tempo"),
  MPP_CHALLENGES: z.enum(["negotiated", "always"]).default("negotiated"),
  MPP_TEMPO_CURRENCY: EvmAddress.default("0x20C000000000000000000000b9537d11c60E8b50"),
  MPP_TEMPO_RECIPIENT: EvmAddress.optional(),
  MPP_TEMPO_CHAIN_ID: z.coerce.number().int().positive().default(4217),
  RECEIPTS: z.enum(["on", "off"]).default("on"),
  RECEIPT_SIGNING_KEY: z.string().optional(),
  RECEIPT_PREVIOUS_KEYS: z.string().optional(),
});

/** How each secret setting's value is kept out of logs and messages (defined beside the scrubber, src/lib/redact.ts). */
export type { SecretKind };

/**
 * Every setting whose value is, or may contain, a credential. The single list the log scrubber registers
 * at start-up (`registerConfigSecrets`) and test/lib/secret-logs.test.ts checks against every log line of a
 * running service: a new secret setting is added here and nowhere else.
 */
export const SECRET_SETTINGS = {
  FACILITATOR: "urls",
  FACILITATOR_AUTH_HEADER: "header",
  RELAYER_PRIVATE_KEY: "value",
  RPC_URL: "url",
  SOLANA_RPC_URL: "url",
  SOLANA_FEE_PAYER_PRIVATE_KEY: "value",
  COINGECKO_BASE_URL: "url",
  ...VENUE_URL_SECRETS,
  COINGECKO_API_KEY: "value",
  REDIS_URL: "url",
  CREDITS_SESSION_SECRET: "value",
  MPP_SECRET_KEY: "value",
  RECEIPT_SIGNING_KEY: "value",
} as const satisfies Partial<Record<keyof typeof EnvSchema.shape, SecretKind>>;

/** The name of a secret setting. */
export type SecretSetting = keyof typeof SECRET_SETTINGS;

/** Every setting the service reads (the environment schema's keys), e.g. for checks that each is documented or classified. */
export const SETTING_NAMES = Object.keys(EnvSchema.shape) as ReadonlyArray<keyof typeof EnvSchema.shape>;

/** Which upstreams the service talks to: the real venues, or the local venue simulator. */
export type DataMode = "live" | "sim";

/** One facilitator: an HTTP facilitator, or `self` (in-process, settling with the operator's relayer key). */
export type FacilitatorConfig =
  | { kind: "http"; url: string; authHeader?: { name: string; value: string } }
  | {
      kind: "self";
      rpcUrl: string;
      relayerPrivateKey: `0x${string}`;
      /** How often settle polls for a receipt not there yet, ms. */
      receiptPollMs: number;
      /** Solana settlement (`SOLANA_RPC_URL`, `SOLANA_FEE_PAYER_PRIVATE_KEY`), when both are set. */
      solana?: { rpcUrl: string; feePayerPrivateKey: string };
    };

/** CoinGecko plan: the base URL, the key header and our client-side budget depend on it. */
export interface CoinGeckoConfig {
  baseUrl: string;
  apiKey?: string;
  plan: "public" | "demo" | "pro";
  /** Client-side request budget per minute, kept under the plan's published limit. */
  callsPerMin: number;
}

/** The resolved service configuration. */
export interface Config {
  /** The values of the {@link SECRET_SETTINGS} that are set (defaults included), each with its kind: what the log scrubber registers. */
  secrets: ReadonlyArray<{ setting: SecretSetting; kind: SecretKind; value: string }>;
  port: number;
  host: string;
  /**
   * Public base URL used in x402 `resource.url` and discovery documents (no trailing slash); its origin is
   * the one SIWX proofs and credits sessions are bound to (src/lib/public-origins.ts).
   */
  publicUrl?: string;
  /** `PUBLIC_ORIGINS`: further origins (`scheme://host[:port]`) of the same service, selected by a request's Host. */
  publicOrigins?: string[];
  dataMode: DataMode;
  /**
   * `SIM_REPLAY=on` (sim mode only; the sandbox sets it with `--replay`): the simulator replays real recordings on
   * some endpoints. Answers built on them are labelled `X-Data-Source: replay` (the simulator marks them), and
   * `/api/v1/status` shows replay and the endpoints seen replayed.
   */
  simReplay: boolean;
  /** `DATA_DIR`: folder of the service's files (databases, the last `marketgate doctor` summary); `:memory:` for none. */
  dataDir: string;
  payments: {
    /** Recipient of every payment. Undefined only where payments are off (stdio MCP, manifest generation). */
    payTo?: `0x${string}`;
    network: `${string}:${string}`;
    /** Facilitators in failover order (empty when none is usable). */
    facilitators: FacilitatorConfig[];
    /** Per-call timeout for facilitator requests. */
    facilitatorTimeoutMs: number;
    /** Base RPC used to reconcile settlements of unknown outcome (and by the `self` facilitator). */
    rpcUrl?: string;
    /** How long an unknown settlement is reconciled on chain before answering 502. */
    reconcileWindowMs: number;
    /** `maxTimeoutSeconds` of the x402 requirements: how long a signed authorization stays usable. */
    timeoutSec: number;
    /** The second network, Solana `exact` (USDC), offered when `PAY_TO_SOLANA` is set. */
    solana?: { payTo: string; network: `${string}:${string}` };
  };
  /** Requests per minute per client (IPv4 address or IPv6 /64) that reach a venue (cache misses). */
  rateLimitPerMin: number;
  /**
   * Requests per minute per client to free routes that do work without a cache in front (the quote
   * endpoint). Default 5 × {@link Config.rateLimitPerMin}.
   */
  freeRateLimitPerMin: number;
  /**
   * Express `trust proxy` value: `false` (directly exposed), a hop count, or the proxies' addresses and
   * subnets (IPs, CIDRs, `loopback`, `linklocal`, `uniquelocal`). Never `true`: see {@link parseTrustProxy}.
   */
  trustProxy: false | number | string[];
  corsOrigins: string[] | "*";
  cacheMaxEntries: number;
  upstreamTimeoutMs: number;
  /** Cap on the venue time of one request (every venue call, retry and wait included), ms. */
  requestDeadlineMs: number;
  /** Per-venue circuit breakers: consecutive unhealthy calls that open one, and how long it stays open. */
  circuit: { failures: number; halfOpenAfterMs: number };
  coingecko: CoinGeckoConfig;
  /** REST base URLs of the perp venues (the simulator's in sim mode). No trailing slash. */
  venues: VenueRestUrls;

  /** GeckoTerminal request budget per minute (its public limit is 30; default 20). */
  geckoterminalCallsPerMin: number;
  /** DexScreener request budget per minute (its limit is 300; default 250). */
  dexscreenerCallsPerMin: number;
  /**
   * Token lookups' checks before payment (docs/methods/dex-tokens.md): the percent of the GeckoTerminal and
   * DexScreener budgets they may spend (`TOKEN_CHECK_SHARE_PCT`, 0–50, default 20), and the checks that need an
   * upstream call one client may make per minute (`TOKEN_CHECKS_PER_MIN`, default 30; beyond, a 429).
   */
  tokenChecks: { sharePct: number; perClientPerMin: number };
  /**
   * Signed offers, receipts and content signatures on paid answers (`RECEIPTS=on`, default; undefined when
   * off): `RECEIPT_SIGNING_KEY` (hex Ed25519 seed; unset: generated under `DATA_DIR`) and the retired keys
   * still published, `RECEIPT_PREVIOUS_KEYS` (parsed by src/payments/receipts/keys.ts; docs/receipts.md).
   */
  receipts?: { signingKey?: string; previousKeys?: string; dataDir: string };
  /** MPP beside x402 (undefined when off). `secretKeyGenerated`: no MPP_SECRET_KEY was set. */
  mpp?: {
    secretKey: string;
    secretKeyGenerated: boolean;
    realm: string;
    methods: Array<"evm" | "tempo">;
    /** `MPP_CHALLENGES`: which 402s carry MPP challenges (src/payments/mpp.ts, `MppGate.methodsFor`; docs/payments.md). */
    challenges: "negotiated" | "always";
    tempo: { currency: `0x${string}`; recipient?: `0x${string}`; chainId: number };
  };
  /** Live trade and liquidation streams (CVD, recent liquidations); undefined when `STREAMS=off`. */
  streams?: {
    /** Folder of the SQLite file that keeps 7 days of CVD buckets and 24 h of liquidations (`:memory:` for none). */
    dataDir: string;
    maxOnDemand: number;
    idleMs: number;
    warmupMs: number;
    /** New on-demand symbols one client may warm up per minute (`STREAM_WARMUPS_PER_MIN`). */
    warmupsPerMin: number;
    /** Websocket bases; the feeds append the venues' real paths. */
    wsUrls: VenueWsUrls;
  };
  /** Whether MCP over stdio charges for paid tools (off by default: it is the operator's own agent). */
  mcpStdioPayments: boolean;
  /** `MCP_TOOLSETS`: the toolsets stdio MCP lists (comma-separated, mcp/toolsets.ts); undefined = the default ones. */
  mcpToolsets?: string;
  /** Shared state of several replicas; undefined (embedded state) without `REDIS_URL`. */
  redis?: {
    url: string;
    prefix: string;
    /** This replica's identity in leases (default `<hostname>-<pid>-<random>`). */
    replicaId: string;
    /** Leadership lease lifetime T: a killed leader is replaced within T + 50 ms (`leaseTimings` in src/state/lease.ts). */
    leaseTtlMs: number;
  };
  /**
   * Prepaid credits (SIWX + one x402 top-up); undefined when `CREDITS=off`. Amounts are decimal USD
   * strings; caps apply to every wallet (a wallet may set lower ones of its own).
   */
  credits?: {
    dataDir: string;
    minTopUpUsd: string;
    maxTopUpUsd: string;
    capPerCallUsd?: string;
    capPerHourUsd?: string;
    capPerDayUsd?: string;
    /** `CREDITS_REFUND=on`: unspent balances are paid back on a signed request. */
    refund: boolean;
    /** How long a refund request waits for its transfer's receipt before answering 202 `pending`, ms. */
    refundConfirmMs: number;
    /** HMAC key of credits session tokens (shared by every replica); undefined = a per-process key. */
    sessionSecret?: string;
    /** Lifetime of a session token; 0 turns sessions off (every call signs). */
    sessionTtlSec: number;
  };
  /**
   * Paid live streams (SSE `/stream/*`, WebSocket `/ws`): limits and billing period. They need the live
   * stores (`STREAMS`) for liquidations and CVD; funding is polled from the venues.
   */
  live: {
    /** Open streams (SSE connections plus WebSocket subscriptions) per process. */
    maxStreams: number;
    /** Open streams per wallet, per process. */
    maxPerWallet: number;
    /** Bytes a subscriber may leave unread before it is dropped as a slow consumer. */
    bufferMaxBytes: number;
    /** Length of one billed stream-minute, ms (60,000; shorter only in tests and demos). */
    minuteMs: number;
    heartbeatMs: number;
    /** How often a funding stream polls its symbol's venues, ms. */
    fundingPollMs: number;
    /** A resume (`Last-Event-ID`) replays only events of this last span, ms (`LIVE_RESUME_WINDOW_SEC`). */
    resumeWindowMs: number;
  };
  /** Liquidation and price alerts; undefined when `ALERTS=off`. */
  alerts?: {
    /** `DATA_DIR`: the alert database is `<dataDir>/alerts.sqlite` (`:memory:` keeps it in memory). */
    dataDir: string;
    evalCron: string;
    cooldownMs: number;
    maxActive: number;
    dispatchPollMs: number;
    webhook: {
      timeoutMs: number;
      /** Loopback webhook targets allowed: tests and the offline sandbox only. */
      allowLoopback: boolean;
      /** Ports webhook URLs may name (`WEBHOOK_ALLOWED_PORTS`, default 443); loopback targets under `allowLoopback` may use any. */
      allowedPorts: number[];
      /** Extra CA certificate (PEM) trusted for webhook TLS, beside the system roots: tests and the sandbox only. */
      extraCa?: string;
    };
    retry: { maxAttempts: number; baseDelayMs: number; factor: number };
  };
}

/** CoinGecko's base URL and our budget per plan (src/venues/coingecko/endpoints.ts). */
const COINGECKO_PLANS = COINGECKO_ENDPOINTS.rest;

const trimSlash = (u: string) => u.replace(/\/+$/, "");

/** The `Config` record of venue URL settings `urls` (`Config.venues`, `streams.wsUrls`): each key's setting, without a trailing slash. */
function venueUrls<K extends string, S extends string>(urls: ReadonlyArray<{ key: K; setting: S }>, e: Readonly<Record<S, string>>): Record<K, string> {
  return Object.fromEntries(urls.map((u) => [u.key, trimSlash(e[u.setting])])) as Record<K, string>;
}

/** Names express (proxy-addr) expands to address ranges in `trust proxy`. */
const TRUST_PROXY_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/**
 * Whether `entry` is a `trust proxy` list element express accepts: a range name, an IP, or `ip/prefix`
 * (IPv4 also `ip/netmask`). A zero-length prefix (`0.0.0.0/0`, `::/0`) trusts everyone, like `true`.
 */
function validTrustEntry(entry: string): boolean {
  if (TRUST_PROXY_NAMES.has(entry)) return true;
  const slash = entry.lastIndexOf("/");
  const addr = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(addr);
  if (family === 0) return false;
  if (slash === -1) return true;
  const range = entry.slice(slash + 1);
  if (/^\d+$/.test(range)) return Number(range) >= 1 && Number(range) <= (family === 4 ? 32 : 128);
  if (family !== 4 || isIP(range) !== 4) return false;
  const bits = ipaddr.IPv4.parse(range).prefixLengthFromSubnetMask();
  return bits !== null && bits >= 1;
}

/**
 * Parses `TRUST_PROXY` into an express `trust proxy` value: `false` (or `0`), a hop count >= 1, or a
 * comma-separated list of proxy addresses/subnets (see {@link validTrustEntry}).
 *
 * `true` is refused: it makes express believe the left-most `X-Forwarded-For` entry, which the client
 * writes, so every client could pick a fresh address per request and escape the per-client rate limits.
 * @throws ConfigError for `true`, an invalid list entry or anything else.
 */
function parseTrustProxy(raw: string): false | number | string[] {
  const value = raw.trim();
  if (value === "true") {
    throw new ConfigError([
      "TRUST_PROXY=true lets every client choose its own address with X-Forwarded-For (and so escape the rate limit): set the number of proxy hops in front of the service (e.g. 1, only when the port is not reachable directly) or the proxies' addresses/subnets (e.g. loopback,10.0.0.0/8), as express recommends",
    ]);
  }
  if (value === "false" || value === "0") return false;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(",").map((s) => s.trim());
  const bad = entries.filter((e) => !validTrustEntry(e));
  if (bad.length) {
    throw new ConfigError([
      `TRUST_PROXY must be false, a hop count or a comma-separated list of IPs, subnets (CIDR) or loopback/linklocal/uniquelocal; not valid: ${bad.map((b) => JSON.stringify(b)).join(", ")}`,
    ]);
  }
  return entries;
}

/**
 * `PAY_TO_SOLANA` needs a facilitator that settles on Solana: any facilitator URL may (CDP's does; the
 * catalogue checks its `/supported` at start-up), `self` only with `SOLANA_RPC_URL` and `SOLANA_FEE_PAYER_PRIVATE_KEY`.
 */
function checkSolanaSettles(env: z.infer<typeof EnvSchema>): void {
  if (!env.PAY_TO_SOLANA || (env.SOLANA_RPC_URL && env.SOLANA_FEE_PAYER_PRIVATE_KEY)) return;
  const entries = env.FACILITATOR.split(",").map((s) => s.trim());
  if (entries.some((f) => f !== "self" && f !== "")) return;
  throw new ConfigError(["PAY_TO_SOLANA with FACILITATOR=self needs SOLANA_RPC_URL and SOLANA_FEE_PAYER_PRIVATE_KEY (the fee payer's base58 secret key, funded with SOL)"]);
}

function parseFacilitators(env: z.infer<typeof EnvSchema>): FacilitatorConfig[] {
  checkSolanaSettles(env);
  let authHeader: { name: string; value: string } | undefined;
  if (env.FACILITATOR_AUTH_HEADER) {
    const i = env.FACILITATOR_AUTH_HEADER.indexOf(":");
    if (i <= 0) throw new ConfigError(["FACILITATOR_AUTH_HEADER must look like 'Name: value'"]);
    authHeader = { name: env.FACILITATOR_AUTH_HEADER.slice(0, i).trim(), value: env.FACILITATOR_AUTH_HEADER.slice(i + 1).trim() };
  }
  const out: FacilitatorConfig[] = [];
  const entries = env.FACILITATOR.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const [i, entry] of entries.entries()) {
    if (entry === "self") {
      if (!env.RELAYER_PRIVATE_KEY || !env.RPC_URL) continue;
      const solana = env.SOLANA_RPC_URL && env.SOLANA_FEE_PAYER_PRIVATE_KEY ? { rpcUrl: env.SOLANA_RPC_URL, feePayerPrivateKey: env.SOLANA_FEE_PAYER_PRIVATE_KEY } : undefined;
      out.push({
        kind: "self",
        rpcUrl: env.RPC_URL,
        relayerPrivateKey: env.RELAYER_PRIVATE_KEY as `0x${string}`,
        receiptPollMs: env.SETTLE_RECEIPT_POLL_MS,
        ...(solana ? { solana } : {}),
      });
      continue;
    }
    const url = z.url({ protocol: /^https?$/ }).safeParse(entry);
    // A facilitator URL may carry an API key in its user info, path or query: the value is never quoted whole.
    if (!url.success) throw new ConfigError([`FACILITATOR entries must be "self" or http(s) URLs; entry ${i + 1} is not (${redactSettingValue(entry)})`]);
    out.push({ kind: "http", url: url.data, ...(authHeader ? { authHeader } : {}) });
  }
  return out;
}

function parseMpp(e: z.infer<typeof EnvSchema>): NonNullable<Config["mpp"]> {
  const methods = e.MPP_METHODS.split(",")
    .map((m) => m.trim())
    .filter(Boolean);
  const bad = methods.filter((m) => m !== "evm" && m !== "tempo");
  if (bad.length || methods.length === 0) throw new ConfigError([`MPP_METHODS must list evm and/or tempo, got ${e.MPP_METHODS}`]);
  return {
    secretKey: e.MPP_SECRET_KEY ?? randomBytes(32).toString("hex"),
    secretKeyGenerated: !e.MPP_SECRET_KEY,
    realm: e.MPP_REALM ?? (e.PUBLIC_URL ? new URL(e.PUBLIC_URL).host : "marketgate"),
    methods: methods as Array<"evm" | "tempo">,
    challenges: e.MPP_CHALLENGES,
    tempo: { currency: e.MPP_TEMPO_CURRENCY as `0x${string}`, recipient: e.MPP_TEMPO_RECIPIENT as `0x${string}` | undefined, chainId: e.MPP_TEMPO_CHAIN_ID },
  };
}

/**
 * `PUBLIC_URL` without a trailing slash: an http(s) URL without credentials, query or fragment (its origin
 * binds SIWX proofs, its path prefixes every absolute URL). @throws ConfigError otherwise.
 */
function parsePublicUrl(raw: string): string {
  const u = new URL(raw);
  const faults = [
    ...(u.protocol !== "https:" && u.protocol !== "http:" ? [`the scheme ${u.protocol}`] : []),
    ...(u.username || u.password ? ["credentials"] : []),
    ...(u.search ? ["a query"] : []),
    ...(u.hash ? ["a fragment"] : []),
  ];
  if (faults.length) {
    throw new ConfigError([
      `PUBLIC_URL must be the http(s) URL clients use, without credentials, query or fragment (e.g. https://data.example.com); this one has ${faults.join(" and ")} (${redactSettingValue(raw)})`,
    ]);
  }
  return raw.replace(/\/+$/, "");
}

/**
 * `PUBLIC_ORIGINS`: a comma-separated list of further `scheme://host[:port]` origins (no path), each with
 * its own host. They need `PUBLIC_URL` (the primary origin). @throws ConfigError otherwise.
 */
function parsePublicOrigins(raw: string | undefined, publicUrl: string | undefined): string[] {
  const entries = (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!entries.length) return [];
  if (!publicUrl) throw new ConfigError(["PUBLIC_ORIGINS needs PUBLIC_URL (the primary origin; PUBLIC_ORIGINS lists further ones)"]);
  const hosts = new Set([new URL(publicUrl).host]);
  return entries.map((entry) => {
    let u: URL | undefined;
    try {
      u = new URL(entry);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== "https:" && u.protocol !== "http:") || u.username || u.password || u.search || u.hash || u.pathname !== "/") {
      throw new ConfigError([`PUBLIC_ORIGINS entries must be origins such as https://data.example.com (scheme, host and port only), got ${redactSettingValue(entry)}`]);
    }
    if (hosts.has(u.host)) throw new ConfigError([`PUBLIC_ORIGINS: ${u.host} is listed twice (with PUBLIC_URL): each origin needs a host of its own`]);
    hosts.add(u.host);
    return u.origin;
  });
}

/** The PEM text of `WEBHOOK_EXTRA_CA_FILE`. @throws ConfigError when it cannot be read. */
function readCa(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError([`WEBHOOK_EXTRA_CA_FILE: cannot read ${path}: ${(err as Error).message}`]);
  }
}

/**
 * Venue REST base URLs, and the stream websocket bases (needed while `STREAMS=on`): explicit in sim mode.
 * Listed by the venues (src/venues/endpoints.ts); typed as settings this schema reads, so a venue cannot name one it lacks.
 */
const SIM_REST_URLS: ReadonlyArray<keyof typeof EnvSchema.shape> = REST_URL_SETTINGS;
const SIM_WS_URLS: ReadonlyArray<keyof typeof EnvSchema.shape> = WS_URL_SETTINGS;

/**
 * `DATA_MODE=sim` labels every answer simulated, so every venue base URL (REST, and the websockets while
 * streams are on) must be set explicitly to a simulator (e.g. on loopback, as `simEnv` does) and none may
 * name a real venue's host: otherwise the service would call the real venues and label their data simulated.
 * @throws ConfigError listing every missing or live URL.
 */
function checkSimUrls(env: Record<string, string | undefined>, streams: boolean): void {
  const names = [...SIM_REST_URLS, ...(streams ? SIM_WS_URLS : [])];
  const missing = names.filter((n) => !env[n]?.trim());
  const live = names.filter((n) => {
    const v = env[n]?.trim();
    if (!v) return false;
    try {
      return LIVE_VENUE_HOSTS.has(new URL(v).hostname);
    } catch {
      return false; // an invalid URL is reported by the schema
    }
  });
  const problems: string[] = [];
  if (missing.length) {
    problems.push(
      `DATA_MODE=sim needs every venue base URL set explicitly to a simulator (e.g. http://127.0.0.1:<port>/…), or it would call the real venues and label their answers simulated; missing: ${missing.join(", ")}. Use \`marketgate mcp --sim\` or \`npm run sandbox\`, which start the simulator and set them.`,
    );
  }
  if (live.length) problems.push(`DATA_MODE=sim with a real venue's URL (answers would be live data labelled simulated): ${live.join(", ")}`);
  if (problems.length) throw new ConfigError(problems);
}

/**
 * Thrown when the configuration is invalid; `problems` lists every bad setting at once. Start-up prints
 * the message, so every URL in a problem is shown as `scheme://host/…` (user info, path and query may hold
 * a key; src/lib/redact.ts): a problem that quotes a value not shaped as a URL uses `redactSettingValue`.
 */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    const shown = problems.map(scrubUrls);
    super(`Invalid configuration:\n  - ${shown.join("\n  - ")}`);
    this.name = "ConfigError";
    this.problems = shown;
  }
}

/**
 * Reads the configuration from environment variables. Every secret setting `X` ({@link SECRET_SETTINGS}) may
 * instead be read from the file named by `X_FILE` (Docker and Kubernetes secrets; src/lib/secret-files.ts).
 * @throws ConfigError listing every invalid variable.
 */
export function loadConfig(rawEnv: Record<string, string | undefined> = process.env): Config {
  const files = readSecretFiles(rawEnv, Object.keys(SECRET_SETTINGS));
  if (files.problems.length) throw new ConfigError(files.problems);
  const env = files.env;
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  }
  const e = parsed.data;
  if (e.SIM_REPLAY === "on" && e.DATA_MODE !== "sim") throw new ConfigError(["SIM_REPLAY=on needs DATA_MODE=sim (only the simulator replays recordings)"]);
  if (e.DATA_MODE === "sim") checkSimUrls(env, e.STREAMS === "on");
  const plan = e.COINGECKO_PLAN ?? (e.COINGECKO_API_KEY ? "demo" : "public");
  return {
    secrets: (Object.entries(SECRET_SETTINGS) as Array<[SecretSetting, SecretKind]>).flatMap(([setting, kind]) => (e[setting] ? [{ setting, kind, value: e[setting] }] : [])),
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.PUBLIC_URL ? parsePublicUrl(e.PUBLIC_URL) : undefined,
    publicOrigins: parsePublicOrigins(e.PUBLIC_ORIGINS, e.PUBLIC_URL),
    dataMode: e.DATA_MODE,
    simReplay: e.SIM_REPLAY === "on",
    dataDir: e.DATA_DIR,
    payments: {
      payTo: e.PAY_TO as `0x${string}` | undefined,
      network: e.NETWORK as `${string}:${string}`,
      facilitators: parseFacilitators(e),
      facilitatorTimeoutMs: e.FACILITATOR_TIMEOUT_MS,
      rpcUrl: e.RPC_URL,
      reconcileWindowMs: e.RECONCILE_WINDOW_MS,
      timeoutSec: e.PAYMENT_TIMEOUT_SEC,
      ...(e.PAY_TO_SOLANA ? { solana: { payTo: e.PAY_TO_SOLANA, network: SOLANA_MAINNET_CAIP2 } } : {}),
    },
    rateLimitPerMin: e.RATE_LIMIT_PER_MIN,
    freeRateLimitPerMin: e.FREE_RATE_LIMIT_PER_MIN ?? 5 * e.RATE_LIMIT_PER_MIN,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    corsOrigins:
      e.CORS_ORIGINS === "*"
        ? "*"
        : e.CORS_ORIGINS.split(",")
            .map((s) => s.trim())
            .filter(Boolean),
    cacheMaxEntries: e.CACHE_MAX_ENTRIES,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    requestDeadlineMs: e.REQUEST_DEADLINE_MS,
    circuit: { failures: e.CIRCUIT_FAILURES, halfOpenAfterMs: e.CIRCUIT_HALF_OPEN_MS },
    coingecko: {
      baseUrl: (e.COINGECKO_BASE_URL ?? COINGECKO_PLANS[plan].url).replace(/\/+$/, ""),
      apiKey: e.COINGECKO_API_KEY,
      plan,
      callsPerMin: e.COINGECKO_CALLS_PER_MIN ?? COINGECKO_PLANS[plan].callsPerMin,
    },
    venues: venueUrls(VENUE_REST_URLS, e),
    geckoterminalCallsPerMin: e.GECKOTERMINAL_CALLS_PER_MIN,
    dexscreenerCallsPerMin: e.DEXSCREENER_CALLS_PER_MIN,
    tokenChecks: { sharePct: e.TOKEN_CHECK_SHARE_PCT, perClientPerMin: e.TOKEN_CHECKS_PER_MIN },
    mcpStdioPayments: e.MCP_PAYMENTS ?? false,
    mcpToolsets: e.MCP_TOOLSETS,
    mpp: e.MPP === "off" ? undefined : parseMpp(e),
    receipts: e.RECEIPTS === "off" ? undefined : { signingKey: e.RECEIPT_SIGNING_KEY, previousKeys: e.RECEIPT_PREVIOUS_KEYS, dataDir: e.DATA_DIR },
    redis: e.REDIS_URL
      ? { url: e.REDIS_URL, prefix: e.REDIS_PREFIX, replicaId: e.REPLICA_ID ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`, leaseTtlMs: e.LEASE_TTL_MS }
      : undefined,
    credits:
      e.CREDITS === "off"
        ? undefined
        : {
            dataDir: e.DATA_DIR,
            minTopUpUsd: e.CREDITS_MIN_TOP_UP_USD,
            maxTopUpUsd: e.CREDITS_MAX_TOP_UP_USD,
            capPerCallUsd: e.CREDITS_CAP_PER_CALL_USD,
            capPerHourUsd: e.CREDITS_CAP_PER_HOUR_USD,
            capPerDayUsd: e.CREDITS_CAP_PER_DAY_USD,
            refund: e.CREDITS_REFUND === "on",
            refundConfirmMs: e.CREDITS_REFUND_CONFIRM_MS,
            sessionSecret: e.CREDITS_SESSION_SECRET ?? (e.MPP_SECRET_KEY ? `credits-session:${e.MPP_SECRET_KEY}` : undefined),
            sessionTtlSec: e.CREDITS_SESSION_TTL_SEC,
          },
    live: {
      maxStreams: e.LIVE_STREAMS_MAX,
      maxPerWallet: e.LIVE_STREAMS_PER_WALLET,
      bufferMaxBytes: e.LIVE_STREAM_BUFFER_KB * 1024,
      minuteMs: e.LIVE_STREAM_MINUTE_MS,
      heartbeatMs: e.LIVE_HEARTBEAT_SEC * 1000,
      fundingPollMs: e.LIVE_FUNDING_POLL_SEC * 1000,
      resumeWindowMs: e.LIVE_RESUME_WINDOW_SEC * 1000,
    },
    alerts:
      e.ALERTS === "off"
        ? undefined
        : {
            dataDir: e.DATA_DIR,
            evalCron: e.ALERT_EVAL_CRON,
            cooldownMs: e.ALERT_COOLDOWN_MIN * 60_000,
            maxActive: e.ALERT_MAX_ACTIVE,
            dispatchPollMs: e.ALERT_DISPATCH_POLL_MS,
            webhook: {
              timeoutMs: e.WEBHOOK_TIMEOUT_MS,
              allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK,
              allowedPorts: e.WEBHOOK_ALLOWED_PORTS,
              extraCa: e.WEBHOOK_EXTRA_CA_FILE ? readCa(e.WEBHOOK_EXTRA_CA_FILE) : undefined,
            },
            retry: { maxAttempts: e.WEBHOOK_MAX_ATTEMPTS, baseDelayMs: e.WEBHOOK_RETRY_BASE_MS, factor: 3 },
          },
    streams:
      e.STREAMS === "off"
        ? undefined
        : {
            dataDir: e.DATA_DIR,
            maxOnDemand: e.STREAM_MAX_ON_DEMAND,
            idleMs: e.STREAM_IDLE_MIN * 60_000,
            warmupMs: e.STREAM_WARMUP_SEC * 1000,
            warmupsPerMin: e.STREAM_WARMUPS_PER_MIN,
            wsUrls: venueUrls(VENUE_WS_URLS, e),
          },
  };
}
