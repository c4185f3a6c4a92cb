# syntax=docker/dockerfile:1
# marketgate: the HTTP service (REST + MCP at /mcp), built from this checkout.
#   docker build -t marketgate .
#   docker run -p 4021:4021 -v marketgate-data:/app/.data -e PAY_TO=0x... -e PUBLIC_URL=https://data.example.com -e FACILITATOR=https://... marketgate
# Secrets may come from files instead: MPP_SECRET_KEY_FILE=/run/secrets/... (docs/configuration.md).
# (HOST is 0.0.0.0 here: with credits on, the default, the service refuses to start without PUBLIC_URL.)
# Several replicas on one Redis: compose.yaml. Operations: docs/operations/deploy.md.

# Node 22 LTS, as package.json "engines" asks. Not 24 yet: better-sqlite3 12 aborts there ("Assertion failed:
# (env) != nullptr" in a Statement destructor); better-sqlite3 13 fixes it but needs Node >= 22 everywhere.
ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: every dependency (TypeScript and the other dev tools), then `npm run build` into dist/ ---
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# tsc needs the packages' types only: no install scripts (native builds, anvil's binary download), and no
# optional packages (the only one is anvil's binary, for the local chain of tests and the sandbox).
RUN npm ci --no-audit --no-fund --ignore-scripts --omit=optional
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY tools ./tools
COPY http ./http
COPY mcp ./mcp
COPY bin ./bin
RUN npm run build

# --- prod-deps: production dependencies only (npm ci --omit=dev), installed where a tool chain is, since
#     better-sqlite3 compiles from source when no prebuilt binary matches the platform ---
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --omit=dev --omit=optional && npm cache clean --force

# --- runtime: node, production node_modules and dist/, as the unprivileged `node` user ---
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4021 \
    DATA_DIR=/app/.data
WORKDIR /app
COPY --from=prod-deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
# Scalar's standalone bundle, served at /docs/scalar.js (vendor/scalar/source.json).
COPY --chown=root:root vendor/scalar/standalone.js ./vendor/scalar/standalone.js
# package.json: the version in /, MCP initialize and User-Agent (src/version.ts).
COPY --chown=root:root package.json ./
# The only writable place: SQLite files (streams; alerts and credits without REDIS_URL) and the doctor summary.
RUN mkdir -p /app/.data && chown node:node /app/.data
# A volume, so that a replaced container keeps them: `docker run -v marketgate-data:/app/.data ...`
# (an anonymous volume otherwise). One per replica: never share a DATA_DIR.
VOLUME ["/app/.data"]
USER node
EXPOSE 4021
# Liveness: the process answers. Readiness (Redis, RPC, facilitator, venues) is GET /ready, for load balancers.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4021) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) closes the server, streams, alerts and Redis, then exits (src/main.ts).
CMD ["node", "dist/src/main.js"]
