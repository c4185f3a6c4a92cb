/**
 * Keeps credentials out of logs. Operators put API keys in URLs (`https://base-mainnet.g.alchemy.com/v2/<key>`,
 * `redis://:<password>@host`, `?apikey=`), and libraries copy those URLs into their error messages (viem
 * puts the RPC URL in `message`, `details`, `shortMessage`, `metaMessages` and `url`). The one place for
 * it: {@link redactUrl} and {@link redactSettingValue} for showing a URL or a setting's value on purpose
 * (start-up errors, the index page), {@link scrubUrls} for text that may quote URLs (errors, `/ready`,
 * `marketgate doctor`, every configuration problem), and a process-wide set of registered secrets that
 * {@link scrubSecrets} removes from any text (the logger runs every line through it, see `log.ts`).
 */

/**
 * How a secret setting's value is kept out of logs: `value` is replaced wherever it appears; `url` may hold
 * credentials in its user info, path or query (logged as `scheme://host/…`); `urls` is a comma-separated
 * list of such URLs (other entries, like `self`, are not secrets); `header` is `Name: value`, whose value is
 * replaced on its own too. Each secret setting's kind is in `SECRET_SETTINGS` (src/config.ts).
 */
export type SecretKind = "value" | "url" | "urls" | "header";

/** What {@link registerConfigSecrets} reads of the configuration (`Config` of src/config.ts, which imports this module). */
export interface ConfigSecrets {
  secrets: ReadonlyArray<{ kind: SecretKind; value: string }>;
  mpp?: { secretKey: string };
  credits?: { sessionSecret?: string };
}

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

/**
 * The start of a value that is shown as a host when it is not an absolute URL: a dotted name,
 * `localhost`, or a short word (`notaurl`), with an optional port. Keys are long and mix digits in, so
 * they never pass.
 */
const HOST_LIKE = /^(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+|[a-z]{1,12})(?::\d{1,5})?$/i;

/**
 * A setting's value safe to quote in an error message, whether or not it is a valid URL (a URL setting
 * may be mistyped: `host.example/v2?apikey=KEY` without its scheme). An absolute URL with a host gets
 * {@link redactUrl}'s form (`https://[redacted]@host/…`); anything else keeps only a host-like start
 * (`host.example/…`, `[redacted]@host.example/…`), else it is `[redacted]`. User info, path, query and
 * fragment never appear. Never throws.
 */
export function redactSettingValue(raw: string): string {
  const value = raw.trim();
  try {
    if (new URL(value).host) return redactUrl(value);
  } catch {
    // Not an absolute URL: below.
  }
  const authority = value.split(/[/?#\s]/, 1)[0]!;
  const at = authority.lastIndexOf("@");
  const host = authority.slice(at + 1);
  if (!HOST_LIKE.test(host)) return REDACTED;
  return `${at >= 0 ? `${REDACTED}@` : ""}${host}${value.length > authority.length ? "/…" : ""}`;
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
 * Registers one secret setting's value by its kind (see {@link SecretKind}): a `url` with
 * {@link registerSecretUrl}, each entry of `urls` that is a URL the same way, a `header` (`Name: value`) as a
 * whole and its value, anything else with {@link registerSecret}.
 */
export function registerSecretSetting(kind: SecretKind, value: string): void {
  switch (kind) {
    case "url":
      return registerSecretUrl(value);
    case "urls":
      for (const entry of value.split(",").map((s) => s.trim())) if (entry.includes("://")) registerSecretUrl(entry);
      return;
    case "header":
      registerSecret(value);
      return registerSecret(value.slice(value.indexOf(":") + 1).trim());
    case "value":
      return registerSecret(value);
  }
}

/**
 * Registers every credential of a configuration: the value of each secret setting that is set
 * (`config.secrets`, from `SECRET_SETTINGS` in config.ts, the one list of them), and the secrets derived
 * from them or generated at start-up (the MPP key when none is set, the credits session key).
 */
export function registerConfigSecrets(config: ConfigSecrets): void {
  for (const { kind, value } of config.secrets) registerSecretSetting(kind, value);
  registerSecret(config.mpp?.secretKey);
  registerSecret(config.credits?.sessionSecret);
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

/**
 * {@link redactUrl} for URLs with a network host and something to hide (user info, a path, a query or a
 * fragment); others unchanged: `file:///…` of stack frames, and bare origins, which prose quotes as
 * examples (`https://data.example.com`, `http://127.0.0.1:<port>`) and which must read as written.
 */
function redactNetworkUrl(raw: string): string {
  try {
    const u = new URL(raw);
    const hides = u.username || u.password || (u.pathname !== "/" && u.pathname !== "") || u.search || u.hash;
    return u.host && u.protocol !== "file:" && hides ? redactUrl(raw) : raw;
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
