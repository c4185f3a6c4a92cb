/**
 * The summary of the last `marketgate doctor` run, kept in `DATA_DIR/doctor.json` and shown by `/api/v1/status`
 * (which reads the file on each call; a service never runs the checks itself).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.js";
import type { DoctorReport, FailureKind } from "./run.js";

/** File of the last run's summary under `DATA_DIR`. */
export const DOCTOR_FILE = "doctor.json";

/** The summary kept in `DATA_DIR/doctor.json` and shown by `/api/v1/status`. */
export interface DoctorSummary {
  ran_at: string;
  data_mode: Config["dataMode"];
  ok: boolean;
  checks: number;
  failed: Array<{ venue: string; endpoint: string; status: "fail" | "skipped"; kind: FailureKind | null; message: string | null; field: string | null }>;
}

/** The summary of a report. */
export function summarize(report: DoctorReport): DoctorSummary {
  return {
    ran_at: report.ranAt,
    data_mode: report.dataMode,
    ok: report.ok,
    checks: report.results.length,
    failed: report.results
      .filter((r) => r.status !== "ok")
      .map((r) => ({
        venue: r.venue,
        endpoint: r.endpoint,
        status: r.status as "fail" | "skipped",
        kind: r.failure?.kind ?? null,
        message: r.failure?.message ?? null,
        field: r.failure?.field ?? null,
      })),
  };
}

/** Writes the summary to `<dataDir>/doctor.json` (creating the folder); returns the path, or undefined for `:memory:`. */
export function saveSummary(dataDir: string, summary: DoctorSummary): string | undefined {
  if (dataDir === ":memory:") return undefined;
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, DOCTOR_FILE);
  writeFileSync(path, `${JSON.stringify(summary, null, 2)}\n`);
  return path;
}

/** The last saved summary, or null when there is none (or it cannot be read). */
export function readSummary(dataDir: string): DoctorSummary | null {
  if (dataDir === ":memory:") return null;
  try {
    const s = JSON.parse(readFileSync(join(dataDir, DOCTOR_FILE), "utf8")) as DoctorSummary;
    return typeof s.ran_at === "string" && typeof s.ok === "boolean" && Array.isArray(s.failed) ? s : null;
  } catch {
    return null;
  }
}
