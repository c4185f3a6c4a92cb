import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** A fenced code block of a Markdown page, with a language tag (what a reader copies). */
export interface Snippet {
  /** Path from the repository root, e.g. `docs/cli.md`. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The block's text, without the fences and without the indentation of a block inside a list item. */
  code: string;
  /** The block's first line, trimmed: how the catalogue names it. */
  first: string;
  /** sha256 of `code`, first 12 hex digits: a block not run here is pinned by it. */
  sha: string;
}

/** README.md and every page under docs/, as paths from `root`. */
export function docPages(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : []));
  return ["README.md", ...walk("docs").sort()];
}

/**
 * The fenced blocks with a language tag of the page `file`. Blocks without a tag are figures (a source tree,
 * a sample of a command's output), not something to run, and are left out.
 */
export function snippetsOf(root: string, file: string): Snippet[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== fence) end++;
    const body = lines.slice(i + 1, end).map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l));
    if (lang) {
      const code = body.join("\n");
      out.push({
        file: relative(root, join(root, file)),
        line: i + 1,
        lang: lang!,
        code,
        first: body[0]!.trim(),
        sha: createHash("sha256").update(code).digest("hex").slice(0, 12),
      });
    }
    i = end;
  }
  return out;
}

/**
 * The output a shell block documents: its full-line comments (`# HTTP/1.1 402 Payment Required`), each a line
 * the commands print, with `…` for any text, an optional `stderr: ` before it, and after three or more spaces
 * an explanation that is not output. Blank comment lines (`#`) and comments after a command are not output.
 */
export function documentedOutput(code: string): string[] {
  return code
    .split("\n")
    .filter((l) => l.startsWith("#") && !l.startsWith("#!"))
    .map((l) =>
      l
        .slice(1)
        .trim()
        .replace(/^stderr:\s*/, "")
        .split(/\s{3,}/)[0]!
        .trim(),
    )
    .filter((l) => l !== "");
}

/** Whether the output line `actual` is the documented `expected`, `…` standing for any text (anchored at both ends). */
export function outputMatches(expected: string, actual: string): boolean {
  const pattern = expected
    .split("…")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${pattern}$`).test(actual.replace(/\r$/, "").trim());
}

/** The documented lines of `code` that no line of `output` matches. */
export function missingOutput(code: string, output: string): string[] {
  const lines = output.split("\n");
  return documentedOutput(code).filter((expected) => !lines.some((actual) => outputMatches(expected, actual)));
}

/**
 * The placeholders the pages use, and what a reader puts there when following them against the sandbox: its
 * address (the pages say port 4021; the test's sandbox has its own port), a funded key it printed, its
 * webhook receiver, the checkout's path and a tarball `npm pack` made. Each is replaced where it appears; nothing else is changed.
 */
export interface Placeholders {
  /** The sandbox's port, for `localhost:4021` and `127.0.0.1:4021`. */
  port: number;
  /** A funded payer's private key, for `X402_PRIVATE_KEY=0x…` (or `0x...`). */
  key?: string;
  /** The checkout, for `/path/to/marketgate`. */
  checkout?: string;
  /** The packed tarball, for `/path/to/marketgate-0.1.0.tgz`. */
  tarball?: string;
  /** The service's URL, for `https://api.example.com` (a deployment's address). */
  serviceUrl?: string;
  /** An HTTPS endpoint that receives webhooks (the sandbox's local receiver), for `WEBHOOK_URL=https://…`. */
  webhookUrl?: string;
}

/** `code` with the placeholders of {@link Placeholders} filled in. */
export function fillPlaceholders(code: string, p: Placeholders): string {
  let out = code.replace(/\b(localhost|127\.0\.0\.1):4021\b/g, `$1:${p.port}`);
  if (p.key) out = out.replace(/(X402_PRIVATE_KEY=)0x(…|\.\.\.)/g, `$1${p.key}`);
  if (p.tarball) out = out.replaceAll("/path/to/marketgate-0.1.0.tgz", p.tarball);
  if (p.checkout) out = out.replaceAll("/path/to/marketgate", p.checkout);
  if (p.serviceUrl) out = out.replaceAll("https://api.example.com", p.serviceUrl);
  if (p.webhookUrl) out = out.replaceAll("WEBHOOK_URL=https://…", `WEBHOOK_URL=${p.webhookUrl}`);
  return out;
}
