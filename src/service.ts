import type { Server } from "node:http";
import { isIP, type AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Express } from "express";
import type { FacilitatorClient } from "@x402/core/server";
import { STREAMS, streamSymbol, TOOLS } from "../tools/index.js";
import { readFundingState } from "../tools/live/funding.js";
import { attachWebSocket, refuseUpgrade } from "../http/ws.js";
import { createLiveStreams, type LiveStreams } from "./live/service.js";
import { alertSignals } from "../tools/alerts/signals.js";
import { createAlertScheduler, createAlertService } from "./alerts/create.js";
import type { AlertScheduler } from "./alerts/scheduler.js";
import type { AlertService } from "./alerts/service.js";
import { createApp } from "../http/app.js";
import { Readiness } from "./doctor/readiness.js";
import { HttpPaymentGate } from "../http/payment-gate.js";
import { ClientRateLimiter, FreeRateLimiter, MissRateLimiter } from "./lib/rate-limit.js";
import { McpCatalog } from "../mcp/catalog.js";
import { ConfigError, type Config } from "./config.js";
import type { ToolContext } from "./core/context.js";
import { Metrics } from "./core/metrics.js";
import { MemoryResponseCache, RedisResponseCache } from "./core/response-cache.js";
import { ToolRunner } from "./core/runner.js";
import { RedisSingleFlight } from "./state/flight.js";
import type { ServiceInfo } from "./docs/openapi.js";
import { priceBook, type PriceBook } from "./docs/pricing.js";
import { logger } from "./lib/log.js";
import { PublicOrigins } from "./lib/public-origins.js";
import { redactUrl, registerConfigSecrets } from "./lib/redact.js";
import { AuthorizationReader } from "./payments/chain.js";
import { MemoryPaymentLedger, RedisPaymentLedger, type PaymentLedger } from "./payments/ledger.js";
import { MppGate } from "./payments/mpp.js";
import { PaymentProcessor } from "./payments/processor.js";
import { createCreditService } from "./payments/credits/service.js";
import { ReceiptKeys } from "./payments/receipts/keys.js";
import { ReceiptIssuer } from "./payments/receipts/issuer.js";
import { createFacilitators, createResourceServer, PaymentCatalog } from "./payments/x402.js";
import type { AnyTool } from "./registry/tool.js";
import { RedisHandle } from "./state/redis.js";
import { createIngestion } from "./ingestion/create.js";
import { createVenues } from "./venues/create.js";
import { VENUES } from "./venues/index.js";
import { VERSION } from "./version.js";

/** How long `listen()` waits for the first Redis connection before serving anyway (ms). */
const REDIS_STARTUP_WAIT_MS = 5000;

/** Options of {@link createService}; the overrides exist for tests and the sandbox. */
export interface ServiceOptions {
  config: Config;
  /** Use this facilitator instead of the configured one (e.g. a fault-injecting wrapper in tests). */
  facilitator?: FacilitatorClient;
  /** Serve without payments even when PAY_TO is set (stdio MCP, manifest generation). */
  paymentsOff?: boolean;
  tools?: readonly AnyTool[];
  now?: () => number;
}

/** A wired service instance. */
export interface Service {
  app: Express;
  ctx: ToolContext;
  runner: ToolRunner;
  metrics: Metrics;
  prices: PriceBook;
  mcp: McpCatalog;
  info: ServiceInfo;
  /** Undefined when payments are off. */
  payments?: PaymentProcessor;
  /** Starts the venue ingestion (when configured) and listening; resolves with the bound URL. `close()` stops both. */
  listen(port?: number, host?: string): Promise<{ url: string; server: Server; close(): Promise<void> }>;
  /** Starts the venue ingestion without HTTP (stdio MCP). */
  startIngestion(): Promise<void>;
  /** Stops the venue ingestion and flushes its stores. */
  stopIngestion(): Promise<void>;
  /**
   * Releases everything the service holds without HTTP (the stdio MCP path): the alert scheduler, the
   * streams, the alert store, credits and Redis; `listen()`'s `close()` closes the HTTP server, then this.
   * Idempotent.
   */
  close(): Promise<void>;
  /** Alert evaluation and webhook delivery (started by `listen`); undefined when `ALERTS=off`. */
  alerts?: AlertScheduler;
  /** The paid live streams (SSE `/stream/...`, WebSocket `/ws`). */
  live: LiveStreams;
}

