/**
 * The result file every benchmark writes and `npm run bench:report` reads (docs/benchmarks.md explains
 * the contract): `bench/results/<name>.json` holding one table and the ratios worth quoting.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Cell = string | number;

/** Where a result was measured. */
export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  /** `redis-server --version`'s version, or 'none on PATH'. */
  redis: string;
  /** The 1-minute load average when the result was written: how busy the machine was. */
  load1?: number;
}

/** A chart of the table: bars of column `y` per `x`, grouped by `group` when given. */
export interface ChartHint {
  title: string;
  x: string;
  y: string;
  group?: string;
  /** Draw one small chart per value of this column. */
  facet?: string;
}

export interface BenchResult {
  /** The file's base name and the `bench:<name>` script that wrote it. */
  name: string;
  title: string;
  /** The command line that produced it, as a reader would type it. */
  command: string;
  /** A `--smoke` run: it proves the benchmark works, its figures mean nothing. */
  smoke: boolean;
  /** ISO-8601 UTC. */
  recordedAt: string;
  columns: string[];
  rows: Cell[][];
  /** Named comparisons against the baseline measured in the same run, e.g. `idle_p99_over_bullmq_p99`. */
  ratios: Record<string, number>;
  /** What a reader needs to know to read the table: units, scale factors, caveats. */
  notes: string[];
  machine: Machine;
  /** The charts the report draws; by default bars of the first numeric column per first column. */
  charts?: ChartHint[];
}

export const DEFAULT_RESULTS_DIR = fileURLToPath(new URL('results/', import.meta.url));

/** The `parseArgs` options every benchmark takes: `--smoke` and `--results <dir>`. */
export const resultOptions = {
  smoke: { type: 'boolean', default: false },
  results: { type: 'string', default: DEFAULT_RESULTS_DIR },
} as const;

/** The parsed options of a run: `resultOptions` and the benchmark's own. */
export type RunOptions = { results: string; smoke: boolean } & Record<string, string | boolean | undefined>;

/**
 * A numeric option of a run: as given, else its `--smoke` size in a smoke run and its full size
 * otherwise. Anything but a positive number is refused before the benchmark starts anything.
 */
export function sizeOption(run: RunOptions, name: string, full: number, smoke = full): number {
  const given = run[name];
  const value = typeof given === 'string' ? Number(given) : run.smoke ? smoke : full;
  if (!(value > 0)) throw new RangeError(`--${name} must be a positive number, got ${given}`);
  return value;
}

/**
 * The options a run was given, as its command line: `--smoke` when set and every option of its own
 * that was passed (`--results` is left out: it says where the file went, not what was measured).
 */
function givenArgs(values: RunOptions): string {
  return Object.entries(values)
    .flatMap(([name, value]) => {
      if (name === 'results' || value === undefined || value === false) return [];
      return value === true ? [`--${name}`] : [`--${name} ${value}`];
    })
    .join(' ');
}

/** Writes `<run.results>/<name>.json`, recording the run's options as its command and smoke flag. */
export async function writeBenchResult(
  run: RunOptions,
  result: Omit<BenchResult, 'recordedAt' | 'command' | 'machine' | 'smoke'>,
): Promise<string> {
  const args = givenArgs(run);
  const full: BenchResult = {
    ...result,
    smoke: run.smoke,
    command: `npm run bench:${result.name}${args ? ` -- ${args}` : ''}`,
    recordedAt: new Date().toISOString(),
    machine: thisMachine(),
  };
  await mkdir(run.results, { recursive: true });
  const path = join(run.results, `${result.name}.json`);
  await writeFile(path, `${JSON.stringify(full, null, 2)}\n`);
  return path;
}

/** The table as aligned plain text, numbers right-aligned. */
export function formatTable(columns: string[], rows: Cell[][]): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: Cell[]) =>
    cells
      .map((cell, i) =>
        typeof cell === 'number' ? String(cell).padStart(widths[i]!) : String(cell).padEnd(widths[i]!),
      )
      .join('  ')
      .trimEnd();
  return [line(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function thisMachine(): Machine {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${type()} ${release()}`,
    node: process.version,
    redis: redisVersion(),
    load1: Math.round(loadavg()[0]! * 10) / 10,
  };
}

function redisVersion(): string {
  try {
    const banner = execFileSync('redis-server', ['--version'], { encoding: 'utf8' });
    return /v=(\S+)/.exec(banner)?.[1] ?? banner.trim();
  } catch {
    return 'none on PATH';
  }
}

/** Checks a result file's shape; the report and the smoke test read results through it. */
export function parseBenchResult(json: string, origin: string): BenchResult {
  const value = JSON.parse(json) as Partial<BenchResult>;
  const problem = (() => {
    if (typeof value.name !== 'string' || typeof value.title !== 'string')
      return 'name and title must be strings';
    if (!Array.isArray(value.columns) || !value.columns.every((c) => typeof c === 'string'))
      return 'columns must be an array of strings';
    if (!Array.isArray(value.rows) || value.rows.length === 0) return 'rows must be a non-empty array';
    const width = value.columns.length;
    const cell = (c: unknown) => typeof c === 'string' || (typeof c === 'number' && Number.isFinite(c));
    if (!value.rows.every((r) => Array.isArray(r) && r.length === width && r.every(cell)))
      return `every row must hold ${width} strings or finite numbers`;
    if (typeof value.ratios !== 'object' || value.ratios === null) return 'ratios must be an object';
    if (!Object.values(value.ratios).every((r) => typeof r === 'number' && Number.isFinite(r)))
      return 'every ratio must be a finite number';
    return undefined;
  })();
  if (problem) throw new Error(`${origin}: ${problem}`);
  return { notes: [], smoke: false, command: `npm run bench:${value.name}`, ...value } as BenchResult;
}
