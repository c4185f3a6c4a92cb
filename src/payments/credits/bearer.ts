/** Longest bearer token read (a credits session token is about 120 characters). */
const MAX_TOKEN_CHARS = 512;

/**
 * The token of an `Authorization: Bearer <token>` header (case-insensitive scheme, RFC 6750), or undefined for no
 * header, another scheme (e.g. MPP's `Payment`), a blank or an oversized token. Hosts that take a header for a
 * remote MCP server (Claude Code `--header`, Cursor and VS Code `headers`) send a credits session token this way.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header || header.length > MAX_TOKEN_CHARS + 7) return undefined;
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m?.[1];
}
