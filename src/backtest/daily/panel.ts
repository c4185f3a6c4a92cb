/**
 * Loads the daily per-symbol CSV files of a Coinalyze-format folder (the format of
 * `shared/data/real/coinalyze-daily/`, described in its README) into one panel: one row per UTC day, one
 * column per symbol and field. Source of those files: Coinalyze's daily aggregates of Binance USDT-margined
 * perpetuals (`<SYM>USDT_PERP.A`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The five files and the column suffixes read from each (`<SYM>USDT_PERP.A_<suffix>`). */
export const PANEL_FILES = {
  liquidations: ["longliq", "shortliq"],
  "open-interest": ["oi"],
  "close-volume": ["close", "volume"],
  "funding-rate": ["fr"],
  "long-short": ["ls_ratio"],
} as const;

/** One symbol's daily series, aligned with {@link Panel.days}; NaN where the file has no value. */
export interface SymbolSeries {
  /** Coin liquidated on each side that day, base-asset units. */
  longLiq: Float64Array;
  shortLiq: Float64Array;
  /** Open interest at the day's close, base-asset units. */
  oi: Float64Array;
  /** Daily close, USDT per coin. */
  close: Float64Array;
  /** Volume traded that day, base-asset units. */
  volume: Float64Array;
  /** Funding rate per 8 h, percent (0.01 = 0.01%). */
  fundingPct8h: Float64Array;
  /** Binance long/short account ratio. */
  lsRatio: Float64Array;
}

/** Daily panel: `days` sorted ascending (YYYY-MM-DD), `symbols` with every field's series. */
export interface Panel {
  days: string[];
  symbols: Map<string, SymbolSeries>;
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;
const COLUMN_RE = /^(.+?)USDT_PERP\.A_(.+)$/;

/** Thrown when a file of the folder is missing or malformed. */
export class PanelError extends Error {}

/** One CSV file as a map day → row cells, with its header. */
function readCsv(path: string): { header: string[]; rows: Map<string, string[]> } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new PanelError(`cannot read ${path}`);
  }
  const lines = text.split(/\r?\n/).filter((l) => l.length > 0);
  if (lines.length < 2) throw new PanelError(`${path}: no data rows`);
  const header = lines[0]!.split(",");
  const rows = new Map<string, string[]>();
  for (const line of lines.slice(1)) {
    const cells = line.split(",");
    const day = cells[0]!;
    if (!DAY_RE.test(day)) throw new PanelError(`${path}: first column must be a YYYY-MM-DD day, got '${day}'`);
    if (cells.length !== header.length) throw new PanelError(`${path}: row ${day} has ${cells.length} cells, header ${header.length}`);
    rows.set(day, cells);
  }
  return { header, rows };
}

const FIELD_OF: Record<string, keyof SymbolSeries> = {
  longliq: "longLiq",
  shortliq: "shortLiq",
  oi: "oi",
  close: "close",
  volume: "volume",
  fr: "fundingPct8h",
  ls_ratio: "lsRatio",
};

/**
 * Reads `liquidations.csv`, `open-interest.csv`, `close-volume.csv`, `funding-rate.csv` and `long-short.csv` of
 * `dir`. Days are the union of the files' days; a symbol is kept when every file has its columns (the
 * liquidation file has fewer symbols than the others). Empty or non-numeric cells become NaN.
 * @throws PanelError when a file is missing, a row is malformed, or no symbol is in every file.
 */
export function loadPanel(dir: string): Panel {
  const files = Object.keys(PANEL_FILES) as (keyof typeof PANEL_FILES)[];
  const csvs = files.map((f) => ({ file: f, ...readCsv(join(dir, `${f}.csv`)) }));
  const days = [...new Set(csvs.flatMap((c) => [...c.rows.keys()]))].sort();
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  const columns = new Map<string, Map<keyof SymbolSeries, { csv: (typeof csvs)[number]; col: number }>>();
  for (const csv of csvs) {
    csv.header.forEach((name, col) => {
      const m = COLUMN_RE.exec(name);
      if (!m || col === 0) return;
      const field = FIELD_OF[m[2]!];
      if (!field || !(PANEL_FILES[csv.file] as readonly string[]).includes(m[2]!)) return;
      const sym = m[1]!;
      if (!columns.has(sym)) columns.set(sym, new Map());
      columns.get(sym)!.set(field, { csv, col });
    });
  }
  const symbols = new Map<string, SymbolSeries>();
  const allFields = Object.values(FIELD_OF);
  for (const [sym, cols] of [...columns.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    if (!allFields.every((f) => cols.has(f))) continue;
    const series = Object.fromEntries(allFields.map((f) => [f, new Float64Array(days.length).fill(NaN)])) as unknown as SymbolSeries;
    for (const [field, { csv, col }] of cols) {
      for (const [day, cells] of csv.rows) {
        const cell = cells[col]!;
        const v = cell === "" ? NaN : Number(cell);
        series[field][dayIndex.get(day)!] = Number.isFinite(v) ? v : NaN;
      }
    }
    symbols.set(sym, series);
  }
  if (!symbols.size) throw new PanelError(`${dir}: no symbol has columns in all five files`);
  return { days, symbols };
}
