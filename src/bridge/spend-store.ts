import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, openSync, closeSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** What the bridge has spent in one UTC day, in micro-USD. */
export interface DaySpend {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** What paid calls cost (x402 or credits), reservations of calls in flight included. */
  spentMicro: number;
  /** USDC sent for credit top-ups (not calls: their spending from credits counts in `spentMicro`). */
  toppedUpMicro: number;
  /** Paid calls counted. */
  calls: number;
}

/** File of the spend, in the state folder. */
export const SPEND_FILE = "spend.json";
/** A lock older than this is a crashed holder's and is taken over (ms). */
const STALE_LOCK_MS = 10_000;
/** Longest wait for the lock before giving up (ms). */
const LOCK_WAIT_MS = 5_000;

/** The UTC day of `ms`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

const empty = (day: string): DaySpend => ({ day, spentMicro: 0, toppedUpMicro: 0, calls: 0 });

/**
 * The day's spend kept on disk (`<dir>/spend.json`), so that a restarted bridge, or another bridge sharing the
 * folder, keeps counting from the same total. Each change is a read-modify-write under a lock file (`O_EXCL`),
 * written to a temporary file and renamed over the old one (atomic on POSIX), so a crash leaves the old or the
 * new total, never half a file. The day is the UTC day of `now()`; a new day starts from zero.
 */
export class SpendStore {
  private readonly file: string;
  private readonly lock: string;

  constructor(
    private readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = join(dir, SPEND_FILE);
    this.lock = join(dir, `${SPEND_FILE}.lock`);
  }

  /** Today's spend as on disk (zero when the file is from another day, absent, or unreadable). */
  read(): DaySpend {
    const today = utcDay(this.now());
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.file, "utf8"));
    } catch {
      return empty(today);
    }
    const r = raw as Partial<Record<string, unknown>>;
    if (r.day !== today) return empty(today);
    const n = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
    return { day: today, spentMicro: n(r.spent_micro_usd), toppedUpMicro: n(r.topped_up_micro_usd), calls: n(r.calls) };
  }

  /**
   * Applies `change` to today's spend atomically (under the lock, from the file as it is now) and writes it.
   * `change` returns the new spend, or a value of its own to refuse (nothing is written); `update` resolves
   * with what `change` returned.
   * @throws Error when the folder cannot be written, or the lock is held for longer than 5 s.
   */
  async update<T>(change: (s: DaySpend) => DaySpend | T): Promise<DaySpend | T> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    await this.acquire();
    try {
      const next = change(this.read());
      if (isSpend(next)) this.write(next);
      return next;
    } finally {
      rmSync(this.lock, { force: true });
    }
  }

  private write(s: DaySpend): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    const body = { day: s.day, spent_micro_usd: s.spentMicro, spent_usd: s.spentMicro / 1e6, topped_up_micro_usd: s.toppedUpMicro, calls: s.calls };
    writeFileSync(tmp, `${JSON.stringify(body)}\n`, { mode: 0o600 });
    renameSync(tmp, this.file);
  }

  private async acquire(): Promise<void> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        closeSync(openSync(this.lock, "wx", 0o600));
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      try {
        if (Date.now() - statSync(this.lock).mtimeMs > STALE_LOCK_MS) rmSync(this.lock, { force: true });
      } catch {
        // Released meanwhile: try again.
      }
      if (Date.now() > deadline) throw new Error(`the spend file's lock ${this.lock} is held by another process`);
      await sleep(10);
    }
  }
}

function isSpend(v: unknown): v is DaySpend {
  return typeof v === "object" && v !== null && "spentMicro" in v && "day" in v;
}
