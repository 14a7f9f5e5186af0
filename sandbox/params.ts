/**
 * Reading official request parameters the way the official APIs check them: a missing or mistyped
 * field is refused with a message naming it. GET parameters that are arrays or objects arrive as
 * one JSON-encoded query value, as the Business API expects.
 */
import { OfficialError } from './official-error';

export interface ParamErrors {
  missing(field: string): OfficialError;
  invalid(field: string, why?: string): OfficialError;
}

/** A request body as an object: anything else (absent, an array, a scalar) reads as empty. */
export function objectBody(raw: unknown): Record<string, unknown> {
  return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
}

type Source = Record<string, unknown>;

export class Params {
  constructor(
    private readonly source: Source,
    private readonly errors: ParamErrors,
    /** Query strings carry everything as text; bodies carry JSON types. */
    private readonly fromQuery: boolean,
  ) {}

  private raw(name: string): unknown {
    const path = name.split('.');
    let value: unknown = this.source;
    for (const key of path) {
      if (value === null || typeof value !== 'object') return undefined;
      value = (value as Source)[key];
    }
    return value;
  }

  has(name: string): boolean {
    const v = this.raw(name);
    return v !== undefined && v !== null && v !== '';
  }

  string(name: string, opts: { max?: number; oneOf?: readonly string[] } = {}): string | undefined {
    const v = this.raw(name);
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw this.errors.invalid(name, 'Not a valid string.');
    if (opts.max !== undefined && v.length > opts.max) throw this.errors.invalid(name, `Length must be at most ${opts.max}.`);
    if (opts.oneOf && !opts.oneOf.includes(v)) throw this.errors.invalid(name, `Must be one of: ${opts.oneOf.join(', ')}.`);
    return v;
  }

  requiredString(name: string, opts: { max?: number; oneOf?: readonly string[] } = {}): string {
    const v = this.string(name, opts);
    if (v === undefined) throw this.errors.missing(name);
    return v;
  }

  boolean(name: string): boolean | undefined {
    const v = this.raw(name);
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v === 'boolean') return v;
    if (this.fromQuery && (v === 'true' || v === 'false')) return v === 'true';
    throw this.errors.invalid(name, 'Not a valid boolean.');
  }

  integer(name: string, opts: { min?: number; max?: number } = {}): number | undefined {
    const v = this.raw(name);
    if (v === undefined || v === null || v === '') return undefined;
    const n = typeof v === 'number' ? v : this.fromQuery && typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n)) throw this.errors.invalid(name, 'Not a valid integer.');
    if ((opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max)) {
      throw this.errors.invalid(name, `Must be between ${opts.min ?? '-inf'} and ${opts.max ?? 'inf'}.`);
    }
    return n;
  }

  /** A JSON value: parsed from its query text, or taken as sent in a body. */
  json<T>(name: string, check: (v: unknown) => v is T, what: string): T | undefined {
    let v = this.raw(name);
    if (v === undefined || v === null || v === '') return undefined;
    if (this.fromQuery && typeof v === 'string') {
      try {
        v = JSON.parse(v);
      } catch {
        throw this.errors.invalid(name, `Not a valid JSON ${what}.`);
      }
    }
    if (!check(v)) throw this.errors.invalid(name, `Not a valid ${what}.`);
    return v;
  }

  stringArray(name: string, opts: { max?: number } = {}): string[] | undefined {
    const v = this.json(name, (x): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string'), 'list of strings');
    if (v && opts.max !== undefined && v.length > opts.max) throw new OfficialError(40011, `${name}: Too many items, at most ${opts.max}.`);
    return v;
  }

  object(name: string): Record<string, unknown> | undefined {
    return this.json(name, (x): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x), 'object');
  }
}

/** Length as the platforms count caption limits: UTF-16 code units. */
export function utf16Length(text: string): number {
  return text.length;
}
