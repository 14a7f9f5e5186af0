/**
 * Between the service's flat camelCase fields and the official nested snake_case structures.
 * Each endpoint's mapping is a table of [service field, official dotted path]; the same table
 * drives both directions, so a field can never map one way and not the other. Fields a table does
 * not name are flattened by one rule: nested objects join their keys (`text.body` → `textBody`).
 */
export type FieldTable = ReadonlyArray<readonly [service: string, official: string]>;

type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function camelCase(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function readPath(source: Json, path: string): unknown {
  let value: unknown = source;
  for (const key of path.split('.')) {
    if (!isPlainObject(value)) return undefined;
    value = value[key];
  }
  return value;
}

function writePath(target: Json, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (!isPlainObject(node[key])) node[key] = {};
    node = node[key] as Json;
  }
  node[keys[keys.length - 1]!] = value;
}

/** The official request body from service fields; fields left undefined are not sent. */
export function toOfficial(table: FieldTable, fields: Json, base: Json = {}): Json {
  const out: Json = structuredClone(base);
  for (const [service, official] of table) {
    const value = fields[service];
    if (value !== undefined) writePath(out, official, value);
  }
  return out;
}

/**
 * Flat camelCase fields from an official object. Tabled fields take their service names; the rest
 * are flattened by the joining rule, recursively into arrays.
 */
export function fromOfficial(table: FieldTable, official: Json): Json {
  const out: Json = {};
  const taken = new Set<string>();
  for (const [service, path] of table) {
    const value = readPath(official, path);
    taken.add(path);
    if (value !== undefined) out[service] = flattenValue(value);
  }
  flattenInto(out, official, '', taken);
  return out;
}

/** Flattens with no table: every field by the joining rule. */
export function flattenOfficial(official: Json): Json {
  return fromOfficial([], official);
}

function flattenValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(flattenValue);
  if (isPlainObject(value)) return flattenOfficial(value);
  return value;
}

function flattenInto(out: Json, node: Json, prefix: string, taken: ReadonlySet<string>): void {
  for (const [key, value] of Object.entries(node)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (taken.has(path)) continue;
    // A tabled field below this object still lets its siblings be flattened.
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      flattenInto(out, value, path, taken);
      continue;
    }
    const name = camelCase(path.replace(/\./g, '_'));
    if (!(name in out)) out[name] = flattenValue(value);
  }
}
