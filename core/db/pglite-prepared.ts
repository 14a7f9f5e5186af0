/**
 * Server-side prepared statements for embedded PGlite. PGlite's `query` parses and plans its text
 * on every call, and on its one thread that was half the cost of the service's larger statements
 * (a batched outcome write: 0.82 ms unprepared, 0.40 ms prepared). A statement seen again is
 * prepared once under a name of its own and run with `EXECUTE`, its parameters written as
 * literals that Postgres turns into the types it inferred when preparing, as it does for bound
 * parameters. Statements whose parameters are not plain values, and any past the cache's bound,
 * run as before.
 *
 * A statement is only ever prepared outside a transaction, so that no rollback can take a
 * prepared statement away from under a later EXECUTE; statements seen inside transactions are
 * prepared once the transaction has let go of the database.
 */

/** Prepared statements kept at most: the service's distinct statements, with room to spare. */
export const MAX_PREPARED_STATEMENTS = 512;

/** Times a text runs unprepared before it is prepared: one-off statements (migrations) never are. */
export const PREPARE_AFTER_RUNS = 2;

/**
 * Whether EXECUTE failed because its statement cannot serve as prepared any more: a plan whose
 * result type a schema change altered (0A000 with that message; the code alone means any feature
 * not supported), or a statement the session does not have (26000).
 */
export function preparedStatementLost(err: { code?: string; message?: string }): boolean {
  if (err.code === '26000') return true;
  return err.code === '0A000' && /cached plan must not change result type/.test(err.message ?? '');
}

type Scalar = string | number | boolean | bigint | null | undefined;
/** A parameter a literal can carry: a scalar, or a one-dimensional array of them (`text[]` and the like). */
type Plain = Scalar | readonly Scalar[];

/**
 * Values a literal carries unchanged. A string with NUL is left to the bound path: Postgres refuses
 * it there, while in a query text PGlite's protocol would cut the text at it.
 */
function isScalar(value: unknown): value is Scalar {
  if (typeof value === 'string') return !value.includes('\u0000');
  const type = typeof value;
  return value === null || value === undefined || type === 'number' || type === 'boolean' || type === 'bigint';
}

function isPlain(value: unknown): value is Plain {
  return isScalar(value) || (Array.isArray(value) && value.every(isScalar));
}

/** An array in Postgres's text form: each element double-quoted (its `"` and `\` escaped), NULL bare. */
function arrayText(values: readonly Scalar[]): string {
  const element = (v: Scalar) => (v === null || v === undefined ? 'NULL' : `"${String(v).replace(/[\\"]/g, (c) => `\\${c}`)}"`);
  return `{${values.map(element).join(',')}}`;
}

/**
 * A parameter as an SQL literal of unknown type, so that EXECUTE coerces it to the parameter's
 * type. Postgres's coercion of text is what the bound path does for every value our statements
 * pass (strings, numbers for numeric columns, `text[]` arrays); it is not for two shapes PGlite's
 * serializers would convert first: a number for a timestamp (epoch milliseconds) and an array for
 * a json column. No statement passes either; one that did would fail from its third run. Dollar-quoted with a tag the value does not contain, which needs no escaping and does not
 * depend on `standard_conforming_strings`.
 */
export function literalOf(value: Plain): string {
  if (value === null || value === undefined) return 'NULL';
  const text = Array.isArray(value) ? arrayText(value) : String(value as Exclude<Scalar, null | undefined>);
  // The quote ends at the first `$tag$` of value and closing delimiter together, so that must be
  // the closing one. The tags the value holds are found in one pass (values are written by anyone:
  // trying tag after tag against the whole value would be quadratic in the tags it holds); a tag
  // that the value's end completes (a value ending in `$p`) is found by the final check.
  const held = new Set<string>();
  for (const m of text.matchAll(/\$(p\d*)(?=\$)/g)) held.add(m[1]!);
  for (let n = -1; ; n++) {
    const tag = n < 0 ? 'p' : `p${n}`;
    if (held.has(tag)) continue;
    if (`${text}$${tag}$`.indexOf(`$${tag}$`, Math.max(0, text.length - tag.length - 2)) === text.length) return `$${tag}$${text}$${tag}$`;
    held.add(tag);
  }
}

/** What to run for one query: its text as given, or the EXECUTE of its prepared statement. */
export type QueryPlan = { kind: 'as-is'; prepare?: { name: string; statement: string } } | { kind: 'execute'; text: string };

export class PreparedStatements {
  private readonly runs = new Map<string, number>();
  private readonly names = new Map<string, string>();
  /** Being prepared, or refused by PREPARE (a statement that cannot be prepared): run as given. */
  private readonly settled = new Set<string>();
  private nextName = 0;

  /**
   * How to run `text` with `params`. `as-is` may carry a PREPARE for the caller to send outside any
   * transaction and then report with `prepared` or `refused`.
   */
  plan(text: string, params: readonly unknown[]): QueryPlan {
    const name = this.names.get(text);
    if (name !== undefined) {
      if (!params.every(isPlain)) return { kind: 'as-is' };
      const args = params.length === 0 ? '' : `(${(params as Plain[]).map(literalOf).join(', ')})`;
      return { kind: 'execute', text: `EXECUTE ${name}${args}` };
    }
    if (this.settled.has(text) || !params.every(isPlain)) return { kind: 'as-is' };
    const seen = (this.runs.get(text) ?? 0) + 1;
    if (seen <= PREPARE_AFTER_RUNS || this.names.size + this.settled.size >= MAX_PREPARED_STATEMENTS) {
      // Bounded too, so that a stream of one-off texts cannot grow it without end.
      if (this.runs.has(text) || this.runs.size < MAX_PREPARED_STATEMENTS * 4) this.runs.set(text, seen);
      return { kind: 'as-is' };
    }
    this.runs.delete(text);
    this.settled.add(text);
    const prepared = `vps_s${this.nextName++}`;
    return { kind: 'as-is', prepare: { name: prepared, statement: `PREPARE ${prepared} AS ${text}` } };
  }

  /** The PREPARE succeeded: later runs execute it. */
  prepared(text: string, name: string): void {
    this.settled.delete(text);
    this.names.set(text, name);
  }

  /** PREPARE refused the text (a statement that cannot be prepared): it keeps running as given. */
  refused(text: string): void {
    this.settled.add(text);
  }

  /**
   * The prepared statement failed as a prepared one (its plan no longer fits the tables, or the
   * session lost it): the text runs as given from now on.
   */
  forget(text: string): void {
    this.names.delete(text);
    this.settled.add(text);
  }

  /** Forgets every statement, as a new session must. */
  clear(): void {
    this.runs.clear();
    this.names.clear();
    this.settled.clear();
  }
}