/** Service identity for documents and MCP `initialize`. */
export function serviceInfo(config: Config): ServiceInfo {
  return {
    name: "marketgate",
    version: VERSION,
    description: `Crypto market data for AI agents and wallets: CEX and DEX prices, perpetual funding, open interest and basis, CVD, liquidations and heatmaps, volatility, and liquidation and price alerts; paid per request in USDC on Base${config.payments.solana ? " or Solana" : ""} with x402 or MPP, or from prepaid credits; the same tools over MCP.`,
    publicUrl: config.publicUrl,
    ...(config.payments.solana ? { solanaNetwork: config.payments.solana.network } : {}),
  };
}

/**
 * The payment processor and its ledger, or undefined when payments are off (no `PAY_TO`, or explicitly
 * off).
 */
function paymentProcessor(
  opts: ServiceOptions,
  tools: readonly AnyTool[],
  redis: RedisHandle | undefined,
): { processor: PaymentProcessor; ledger: PaymentLedger; facilitator: FacilitatorClient } | undefined {
  const { payments } = opts.config;
  if (opts.paymentsOff || !payments.payTo) return undefined;
  const facilitator = opts.facilitator ?? createFacilitators(payments);
  if (!facilitator) {
    throw new ConfigError(["no usable facilitator: FACILITATOR=self needs RELAYER_PRIVATE_KEY and RPC_URL, or set FACILITATOR to facilitator URLs"]);
  }
  const catalog = new PaymentCatalog(createResourceServer(facilitator, payments.network, payments.solana?.network), tools, { ...payments, payTo: payments.payTo });
  // The ledger outlives every authorization's validity, so replays are refused locally.
  const ttlMs = Math.max(24 * 3600_000, payments.timeoutSec * 2000);
  const ledger: PaymentLedger = redis ? new RedisPaymentLedger(redis, ttlMs) : new MemoryPaymentLedger({ ttlMs });
  const processor = new PaymentProcessor(catalog, ledger, {
    chain: payments.rpcUrl ? new AuthorizationReader(payments.rpcUrl) : undefined,
    reconcileWindowMs: payments.reconcileWindowMs,
  });
  return { processor, ledger, facilitator };
}

/**
 * The tool handlers' context for `config`: venue clients, streams and alerts, built here in the composition
 * root (credits are added once payments exist). The concrete alert service is returned beside it for the
 * scheduler and shutdown; handlers see it only through its port.
 */
function toolContext(config: Config, deps: { metrics: Metrics; now?: () => number; redis?: RedisHandle }): { ctx: ToolContext; alertService?: AlertService } {
  const { venues, health } = createVenues(config, { metrics: deps.metrics, redis: deps.redis });
  const now = deps.now ?? Date.now;
  const ingestion = config.streams ? createIngestion({ ...config, streams: config.streams }, VENUES, venues.perps, deps.metrics, deps.redis) : undefined;
  const alertService = config.alerts ? createAlertService(config.alerts, now, deps.redis) : undefined;
  const ctx: ToolContext = {
    venues,
    health,
    dataMode: config.dataMode,
    simReplay: config.simReplay,
    dataDir: config.dataDir,
    version: VERSION,
    startedAt: Date.now(),
    now,
    log: logger,
    ingestion,
    alerts: alertService,
    redis: deps.redis,
    replicaId: config.redis?.replicaId,
    publicUrl: config.publicUrl,
  };
  return { ctx, alertService };
}

/** MPP beside x402 on HTTP, when on (default). Tempo's recipient defaults to `PAY_TO`. */
function mppGate(config: Config, payments: PaymentProcessor): MppGate | undefined {
  const m = config.mpp;
  if (!m) return undefined;
  if (m.secretKeyGenerated) logger.warn("MPP_SECRET_KEY not set: using a per-process key (MPP challenges do not survive restarts or cross replicas)");
  const payTo = payments.catalog.settings.payTo;
  return new MppGate(
    { secretKey: m.secretKey, realm: m.realm, methods: m.methods, challenges: m.challenges, tempo: { ...m.tempo, recipient: m.tempo.recipient ?? payTo } },
    payments.catalog,
  );
}

