/**
 * Hostile input for the fuzz test: a seeded generator, the /v1 routes read from the gateway's own
 * OpenAPI document, valid-looking values built from their schemas, the malformed values a client
 * (or an attacker) may send, and raw HTTP over loopback, since fetch refuses to send most of them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { ERROR_CODES, isErrorCode } from '../../core/errors';

/** mulberry32: small, fast and the same on every machine, so a failing seed replays exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(rand: () => number, items: readonly T[], count: number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < count && pool.length) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
  return out;
}

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  examples?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
};

export interface FuzzRoute {
  method: string;
  /** The OpenAPI path, parameters as `{name}`. */
  path: string;
  params: string[];
  query: Record<string, Schema>;
  requiredQuery: string[];
  /** The JSON body's schema, or undefined when the route takes none (or multipart only). */
  body?: Schema;
  multipart: boolean;
  /** A write (the document lists 1003 for writes only). */
  write: boolean;
}

/** Every operation of the OpenAPI document the gateway builds from its routes as they are added. */
export function routesOf(doc: {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ in: string; name: string; required?: boolean; schema: Schema }>;
        requestBody?: { content: Record<string, { schema: Schema }> };
        responses?: object;
      }
    >
  >;
}): FuzzRoute[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const parameters = op.parameters ?? [];
      const content = op.requestBody?.content ?? {};
      return {
        method: method.toUpperCase(),
        path,
        params: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [p.name, p.schema])),
        requiredQuery: parameters.filter((p) => p.in === 'query' && p.required).map((p) => p.name),
        body: content['application/json']?.schema,
        multipart: 'multipart/form-data' in content,
        write: JSON.stringify(op.responses ?? {}).includes('1003'),
      };
    }),
  );
}

/** A value the schema accepts (its example, first choice or smallest), for a request that reaches the route's rules. */
export function exampleOf(schema: Schema, field: string, urlBase: string): unknown {
  if (schema.examples?.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.anyOf?.length) return exampleOf(schema.anyOf[0]!, field, urlBase);
  switch (schema.type) {
    case 'integer':
    case 'number':
      return Math.min(Math.max(schema.minimum ?? 1, 1), schema.maximum ?? Number.MAX_SAFE_INTEGER);
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: Math.max(schema.minItems ?? 1, 1) }, () => exampleOf(schema.items ?? { type: 'string' }, field, urlBase));
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((k) => [k, exampleOf(schema.properties?.[k] ?? {}, k, urlBase)]));
    default:
      if (schema.format === 'date-time') return new Date(Date.now() - 3_600_000).toISOString();
      if (schema.format === 'date') return new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
      if (field === 'region') return 'US';
      if (field === 'language') return 'en';
      // Loopback only: a valid-looking URL may be fetched by the service or the emulator.
      if (/url|uri/i.test(field)) return `${urlBase}/a.jpg`;
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 4));
  }
}

/** Fields that name something a customer owns: where another customer's id is substituted. */
export const ID_FIELD =
  /^(id|taskId|account|accountId|seatId|fileId|videoId|videoIds|publishId|shareId|itemId|endpointId|conversationId|commentId|commentIds|messageId|mediaId|imageMediaId|autoMessageId|autoMessageIds|productId|cursor|lastEventId|pageToken|referencedMessageId|sharePostItemId)$/;

const deep = (n: number, open: string, close: string) => open.repeat(n) + close.repeat(n);

/** A path parameter (already in URL form; `\xff` stands for the raw byte, sent unencoded). */
export const HOSTILE_PATH_VALUES = [
  '..',
  '../../healthz',
  '..%2f..%2fseats',
  '%2e%2e%2f%2e%2e%2fseats',
  '%2e%2e',
  '..%00',
  '%00',
  'a%2Fb',
  '%2F',
  '%5c..%5c',
  '%E0%A4%A',
  '%C0%AE%C0%AE%C0%AF',
  '%ED%A0%80',
  '%FF%FE',
  '\xff\xfe\xfd',
  '\xc3\x28',
  'x'.repeat(10_000),
  '%F0%9F%8E%AC%E2%80%AE%CC%81',
  '%EF%BB%BF',
  '%E2%80%8B',
  '%20',
  '__proto__',
  'constructor',
  '1e400',
  '-1',
  '99999999999999999999999',
];

