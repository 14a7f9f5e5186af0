/**
 * How the API commands print: on a terminal, readable tables and a progress line on stderr; when
 * stdout is piped (or with --json), the envelope's data as JSON on stdout and nothing decorative,
 * so `vps … | jq` always reads one JSON document.
 */

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** Wider values are cut with an ellipsis (ids and URLs stay readable; JSON keeps them whole). */
  maxWidth?: number;
}

/** The table of a list result: its columns; a single record is printed as field: value lines. */
export type View<T> = readonly Column<T>[];

interface Stream {
  isTTY?: boolean;
  write(text: string): unknown;
}

const DEFAULT_MAX_WIDTH = 40;
const BAR_WIDTH = 24;

/** JSON when asked for, or when stdout is not a terminal (a pipe, a file, a test). */
export function wantsJson(stdout: Pick<Stream, 'isTTY'>, jsonFlag: boolean | undefined): boolean {
  return jsonFlag === true || stdout.isTTY !== true;
}

/** A cell's text: absent values as "-", objects as compact JSON, on one line. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

function fit(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text.padEnd(width);
}

/** Rows under a header, each column as wide as its widest cell up to its maxWidth. */
export function renderTable<T>(rows: readonly T[], columns: View<T>): string {
  const cells = rows.map((row) => columns.map((c) => cellText(c.value(row))));
  const widths = columns.map((c, i) =>
    Math.min(c.maxWidth ?? DEFAULT_MAX_WIDTH, Math.max(c.header.length, ...cells.map((r) => r[i]!.length))),
  );
  const line = (texts: string[]) =>
    texts
      .map((t, i) => fit(t, widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/** One record as aligned `field  value` lines, nothing cut: a single record is read whole. */
export function renderFields(record: Record<string, unknown>): string {
  const names = Object.keys(record);
  const width = Math.max(0, ...names.map((n) => n.length));
  return names.map((n) => `${n.padEnd(width)}  ${cellText(record[n])}`).join('\n') + '\n';
}

/** `[#####·····]` for a fraction in 0..1. */
export function bar(fraction: number, width = BAR_WIDTH): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

export function uploadProgressText(sentBytes: number, totalBytes: number | undefined): string {
  if (totalBytes === undefined || totalBytes === 0) return `uploading ${formatBytes(sentBytes)}`;
  const fraction = sentBytes / totalBytes;
  return `uploading ${bar(fraction)} ${Math.floor(fraction * 100)}% ${formatBytes(sentBytes)} / ${formatBytes(totalBytes)}`;
}

export function pollProgressText(attempt: number, attempts: number, status: string): string {
  return `polling ${bar(attempt / attempts)} attempt ${attempt}/${attempts} ${status}`;
}

/** A line on stderr rewritten in place; nothing at all when stderr is not a terminal. */
export class ProgressLine {
  private shown: string | undefined;
  constructor(private readonly stderr: Stream) {}

  /** Writes only a changed text: a large upload reports every chunk, the terminal needs far fewer. */
  update(text: string): void {
    if (this.stderr.isTTY !== true || text === this.shown) return;
    this.stderr.write(`\r${text}\x1b[K`);
    this.shown = text;
  }

  /** Ends the line so what follows starts on its own. */
  done(): void {
    if (this.shown === undefined) return;
    this.stderr.write('\n');
    this.shown = undefined;
  }
}

export class Output {
  readonly json: boolean;
  readonly progress: ProgressLine;

  constructor(
    jsonFlag: boolean | undefined,
    private readonly stdout: Stream = process.stdout,
    private readonly stderr: Stream = process.stderr,
  ) {
    this.json = wantsJson(stdout, jsonFlag);
    this.progress = new ProgressLine(stderr);
  }

  /** A result: a page (`items`) as a table with its next cursor, anything else as fields. */
  print<T>(data: unknown, view?: View<T>): void {
    this.progress.done();
    if (this.json) {
      this.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
      return;
    }
    const page = data as { items?: unknown; nextCursor?: unknown; hasMore?: unknown };
    if (view && Array.isArray(page.items)) {
      this.stdout.write(page.items.length === 0 ? '(none)\n' : renderTable(page.items as T[], view));
      // The events page names a cursor on its last page too (to read later events); hasMore tells.
      if (typeof page.nextCursor === 'string' && page.nextCursor !== '' && page.hasMore !== false)
        this.stdout.write(`next page: --cursor ${page.nextCursor}\n`);
      return;
    }
    this.stdout.write(renderFields(data as Record<string, unknown>));
  }

  /** Notes for a person (warnings, retries): stderr, so they never mix with the JSON on stdout. */
  note(text: string): void {
    this.progress.done();
    this.stderr.write(`vps: ${text}\n`);
  }
}
