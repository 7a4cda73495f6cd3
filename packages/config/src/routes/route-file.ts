import { readFile } from 'node:fs/promises';
import { RouteTable } from './route-table.js';

export interface RouteFileOptions {
  /** ROUTES_FILE: a path, mounted from a ConfigMap on Kubernetes. */
  path: string;
  /** ROUTES_RELOAD_MS: how often the file is read again for a change. */
  reloadMs: number;
  /** A changed file was read and is in force now. */
  onReload?: (table: RouteTable) => void;
  /** A changed file could not be used; the table in force stays. */
  onInvalid?: (error: Error) => void;
}

/**
 * The route table of a file, read again every `reloadMs` so that a change reaches new threads without a
 * restart, once two reads in a row find it. A file that cannot be read or parsed at the start fails the start; later, it is reported
 * and the table in force stays, so that a bad edit never drops the routes of a running fleet.
 */
export class RouteFile {
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();
  /** The text last refused, so that a bad file is reported once, not at every read. */
  private refused: string | undefined;
  /** A changed text read once: it is used when the next read finds it again (see reload). */
  private seen: string | undefined;

  private constructor(
    private readonly options: RouteFileOptions,
    private text: string,
    private table: RouteTable,
  ) {}

  static async open(options: RouteFileOptions): Promise<RouteFile> {
    const text = await readFile(options.path, 'utf8');
    const file = new RouteFile(options, text, RouteTable.parse(text, options.path));
    file.timer = setInterval(() => {
      file.reading = file.reading.then(() => file.reload());
    }, options.reloadMs);
    file.timer.unref();
    return file;
  }

  get current(): RouteTable {
    return this.table;
  }

  /** Reads the file now (as the timer does), resolving once a change is in force or reported. */
  reloadNow(): Promise<void> {
    this.reading = this.reading.then(() => this.reload());
    return this.reading;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async reload(): Promise<void> {
    let text: string | undefined;
    try {
      text = await readFile(this.options.path, 'utf8');
      if (text === this.text || text === this.refused) return;
      // A file written in place is empty, then partial, for a moment, and an empty file is a valid
      // table with no routes: a change is used only once two reads agree, one period apart.
      const settled = text === this.seen;
      this.seen = text;
      if (!settled) return;
      const table = RouteTable.parse(text, this.options.path);
      this.text = text;
      this.table = table;
      this.options.onReload?.(table);
    } catch (error) {
      this.refused = text;
      this.options.onInvalid?.(error as Error);
    }
  }
}