/** A query value (URL form), and whole query strings for the duplicate and nested forms. */
export const HOSTILE_QUERY_VALUES = [
  '',
  '%00',
  'a%00b',
  '..%2f..%2f',
  '%E0%A4%A',
  '%FF',
  '\xff\xfe',
  'x'.repeat(12_000),
  '1e400',
  '-1',
  '-0',
  'NaN',
  'Infinity',
  '0x10',
  '99999999999999999999999',
  '1.5',
  'true',
  '%7B%22a%22%3A1%7D',
  '%5B1%2C2%5D',
  '%F0%9F%8E%AC',
  '%ED%A0%80',
  '%E2%80%AE%E2%80%8B',
];
export const hostileQueryStrings = (name: string) => [
  `${name}=a&${name}=b`,
  `${name}=1&${name}=1&${name}=1`,
  `${name}[]=a`,
  `${name}[0]=a&${name}[1]=b`,
  `${name}[__proto__][x]=1`,
  `${name}.x=1`,
  `__proto__=x&${name}=a`,
  `__proto__[polluted]=1`,
  `constructor[prototype][polluted]=1`,
  `${name}`,
  `=${name}`,
  `&&&${name}=&&`,
];

/** A JSON value (as JSON text) for one body field. */
export const HOSTILE_FIELD_JSON = [
  'null',
  'true',
  '0',
  '-0',
  '1e400',
  '-1e400',
  '9007199254740993',
  '123456789012345678901234567890',
  '1.5',
  '""',
  '[]',
  '{}',
  '[null]',
  '[[[]]]',
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"\\ufeff\\u202e\\u200b"',
  '"🎬🇫🇷👩‍👩‍👧"',
  '"e\\u0301"',
  '"../../etc/passwd"',
  '"%2e%2e%2f"',
  JSON.stringify('x'.repeat(300_000)),
  `[${Array(20_000).fill('"x"').join(',')}]`,
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  deep(5_000, '[', ']'),
  deep(2_000, '{"a":', '}').replace(/:}/, ':1}'),
];

/** Whole bodies: deep nesting, size, pollution and things that are not JSON. */
export const HOSTILE_BODIES: Array<{ name: string; body: string | Buffer; contentType?: string }> = [
  { name: '100k nested arrays', body: deep(100_000, '[', ']') },
  { name: '100k nested objects', body: '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000) },
  {
    name: '100k nested objects with a constructor key',
    body: '{"a":'.repeat(100_000) + '{"constructor":{"prototype":1}}' + '}'.repeat(100_000),
  },
  { name: 'a NUL under 50k nested arrays', body: `{"a":${'['.repeat(50_000)}"\\u0000"${']'.repeat(50_000)}}` },
  { name: 'over 1 MiB', body: JSON.stringify({ pad: 'x'.repeat(1_100_000) }) },
  { name: '__proto__ at the top', body: '{"__proto__":{"polluted":true}}' },
  { name: 'constructor.prototype', body: '{"constructor":{"prototype":{"polluted":true}}}' },
  { name: 'duplicate keys', body: '{"a":1,"a":2,"a":{"__proto__":1}}' },
  { name: 'invalid UTF-8', body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]) },
  { name: 'a UTF-8 BOM', body: '\ufeff{}' },
  { name: 'a NUL byte', body: '{"a":"\u0000"}' },
  { name: 'trailing garbage', body: '{}garbage' },
  { name: 'a bare string', body: '"x"' },
  { name: 'a huge number', body: '1e99999' },
  { name: 'text/plain', body: '{}', contentType: 'text/plain' },
  { name: 'form encoded', body: 'a=1&__proto__[x]=1', contentType: 'application/x-www-form-urlencoded' },
  {
    name: 'XML',
    body: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
    contentType: 'application/xml',
  },
  { name: 'UTF-16 JSON', body: Buffer.from('{"a":1}', 'utf16le'), contentType: 'application/json; charset=utf-16' },
  { name: 'a JSON suffix type', body: '{}', contentType: 'application/vnd.api+json' },
  { name: 'a huge Content-Type', body: '{}', contentType: `application/json; ${'x=y; '.repeat(2_000)}` },
  { name: 'multipart without a boundary', body: '--x\r\n\r\n', contentType: 'multipart/form-data' },
  {
    name: 'multipart, unterminated',
    body: '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx',
    contentType: 'multipart/form-data; boundary=b',
  },
  {
    name: 'multipart with hostile names',
    body: '--b\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="../../../etc/passwd\u0000.mp4"\r\nContent-Type: video/mp4\r\n\r\n\u0000\u0000\u0000\u0018ftypisom\r\n--b--\r\n',
    contentType: 'multipart/form-data; boundary=b',
  },
];

