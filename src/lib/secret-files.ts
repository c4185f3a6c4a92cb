import { readFileSync } from "node:fs";

/** Largest secret file read (bytes): a key, a URL or a header line; anything larger is a wrong path, not a secret. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

/** The environment with secrets read from files, and what was wrong (one message a setting). */
export interface SecretFilesResult {
  env: Record<string, string | undefined>;
  problems: string[];
}

/**
 * Docker/Kubernetes secrets: for each setting `X` in `names`, when `X_FILE` is set, reads the file it names and
 * returns it as `X` (one trailing line break removed, as `echo` and editors leave one), so a secret need not sit
 * in the environment. `X` and `X_FILE` together, an unreadable file, an empty one or one over
 * {@link MAX_SECRET_FILE_BYTES} are problems (returned, not thrown: the caller reports every setting at once).
 * The input is not changed; `X_FILE` keys stay in the returned copy.
 */
export function readSecretFiles(env: Record<string, string | undefined>, names: readonly string[]): SecretFilesResult {
  const out = { ...env };
  const problems: string[] = [];
  for (const name of names) {
    const path = env[`${name}_FILE`];
    if (path === undefined || path === "") continue;
    if (env[name] !== undefined && env[name] !== "") {
      problems.push(`${name}_FILE: set ${name} or ${name}_FILE, not both`);
      continue;
    }
    let text: string;
    try {
      const bytes = readFileSync(path);
      if (bytes.length > MAX_SECRET_FILE_BYTES) {
        problems.push(`${name}_FILE: ${path} is larger than ${MAX_SECRET_FILE_BYTES} bytes`);
        continue;
      }
      text = bytes.toString("utf8").replace(/\r?\n$/, "");
    } catch (err) {
      problems.push(`${name}_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
      continue;
    }
    if (text === "") {
      problems.push(`${name}_FILE: ${path} is empty`);
      continue;
    }
    out[name] = text;
  }
  return { env: out, problems };
}
