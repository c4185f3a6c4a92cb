/**
 * The container files (no Docker engine runs in tests): compose.yaml parses and wires two replicas to one
 * Redis with the shared secrets from the environment; the Dockerfile has its stages and runs what
 * `npm start` runs, as a non-root user; .dockerignore keeps out what must not be sent, but nothing the build copies.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";

const read = (name: string) => readFileSync(new URL(`../${name}`, import.meta.url), "utf8");
const pkg = JSON.parse(read("package.json")) as { engines: { node: string }; scripts: Record<string, string> };

interface ComposeService {
  build?: string;
  image?: string;
  environment?: Record<string, string | null>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

/** compose.yaml parsed with the `yaml` package (YAML 1.1 merge keys on), or undefined when it is not installed. */
async function parseCompose(text: string): Promise<{ services: Record<string, ComposeService> } | undefined> {
  const yaml = await import("yaml").catch(() => undefined);
  return yaml?.parse(text, { merge: true }) as { services: Record<string, ComposeService> } | undefined;
}

/** `${NAME:?msg}` → a test value, `${NAME:-default}` → the default, as `docker compose` interpolates them. */
function interpolate(value: string, given: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_m, name: string, op?: string, rest?: string) => given[name] ?? (op === "-" ? (rest ?? "") : `<${name} unset>`));
}