/** A guard, not a wait: an answer that never comes fails its request instead of the whole run. */
const ANSWER_TIMEOUT_MS = 15_000;

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The route answered with an SSE stream, which was closed once its head arrived. */
  stream?: boolean;
}

/**
 * One request with whatever method, path, headers and body bytes were given: Node's client sends a
 * path or header value's `\x80`–`\xff` characters as raw bytes. A fresh connection each time, so one
 * request's breakage cannot leak into the next.
 */
export function send(
  baseUrl: string,
  req: { method: string; path: string; headers?: Record<string, string | string[]>; body?: string | Buffer },
): Promise<Answer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let answered = false;
    // A declared length, as most clients send; Node's client would otherwise send the body chunked.
    const length = req.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(req.body)) };
    const r = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers: { ...length, ...req.headers }, agent: false },
      (res) => {
        answered = true;
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          res.destroy();
          return resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', stream: true });
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    // The server may answer (too large, malformed) and close before the whole request is written.
    const fail = (why: string) => reject(new Error(`${req.method} ${req.path.slice(0, 120)}: ${why}`));
    r.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' ? undefined : fail(err.message)));
    r.on('close', () => (answered ? undefined : fail('closed without an answer')));
    r.setTimeout(ANSWER_TIMEOUT_MS, () => r.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
    r.end(req.body);
  });
}

/** Bytes written straight to a socket, for requests Node's client refuses to form. */
export function sendRaw(baseUrl: string, payload: Buffer): Promise<Answer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // Written, not ended: a client's half-close makes Node's server drop the request unanswered.
    const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => socket.write(payload));
    socket.setTimeout(ANSWER_TIMEOUT_MS, () => socket.destroy());
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // An event stream never ends by itself: its head is all there is to judge.
      if (/^content-type: text\/event-stream/im.test(Buffer.concat(chunks).toString('latin1'))) socket.destroy();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? undefined : reject(err)));
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
      const headers = Object.fromEntries(
        head
          .split('\r\n')
          .slice(1)
          .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const stream = String(headers['content-type']).startsWith('text/event-stream');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0),
        headers,
        text: raw.slice(head.length + 4),
        ...(stream ? { stream } : {}),
      });
    });
  });
}

/**
 * What is wrong with an answer, or undefined: every answer is the envelope with a known code, never
 * 5000, with the HTTP status of the code table (so a 5xx only for the upstream codes).
 */
export function envelopeProblem(a: Answer): string | undefined {
  if (a.stream) return a.status === 200 ? undefined : `a stream with HTTP ${a.status}`;
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return `HTTP ${a.status}, not JSON: ${a.text.slice(0, 120)}`;
  }
  const { code, message, data } = (body ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  if (!body || typeof body !== 'object' || Object.keys(body).sort().join() !== 'code,data,message')
    return `not the envelope: ${a.text.slice(0, 120)}`;
  if (typeof code !== 'number' || (code !== 0 && !isErrorCode(code))) return `unknown code ${String(code)}`;
  if (code === 5000) return `5000: ${String(message)}`;
  if (typeof message !== 'string' || !data || typeof data !== 'object' || Array.isArray(data))
    return `bad message or data: ${a.text.slice(0, 120)}`;
  const status = code === 0 ? 200 : ERROR_CODES[code].http;
  return a.status === status ? undefined : `HTTP ${a.status} with code ${code} (the table says ${status})`;
}

/**
 * Suffixes that try to climb out of a static or media folder (URL form; `\xff` and `\\` are sent
 * raw). Each names a file every checkout has outside the console build, or the system's passwd.
 */
export const HOSTILE_TRAVERSALS = [
  '..%2f..%2fpackage.json',
  '%2e%2e/%2e%2e/etc/passwd',
  '%2e%2e%2f%2e%2e%2fpackage.json',
  '..%5c..%5cpackage.json',
  '..\\..\\package.json',
  '%252e%252e%252f%252e%252e%252fpackage.json',
  '....//....//package.json',
  '..%00/package.json',
  '..%2f..%2fpackage.json%00.svg',
  '%c0%ae%c0%ae/%c0%ae%c0%ae/package.json',
  '%ef%bc%8e%ef%bc%8e%2f%ef%bc%8e%ef%bc%8e%2fpackage.json',
  '.%2e/.%2e/.%2e/package.json',
  '..;/..;/package.json',
  '%2fetc%2fpasswd',
  '/etc/passwd',
  'C:%5cWindows%5cwin.ini',
  '..%2f..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
  '.env',
  '.git%2fconfig',
  '%00',
  'a%00b.js',
  '..',
  '%2e%2e',
  '..%2f',
  '\xff\xfe.js',
  '%E0%A4%A',
  'x'.repeat(5_000) + '.js',
];

