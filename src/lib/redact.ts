/**
 * Keeps credentials out of logs. Operators put API keys in URLs (`https://base-mainnet.g.alchemy.com/v2/<key>`,
 * `redis://:<password>@host`, `?apikey=`), and libraries copy those URLs into their error messages (viem
 * puts the RPC URL in `message`, `details`, `shortMessage`, `metaMessages` and `url`). Two tools:
 * {@link redactUrl} for showing a URL on purpose, and a process-wide set of registered secrets that
 * {@link scrubSecrets} removes from any text (the logger runs every line through it, see `log.ts`).
 */
import type { Config } from "../config.js";

/** What replaces a secret that is not a whole URL. */
export const REDACTED = "[redacted]";

/**
 * Pieces of a URL (path, query, user, password) shorter than this are not scrubbed on their own: short
 * paths such as `/api/v2` carry no credential and would mangle unrelated log text. The whole URL is always
 * scrubbed, whatever its length.
 */
const MIN_PIECE_LENGTH = 8;

/**
 * A URL safe to show: `scheme://host[:port]`, with `[redacted]@` in place of any user info and `/…` in
 * place of any path, query or fragment, e.g. `https://[redacted]@rpc.example:8545/…`.
 * `https://api.binance.com` and `https://api.binance.com/` come back as `https://api.binance.com`.
 *
 * @returns the redacted URL, or `[redacted]` when `raw` is not an absolute URL. Never throws.
 */
export function redactUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return REDACTED;
  }
  // Opaque URLs (mailto:, data:) have no host to keep.
  if (!u.host) return REDACTED;
  const userinfo = u.username || u.password ? `${REDACTED}@` : "";
  const rest = (u.pathname !== "/" && u.pathname !== "") || u.search || u.hash ? "/…" : "";
  return `${u.protocol}//${userinfo}${u.host}${rest}`;
}

/** Registered secret text → its replacement. */
const secrets = new Map<string, string>();
/** One alternation of every registered secret, longest first (so a whole URL wins over its path). */
let pattern: RegExp | undefined;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function add(secret: string, replacement: string): void {
  if (!secret || secrets.has(secret)) return;
  secrets.set(secret, replacement);
  // Log lines are JSON: a secret with quotes or backslashes appears escaped there.
  const escaped = JSON.stringify(secret).slice(1, -1);
  if (escaped !== secret && !secrets.has(escaped)) secrets.set(escaped, replacement);
  pattern = undefined;
}

function addPiece(piece: string, replacement: string): void {
  if (piece.length >= MIN_PIECE_LENGTH) add(piece, replacement);
  let decoded: string;
  try {
    decoded = decodeURIComponent(piece);
  } catch {
    return;
  }
  if (decoded !== piece && decoded.length >= MIN_PIECE_LENGTH) add(decoded, replacement);
}

/**
 * Registers a configured URL whose user info, path and query may hold credentials: from now on
 * {@link scrubSecrets} replaces the URL (as written and as normalised) by {@link redactUrl}'s form, and its
 * password, user name, path and query on their own by `[redacted]` / `/…` (pieces of at least 8 characters).
 * `undefined` and empty strings are ignored; a string that is not a URL is registered as a whole secret.
 * Idempotent.
 */
export function registerSecretUrl(raw: string | undefined): void {
  if (!raw) return;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    add(raw, REDACTED);
    return;
  }
  const shown = redactUrl(raw);
  add(raw, shown);
  add(u.href, shown);
  addPiece(u.password, REDACTED);
  addPiece(u.username, REDACTED);
  if (u.search.length > 1) addPiece(u.search.slice(1), REDACTED);
  if (u.pathname !== "/") addPiece(`${u.pathname}${u.search}`, "/…");
  if (u.pathname !== "/") addPiece(u.pathname, "/…");
}

/**
 * Registers a secret that is not a URL (API key, auth header value, private key): {@link scrubSecrets}
 * replaces it by `[redacted]`. Values shorter than 8 characters are ignored (see MIN_PIECE_LENGTH).
 */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= MIN_PIECE_LENGTH) add(value, REDACTED);
}

/**
 * Registers every credential-bearing value of a configuration: RPC, facilitator, Redis, venue REST and
 * websocket URLs, and the CoinGecko key, facilitator auth header value, relayer key and MPP secret.
 */
export function registerConfigSecrets(config: Config): void {
  registerSecretUrl(config.payments.rpcUrl);
  for (const f of config.payments.facilitators) {
    if (f.kind === "http") {
      registerSecretUrl(f.url);
      registerSecret(f.authHeader?.value);
    } else {
      registerSecretUrl(f.rpcUrl);
      registerSecret(f.relayerPrivateKey);
    }
  }
  registerSecretUrl(config.redis?.url);
  registerSecretUrl(config.coingecko.baseUrl);
  registerSecret(config.coingecko.apiKey);
  for (const url of Object.values(config.venues)) registerSecretUrl(url);
  for (const url of Object.values(config.streams?.wsUrls ?? {})) registerSecretUrl(url);
  registerSecret(config.mpp?.secretKey);
}

/** `text` with every registered secret replaced (see {@link registerSecretUrl}). Cheap when nothing matches. */
export function scrubSecrets(text: string): string {
  if (secrets.size === 0) return text;
  pattern ??= new RegExp(
    [...secrets.keys()]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join("|"),
    "g",
  );
  return text.replace(pattern, (m) => secrets.get(m) ?? REDACTED);
}

/** Absolute URLs in free text: scheme, `//`, then anything up to whitespace, a quote or a bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>()[\]{}]+/gi;

/** {@link redactUrl} for URLs with a network host; others (`file:///…` in stack frames) unchanged. */
function redactNetworkUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return u.host && u.protocol !== "file:" ? redactUrl(raw) : raw;
  } catch {
    return raw;
  }
}

/**
 * `text` with every absolute network URL in it replaced by {@link redactUrl}'s form, registered or not,
 * then {@link scrubSecrets}. For error messages and stacks, where libraries paste the URLs they called;
 * plain log fields keep unregistered URLs intact.
 */
export function scrubUrls(text: string): string {
  return scrubSecrets(text.replace(URL_IN_TEXT, redactNetworkUrl));
}