describe("compose.yaml", () => {
  const text = read("compose.yaml");

  it("runs two replicas on one Redis with the shared settings from the environment", async () => {
    const compose = await parseCompose(text);
    if (!compose) {
      // Minimal check without a YAML parser.
      expect(text).toMatch(/^services:$/m);
      expect(text.match(/REDIS_URL: redis:\/\/redis:6379/g)).toHaveLength(1);
      return;
    }
    const { services } = compose;
    expect(Object.keys(services).sort()).toEqual(["marketgate-a", "marketgate-b", "redis"]);
    const replicas = [services["marketgate-a"]!, services["marketgate-b"]!];
    for (const r of replicas) {
      expect(r.build).toBe(".");
      expect(r.depends_on).toEqual({ redis: { condition: "service_healthy" } });
      const env = r.environment!;
      expect(env.REDIS_URL).toBe("redis://redis:6379");
      for (const name of ["PAY_TO", "PUBLIC_URL", "MPP_SECRET_KEY", "CREDITS_SESSION_SECRET"]) expect(env[name], name).toMatch(new RegExp(`^\\$\\{${name}:\\?`));
      expect(env.TRUST_PROXY).toMatch(/^\$\{TRUST_PROXY:-false\}$/);
      expect(r.ports).toHaveLength(1);
      expect(r.ports![0]).toMatch(/^"?\d+:4021"?$/);
    }
    // Same shared state and secrets, distinct identities and host ports.
    const [a, b] = replicas.map((r) => r.environment!);
    const { REPLICA_ID: idA, ...sharedA } = a!;
    const { REPLICA_ID: idB, ...sharedB } = b!;
    expect(sharedA).toEqual(sharedB);
    expect(idA).not.toBe(idB);
    expect(replicas[0]!.ports![0]!.split(":")[0]).not.toBe(replicas[1]!.ports![0]!.split(":")[0]);
    expect(services.redis!.image).toMatch(/^redis:/);
    expect(services.redis!.healthcheck!.test).toContain("ping");

    // What a replica receives is a valid configuration.
    const given = {
      PAY_TO: "0x000000000000000000000000000000000000dEaD",
      PUBLIC_URL: "https://data.example.com",
      MPP_SECRET_KEY: "m".repeat(32),
      CREDITS_SESSION_SECRET: "c".repeat(32),
    };
    const env = Object.fromEntries(Object.entries(a!).map(([k, v]) => [k, interpolate(String(v), given)]));
    const config = loadConfig(env);
    expect(config.redis).toMatchObject({ url: "redis://redis:6379", replicaId: "marketgate-a" });
    expect(config.trustProxy).toBe(false);
    expect(config.credits?.sessionSecret).toBe(given.CREDITS_SESSION_SECRET);
    // Credits are on and the replicas bind 0.0.0.0: the SIWX origin comes from PUBLIC_URL.
    expect(config.credits).toBeDefined();
    expect(config.publicUrl).toBe(given.PUBLIC_URL);
  });

  it("keeps each replica's DATA_DIR on its own named volume", async () => {
    const compose = (await parseCompose(text)) as { services: Record<string, ComposeService & { volumes?: string[] }>; volumes?: Record<string, unknown> } | undefined;
    if (!compose) return expect(text).toMatch(/marketgate-a-data:\/app\/\.data/);
    const named = ["marketgate-a", "marketgate-b"].map((r) => compose.services[r]!.volumes?.find((v) => v.endsWith(":/app/.data"))?.split(":")[0]);
    expect(named).toEqual(["marketgate-a-data", "marketgate-b-data"]);
    for (const n of named) expect(Object.keys(compose.volumes ?? {})).toContain(n);
  });

  it("explains TRUST_PROXY", () => {
    expect(text).toMatch(/#\s*TRUST_PROXY: .*proxy hops/);
  });
});

describe("Dockerfile", () => {
  const text = read("Dockerfile");
  const stages = [...text.matchAll(/^FROM\s+(\S+)\s+AS\s+(\S+)\s*$/gim)].map((m) => ({ image: m[1]!, name: m[2]! }));
  const runtime = text.slice(text.search(/^FROM\s+\S+\s+AS\s+runtime\s*$/im));

  it("builds with dev dependencies, installs production dependencies apart, and runs from a final runtime stage", () => {
    expect(stages.map((s) => s.name)).toEqual(["build", "prod-deps", "runtime"]);
    const build = text.slice(text.search(/AS build\s*$/m), text.search(/AS prod-deps\s*$/m));
    expect(build).toMatch(/RUN npm ci\b(?![^\n]*--omit=dev)/);
    expect(build).toMatch(/RUN npm run build/);
    const prodDeps = text.slice(text.search(/AS prod-deps\s*$/m), text.search(/AS runtime\s*$/m));
    expect(prodDeps).toMatch(/RUN npm ci [^\n]*--omit=dev/);
    expect(runtime).toMatch(/COPY --from=prod-deps .*\/app\/node_modules/);
    expect(runtime).toMatch(/COPY --from=build .*\/app\/dist/);
    expect(runtime).not.toMatch(/npm ci(?! )|npm install/);
  });

  it("builds every stage on a Node major that package.json engines admits, the newest one it names", () => {
    // engines is a list of `^X.Y.Z` (that major) or `>=X` ranges, e.g. "^22.13.0 || >=24".
    const ranges = pkg.engines.node.split("||").map((r) => r.trim());
    const admits = (major: number) => ranges.some((r) => (r.startsWith("^") ? Number(/\^(\d+)/.exec(r)![1]) === major : major >= Number(/>=(\d+)/.exec(r)![1])));
    const newest = Math.max(...ranges.map((r) => Number(/(\d+)/.exec(r)![1])));
    const arg = Number(/^ARG NODE_IMAGE=node:(\d+)/m.exec(text)?.[1]);
    expect(arg).toBe(newest);
    expect(admits(arg)).toBe(true);
    expect(admits(20)).toBe(false);
    for (const s of stages) expect(s.image).toBe("${NODE_IMAGE}");
  });

  it("runs `npm start`'s command as a non-root user on port 4021, with a HEALTHCHECK on /health", () => {
    expect(runtime).toMatch(/^USER (?!root\b|0\b)\S+$/m);
    expect(runtime).toMatch(/^EXPOSE 4021$/m);
    const cmd = /^CMD (\[.*\])$/m.exec(runtime)?.[1];
    expect(JSON.parse(cmd!)).toEqual(["node", "dist/src/main.js"]);
    expect(pkg.scripts.start).toBe("node dist/src/main.js");
    expect(runtime).toMatch(/^HEALTHCHECK [\s\S]*\/health/m);
    // tsc -p tsconfig.build.json puts src/main.ts at dist/src/main.js.
    const build = JSON.parse(read("tsconfig.build.json")) as { include: string[] };
    const base = JSON.parse(read("tsconfig.json")) as { compilerOptions: { outDir: string; rootDir: string } };
    expect(build.include).toContain("src");
    expect(base.compilerOptions).toMatchObject({ outDir: "dist", rootDir: "." });
  });
});

describe("Dockerfile state and assets", () => {
  const text = read("Dockerfile");
  const runtime = text.slice(text.search(/^FROM\s+\S+\s+AS\s+runtime\s*$/im));

  it("declares DATA_DIR a volume, writable by the runtime user, so a replaced container keeps its state", () => {
    const dataDir = /DATA_DIR=(\S+)/.exec(runtime)?.[1];
    expect(dataDir).toBe("/app/.data");
    expect(runtime).toMatch(new RegExp(`^VOLUME \\["${dataDir!.replace(/\./g, "\\.")}"\\]$`, "m"));
    expect(runtime.indexOf("chown node:node /app/.data")).toBeLessThan(runtime.indexOf("VOLUME"));
  });

  it("ships the vendored Scalar bundle where dist/src/docs/api-page.js looks for it", () => {
    expect(runtime).toMatch(/^COPY (?:--\S+ )*vendor\/scalar\/standalone\.js \.\/vendor\/scalar\/standalone\.js$/m);
  });
});

describe(".dockerignore", () => {
  const patterns = read(".dockerignore")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));

  it("keeps installs, builds, state, git and secrets out of the build context", () => {
    for (const p of ["node_modules", "dist", ".data", ".git", ".env"]) expect(patterns, p).toContain(p);
  });

  it("keeps everything the Dockerfile copies", () => {
    const copied = [...read("Dockerfile").matchAll(/^COPY (?!--from)(?:--\S+ )*(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    expect(copied).toEqual(expect.arrayContaining(["package.json", "package-lock.json", "src", "bin"]));
    for (const c of copied) expect(patterns, c).not.toContain(c);
  });
});