/** What must never appear in an answer: the marks of a server file read off the disk. */
export const SERVER_FILE_MARKS = ['root:x:0:0', '"devDependencies"', '"compilerOptions"', '[core]', '[fonts]', 'TEST_DATABASE_URL'];

/** `TikTok-Signature` header values a receiver must refuse without failing. */
export const hostileSignatures = (now: number) => [
  '',
  ' ',
  ',',
  '=',
  't=',
  's=',
  't=,s=',
  `t=${now}`,
  `s=${'a'.repeat(64)}`,
  `t=${now},s=zz`,
  `t=${now},s=${'a'.repeat(64)}`,
  `t=${now},s=${'0'.repeat(15_000)}`,
  `t=-1,s=${'a'.repeat(64)}`,
  `t=1e400,s=aa`,
  `t=99999999999999999999999,s=aa`,
  `t=NaN,s=aa`,
  `t=${now},t=0,s=aa,s=bb`,
  `t=${now}\xff,s=aa`,
  'x'.repeat(15_000),
  `t=${now},s=${'A'.repeat(64)}`,
  `t= ${now} ,s= ${'a'.repeat(63)} `,
  `__proto__=1,constructor=2,t=${now},s=aa`,
];

/** The text of every file under `dir`, for "only these bytes may ever be served from there". */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [readFileSync(path.join(dir, e.name), 'utf8')],
  );
}

/** Whether the router can decode the path; an undecodable one is answered 2001 before any route. */
export function decodable(p: string): boolean {
  try {
    decodeURIComponent(p.split('?')[0]!);
    return !/[\x80-\xff]/.test(p);
  } catch {
    return false;
  }
}

/** The envelope code of an answer, or undefined when it is not JSON. */
export function codeOf(a: Answer): number | undefined {
  try {
    return (JSON.parse(a.text) as { code?: number }).code;
  } catch {
    return undefined;
  }
}

/** A HEAD answer has no body to judge: its status must still be 200 or one of the table's, never 500. */
export const okHeadStatus = (status: number) =>
  status === 200 || Object.values(ERROR_CODES).some((c) => c.http === status && c.http !== 500);

/** A body as a problem line shows it: its start and its end, where the hostile part usually is. */
export function brief(body: string | Buffer | undefined): string {
  const text = String(body ?? '');
  return text.length > 320 ? `${text.slice(0, 100)}…${text.slice(-200)}` : text;
}

/** An RPC's answer as core's Connect server gives it: body bytes and HTTP trailers (gRPC puts its status there). */
export interface RpcAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  trailers: NodeJS.Dict<string>;
  body: Buffer;
  /** A stream still open when the read window closed (the request was accepted). */
  open?: boolean;
}

/**
 * One request to a Connect, gRPC or gRPC-Web endpoint on a fresh connection. A stream never ends
 * by itself: after `windowMs` the answer so far is judged and the connection dropped.
 */
export function sendRpc(
  baseUrl: string,
  req: { method?: string; path: string; headers?: Record<string, string>; body?: Buffer | string; windowMs?: number },
): Promise<RpcAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const length = req.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(req.body)) };
    const r = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method ?? 'POST',
        path: req.path,
        headers: { ...length, ...req.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        const done = (open: boolean) =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            trailers: res.trailers,
            body: Buffer.concat(chunks),
            ...(open ? { open } : {}),
          });
        const timer = req.windowMs === undefined ? undefined : setTimeout(() => (done(true), res.destroy()), req.windowMs);
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => (clearTimeout(timer), done(false)));
        res.on('error', (err) => (clearTimeout(timer), reject(err)));
      },
    );
    r.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EPIPE' ? undefined : reject(new Error(`${req.path.slice(0, 120)}: ${err.message}`)),
    );
    r.setTimeout(ANSWER_TIMEOUT_MS, () => r.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
    r.end(req.body);
  });
}

/** A protobuf varint, for hand-made wire bytes (lengths and tags that lie). */
export function varint(n: bigint | number): number[] {
  let v = BigInt(n) & 0xffffffffffffffffn;
  const out: number[] = [];
  while (v > 0x7fn) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  return [...out, Number(v)];
}

/** A Connect/gRPC envelope: flags, a big-endian length (by default the payload's, or a lie) and the payload. */
export function envelope(flags: number, payload: Buffer | string, declaredLength = Buffer.byteLength(payload)): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(declaredLength >>> 0, 1);
  return Buffer.concat([head, Buffer.from(payload)]);
}