/**
 * Wires the catalogue, venue clients, cache, payments, HTTP app and MCP catalogue from a configuration.
 * @throws ConfigError when payments are on but no facilitator is configured.
 */
export async function createService(opts: ServiceOptions): Promise<Service> {
  const { config } = opts;
  // First, so that nothing below (Redis, facilitators, venues) can log a configured credential.
  registerConfigSecrets(config);
  const tools = opts.tools ?? TOOLS;
  const metrics = new Metrics();
  const redis = config.redis ? new RedisHandle({ url: config.redis.url, prefix: config.redis.prefix, log: logger }) : undefined;
  redis?.start();
  const { ctx, alertService } = toolContext(config, { metrics, now: opts.now, redis });
  ctx.health.configureCircuits(config.circuit);
  metrics.observeCircuits(() => ctx.health.snapshot());
  const cache = redis ? new RedisResponseCache(redis, config.cacheMaxEntries, logger) : new MemoryResponseCache(config.cacheMaxEntries);
  const runner = new ToolRunner(ctx, metrics, cache, redis ? new RedisSingleFlight(redis) : undefined, { deadlineMs: config.requestDeadlineMs });
  const limiter = new MissRateLimiter(config.rateLimitPerMin, redis);
  const freeLimiter = new FreeRateLimiter(config.freeRateLimitPerMin, redis);
  const paid = paymentProcessor(opts, tools, redis);
  const payments = paid?.processor;
  const topUpTool = tools.find((t) => t.name === "credits_top_up");
  const credits =
    paid && topUpTool
      ? createCreditService(config, {
          catalog: paid.processor.catalog,
          idempotency: paid.ledger,
          topUpTool,
          metrics,
          redis,
          walletLimiter: new ClientRateLimiter({ perMin: config.rateLimitPerMin, keyName: "rl-wallet", what: "credit-paid requests per wallet", policy: "wallet", redis }),
        })
      : undefined;
  ctx.credits = credits;
  // Signed offers and receipts (docs/receipts.md): only where something is paid.
  const receipts = payments && config.receipts ? new ReceiptIssuer(ReceiptKeys.load(config.receipts)) : undefined;
  const prices = await priceBook(tools, {
    network: config.payments.network,
    payTo: payments?.catalog.settings.payTo,
    timeoutSec: config.payments.timeoutSec,
    solana: payments ? config.payments.solana : undefined,
  });
  const info = serviceInfo(config);
  // The origin SIWX proofs and credits sessions are bound to is configuration, never a request's Host.
  const origins = new PublicOrigins(config);
  const mcp = new McpCatalog({
    tools,
    runner,
    metrics,
    dataMode: config.dataMode,
    prices,
    limiter,
    payments,
    credits: credits?.gate,
    receipts,
    // stdio has no request: the configured origin (PUBLIC_URL's, else the loopback bind's or localhost:PORT).
    origin: origins.origin(),
  });
  const gate = payments ? new HttpPaymentGate(payments, origins, mppGate(config, payments), credits?.gate, receipts) : undefined;
  const firstPrice = prices.values().next().value;
  const alerts =
    config.alerts && alertService
      ? createAlertScheduler(config.alerts, alertService, alertSignals(ctx), {
          now: ctx.now,
          log: logger,
          dataSource: config.dataMode === "sim" ? "simulated" : "live",
          lease: redis && config.redis ? { redis, holderId: config.redis.replicaId, ttlMs: config.redis.leaseTtlMs } : undefined,
        })
      : undefined;
  // `GET /ready`: Redis, chain RPC, facilitator and one venue per family (src/doctor/readiness.ts).
  const readiness = new Readiness({
    health: ctx.health,
    venues: ctx.venues,
    redis,
    rpcUrl: config.payments.rpcUrl,
    solanaRpcUrl: config.payments.solana ? config.payments.facilitators.find((f) => f.kind === "self")?.solana?.rpcUrl : undefined,
    network: config.payments.network,
    facilitator: paid?.facilitator,
  });
  const live = createLiveStreams(config, { ingestion: ctx.ingestion, readFunding: (symbol) => readFundingState(ctx, symbol), now: ctx.now });
  const app = createApp({
    config,
    live: { streams: STREAMS, live, ctx, symbolOf: streamSymbol },
    info,
    readiness,
    tools,
    runner,
    metrics,
    limiter,
    freeLimiter,
    prices,
    mcp,
    gate,
    origins,
    payment: payments
      ? {
          network: payments.catalog.settings.network,
          ...(config.payments.solana ? { solana: { network: config.payments.solana.network, payTo: config.payments.solana.payTo, asset: firstPrice?.also?.[0]?.asset } } : {}),
          payTo: payments.catalog.settings.payTo,
          asset: firstPrice?.asset,
          // Shown on the public index: a facilitator URL may carry a key in its path or query.
          facilitators: config.payments.facilitators.map((f) => (f.kind === "self" ? "self" : redactUrl(f.url))),
          protocols: config.mpp ? ["x402", ...config.mpp.methods.map((m) => `mpp/${m}`)] : ["x402"],
        }
      : undefined,
  });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await alerts?.stop();
      live.hub.close();
      await ctx.ingestion?.stop();
      await alertService?.store.close();
      await credits?.close();
      await redis?.close();
    })());
  return {
    app,
    ctx,
    runner,
    metrics,
    prices,
    mcp,
    info,
    payments,
    alerts,
    live,
    startIngestion: () => ctx.ingestion?.start() ?? Promise.resolve(),
    stopIngestion: () => ctx.ingestion?.stop() ?? Promise.resolve(),
    close,
    listen: async (port = config.port, host = config.host) => {
      // Refused before anything starts: with credits on, a public bind needs PUBLIC_URL (ConfigError).
      origins.listening(host, port, { siwx: credits !== undefined });
      if (credits && !config.publicUrl && config.trustProxy !== false) {
        logger.warn(
          { origins: origins.list() },
          "PUBLIC_URL is not set: Sign-In-With-X proofs must be signed for the loopback address; behind a proxy, set PUBLIC_URL to the URL clients use",
        );
      }
      // A replica that takes traffic before its first Redis connection would refuse paid and alert
      // requests with 503; wait a bounded time for it, then serve anyway (Redis may be down for long).
      await redis?.waitReady(REDIS_STARTUP_WAIT_MS).catch(() => logger.warn("redis not connected yet; serving anyway (paid and alert requests answer 503 until it is)"));
      return new Promise((resolve, reject) => {
        void ctx.ingestion?.start().catch((err: unknown) => logger.error({ err }, "streams failed to start"));
        alerts?.start();
        const server = app.listen(port, host, (err?: Error) => {
          if (err) return reject(err);
          const wss = attachWebSocket(server, { app, streams: STREAMS, live, ctx, symbolOf: streamSymbol, gate, limiter: freeLimiter, origins });
          // Node hands CONNECT to this event, not to express; without a listener it drops the connection.
          server.on("connect", (_req, socket: Duplex) => {
            socket.on("error", () => socket.destroy());
            refuseUpgrade(
              socket,
              405,
              { Allow: "GET, HEAD, POST, DELETE, OPTIONS" },
              { error: { code: "METHOD_NOT_ALLOWED", message: "CONNECT is not supported: this is not a proxy" } },
            );
          });
          const addr = server.address() as AddressInfo;
          // PORT=0: the loopback origins take the port actually bound.
          origins.listening(host, addr.port, { siwx: credits !== undefined });
          const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
          resolve({
            url: `http://${isIP(shownHost) === 6 ? `[${shownHost}]` : shownHost}:${addr.port}`,
            server,
            close: async () => {
              // Open streams and WebSockets would hold server.close() open: end them first.
              live.limits.closeAll();
              for (const c of wss.clients) c.terminate();
              await new Promise<void>((r) => server.close(() => r()));
              await close();
            },
          });
        });
      });
    },
  };
}
