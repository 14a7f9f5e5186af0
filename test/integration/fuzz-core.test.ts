/**
 * Core's Connect endpoint against hostile input over real HTTP on loopback: every method of every
 * service in gen/ (found by walking the generated descriptors, so a new method is fuzzed without
 * touching this file), in the Connect protocol (JSON and binary, POST and GET, unary and streaming),
 * gRPC and gRPC-Web, with no credential, a malformed one, an API key and the admin token. Whatever
 * arrives: never `internal`/`unknown`, HTTP 500 or our 5000; a request that decodes (checked with
 * the same protobuf-es the server uses) is refused only with one of our codes, while a broken
 * envelope may be refused by the protocol layer alone; core keeps serving; and tenant B's ids with
 * tenant A's key answer 1005 or 1007, never B's data. FUZZ_SEED=<n> replays a failing run;
 * FUZZ_SHOW=<n> lists that many problems instead of the first 25.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  fromBinary,
  fromJsonString,
  ScalarType,
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescService,
} from '@bufbuild/protobuf';
import { MethodOptions_IdempotencyLevel } from '@bufbuild/protobuf/wkt';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { isErrorCode } from '../../core/errors';
import { EventService } from '../../gen/vps/event/v1/event_pb';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { VideoService } from '../../gen/vps/video/v1/video_pb';
import { WebhookEndpointService } from '../../gen/vps/webhook/v1/webhook_pb';
import { envelope, HOSTILE_FIELD_JSON, pick, seededRandom, sendRaw, sendRpc, varint, type RpcAnswer } from '../helpers/hostile-inputs';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack, type Tenant } from '../helpers/stack';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
/** Reseeded per test from its name, so one test replays alike whether or not the others run. */
let rand = seededRandom(SEED);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 16);
/** How long a stream that was accepted is read before the client leaves. */
const STREAM_WINDOW_MS = 300;
const CODE_NAMES = [
  'ok',
  'canceled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
];

/** One request; `decodes` when its message reaches the handlers intact, so only our codes may refuse it. */
type Probe = {
  label: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  windowMs?: number;
  decodes: boolean;
};

/** Every service descriptor under gen/, as core's router registers them. */
async function generatedServices(dir = path.join(__dirname, '../../gen')): Promise<DescService[]> {
  const found: DescService[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) found.push(...(await generatedServices(file)));
    else if (e.name.endsWith('_pb.ts'))
      found.push(
        ...Object.values((await import(file)) as Record<string, unknown>).filter(
          (v): v is DescService => (v as { kind?: string } | null)?.kind === 'service',
        ),
      );
  }
  return found;
}

const rpcPath = (m: DescMethod) => `/${m.parent.typeName}/${m.name}`;
const streaming = (m: DescMethod) => m.methodKind !== 'unary';
const deep = (n: number, open: string, close: string) => open.repeat(n) + close.repeat(n);
const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));
const tag = (no: number, wireType: number) => varint((BigInt(no) << 3n) | BigInt(wireType));
const decodesJson = (msg: DescMessage, body: string | Buffer) =>
  attempt(() => fromJsonString(msg, Buffer.from(body).toString('utf8'), { ignoreUnknownFields: true }));
const decodesBinary = (msg: DescMessage, body: Buffer) => attempt(() => fromBinary(msg, body));
function attempt(f: () => unknown): boolean {
  try {
    f();
    return true;
  } catch {
    return false;
  }
}

/** JSON values that are wrong, or right but hostile, for a field of this kind. */
function hostileValues(f: DescField): string[] {
  const common = pick(
    rand,
    HOSTILE_FIELD_JSON.filter((v) => v.length < 50_000),
    2,
  );
  if (f.fieldKind === 'list') return [...common, '[null]', '[{"a":1}]', `[${Array(20_000).fill('"\\u0000"').join(',')}]`];
  if (f.fieldKind === 'enum') return [...common, '"NOPE"', '999', '-1', '1.5'];
  if (f.fieldKind === 'message')
    return [...common, '"9999-99-99T99:99:99Z"', '"10000-01-01T00:00:00Z"', '{"seconds":"1e400"}', '{"nanos":-1}'];
  if (f.fieldKind !== 'scalar') return common;
  if (f.scalar === ScalarType.STRING) return [...common, '"a\\u0000b"', '"\\ud800x\\udfff"', JSON.stringify('\u202e'.repeat(100_000))];
  if (f.scalar === ScalarType.BYTES)
    return [...common, '"!!!not base64"', '"@@@="', JSON.stringify(Buffer.alloc(2_000_000, 7).toString('base64'))];
  if (f.scalar === ScalarType.BOOL) return [...common, '"true"', '1', '"yes"'];
  return [...common, '"1e400"', '"9223372036854775808"', '-1', '1.5', '"NaN"', '"0x10"'];
}

const STATIC_JSON: Array<string | Buffer> = [
  '',
  '{',
  'null',
  '[]',
  '"x"',
  '1e99999',
  '{}garbage',
  '\ufeff{}',
  '{"a":1,"a":{"__proto__":1}}',
  '{"__proto__":{"polluted":1}}',
  '{"zzUnknown":[1,{"b":null}],"constructor":{"prototype":{"polluted":1}}}',
  deep(100_000, '[', ']'),
  '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000),
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]),
  Buffer.from('{}', 'utf16le'),
];

function jsonBodies(msg: DescMessage): Array<string | Buffer> {
  const out: Array<string | Buffer> = [...pick(rand, STATIC_JSON, 5), bytes(40), '{}'];
  for (const f of msg.fields) for (const v of pick(rand, hostileValues(f), 2)) out.push(`{"${rand() < 0.5 ? f.jsonName : f.name}":${v}}`);
  // Every field at once, so a rule behind another field's check is reached too.
  if (msg.fields.length) out.push(`{${msg.fields.map((f) => `"${f.jsonName}":${pick(rand, hostileValues(f), 1)[0]}`).join(',')}}`);
  return out;
}

function protoBodies(msg: DescMessage): Buffer[] {
  const raw: Array<() => number[] | Buffer> = [
    () => [],
    () => [0x08, 0x80, 0x80],
    () => Array(11).fill(0xff),
    () => [0x00, 0x01],
    () => [...tag(536_870_911, 0), 1],
    () => tag(1, 3),
    () => tag(1, 4),
    () => tag(1, 7),
    () => [...tag(1, 2), ...varint(2 ** 32 + 5), 1, 2, 3],
    () => [...tag(1, 2), ...varint(0xffffffffffffffffn)],
    () => [...tag(1, 2), 100, 1, 2],
  ];
  for (const { number: n } of msg.fields) {
    raw.push(
      () => [...tag(n, 0), ...varint(-1n)],
      () => [...tag(n, 2), 3, 0xff, 0xfe, 0xc3],
      () => [...tag(n, 2), 3, 0xed, 0xa0, 0x80],
      () => [...tag(n, 1), 1, 2, 3, 4, 5, 6, 7, 8],
    );
    raw.push(
      () => [...tag(n, 5), 1, 2, 3, 4],
      () => [...tag(n, 2), 5, 0x61],
      () => [...tag(n, 0), ...Array(10).fill(0xff), 1],
      () => [...tag(n, 2), 5, 0x61, 0x00, 0x62, 0x00, 0x00],
    );
    raw.push(() => Buffer.concat([Buffer.from([...tag(n, 2), ...varint(300_000)]), Buffer.alloc(300_000, 0x78)]));
  }
  return [bytes(48), ...pick(rand, raw, 12).map((b) => Buffer.from(b()))];
}

/** Our code and the protocol's from any of the wire forms: headers, HTTP trailers, gRPC-Web trailer frame, Connect end-stream message. */
function outcomeOf(a: RpcAnswer): { code?: string; vps?: string } {
  const ct = String(a.headers['content-type'] ?? '');
  const meta = (k: string) => (a.headers[k] as string | undefined) ?? a.trailers[k];
  let vps = meta('vps-code');
  if (ct.startsWith('application/grpc')) {
    let status = meta('grpc-status');
    for (const f of frames(a.body).filter((x) => x.flags & 0x80)) {
      const t = Object.fromEntries(
        f.data
          .toString()
          .split('\r\n')
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      status ??= t['grpc-status'];
      vps ??= t['vps-code'];
    }
    return { code: status === undefined ? (a.open ? 'ok' : undefined) : (CODE_NAMES[Number(status)] ?? `grpc-status ${status}`), vps };
  }
  if (ct.startsWith('application/connect+')) {
    const end = frames(a.body).find((f) => f.flags & 0x02);
    if (!end) return { code: a.open ? 'ok' : undefined, vps };
    const j = JSON.parse(end.data.toString()) as { error?: { code: string }; metadata?: Record<string, string[]> };
    return { code: j.error?.code ?? 'ok', vps: vps ?? j.metadata?.['vps-code']?.[0] };
  }
  if (a.status === 200) return { code: 'ok', vps };
  return {
    code: attempt(() => JSON.parse(a.body.toString())) ? (JSON.parse(a.body.toString()) as { code?: string }).code : undefined,
    vps,
  };
}

function frames(body: Buffer): Array<{ flags: number; data: Buffer }> {
  const out: Array<{ flags: number; data: Buffer }> = [];
  for (let i = 0; i + 5 <= body.length;) {
    const len = body.readUInt32BE(i + 1);
    out.push({ flags: body[i]!, data: body.subarray(i + 5, i + 5 + len) });
    i += 5 + len;
  }
  return out;
}

const repro = (p: Probe) => {
  const body = Buffer.from(p.body ?? '');
  return `${p.method ?? 'POST'} ${p.path.slice(0, 200)} ${JSON.stringify(p.headers ?? {})} body(${body.length})=${body.subarray(0, 80).toString('hex')}`;
};

function problemOf(p: Probe, a: RpcAnswer): string | undefined {
  const { code, vps } = outcomeOf(a);
  const what = `[${p.label}] HTTP ${a.status} code=${code ?? '-'} vps-code=${vps ?? '-'} ${JSON.stringify(a.body.toString('latin1').slice(0, 120))} <- ${repro(p)}`;
  if (a.status === 500 || vps === '5000' || code === 'internal' || code === 'unknown') return what;
  if (vps !== undefined && !isErrorCode(Number(vps))) return `not a code of ours: ${what}`;
  if (p.decodes && code !== 'ok' && vps === undefined) return `a decodable request refused without our code: ${what}`;
  if (a.status === 200 && code === undefined) return `no status: ${what}`;
  return undefined;
}

describe("fuzz: core's Connect endpoint against hostile input", () => {
  let stack: Stack;
  let services: DescService[];
  let methods: DescMethod[];
  let a: Tenant;
  let b: Tenant & {
    videoAccount: string;
    shopAccount: string;
    seatId: string;
    endpointId: string;
    secret: string;
    videoId: string;
    eventId: string;
  };
  let sent = 0;
  const started = Date.now();

  beforeEach(() => {
    rand = seededRandom(SEED ^ createHash('sha256').update(expect.getState().currentTestName!).digest().readUInt32BE(0));
  });

  beforeAll(async () => {
    // A generous bucket: the sweep is about input, not the rate limit (2002 would hide the rules behind it).
    stack = await startStack({ transport: 'http', ratePerMinute: 1_000_000, allowInsecureWebhookUrls: true });
    services = await generatedServices();
    methods = services.flatMap((s) => s.methods);
    a = await createTenant(stack);
    const tb = await createTenant(stack);
    const [videoAccount, shopAccount] = [uniqueAccount('biz'), uniqueAccount('creator')];
    const seat = await createBoundSeat(stack, tb, Track.VIDEO, videoAccount);
    await createBoundSeat(stack, tb, Track.SHOP, shopAccount);
    const transport = createConnectTransport({
      baseUrl: stack.coreUrl,
      httpVersion: '1.1',
      interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${tb.apiKey}`), next(req))],
    });
    const { endpoint, secret } = await createClient(WebhookEndpointService, transport).createEndpoint({
      url: 'https://hooks.example.com/tenant-b',
      eventTypes: ['*'],
    });
    const { video } = await createClient(VideoService, transport).beginUpload({ seatId: seat.id, fileName: 'b.mp4' });
    await createClient(WebhookEndpointService, transport).testEndpoint({ id: endpoint!.id });
    const { events } = await createClient(EventService, transport).listEvents({ includeTest: true });
    b = { ...tb, videoAccount, shopAccount, seatId: seat.id, endpointId: endpoint!.id, secret, videoId: video!.id, eventId: events[0]!.id };
  }, 60_000);
  afterAll(async () => {
    console.log(
      `fuzz-core: ${sent} requests to ${methods?.length} methods of ${services?.length} services in ${Date.now() - started} ms, FUZZ_SEED=${SEED}`,
    );
    await stack?.close();
  });

  /**
   * Every kind of caller. PingWorker runs a workflow on a worker this stack does not start: with
   * the admin token it waits 30 s for one and then answers 5000 by design (an outage, not input),
   * so it meets every credential but that one.
   */
  const credentials = (m?: DescMethod): Array<Record<string, string>> => [
    {},
    { authorization: 'Bearer Bearer x' },
    { authorization: 'Bearer' },
    { authorization: 'Session x.y.z' },
    { authorization: 'Basic eDp4' },
    { authorization: `Bearer ${a.apiKey}` },
    ...(m?.name === 'PingWorker' ? [] : [{ authorization: `Bearer ${stack.adminToken}` }]),
  ];
  const anyCredential = (m?: DescMethod) => pick(rand, credentials(m), 1)[0]!;

  /** Sends every probe, CONCURRENCY at a time, then checks core still serves; returns what went wrong. */
  async function run(probes: Probe[]): Promise<string[]> {
    const problems: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < probes.length) {
          const p = probes[next++]!;
          sent++;
          try {
            const problem = problemOf(p, await sendRpc(stack.coreUrl, p));
            if (problem) problems.push(problem);
          } catch (err) {
            problems.push(`no answer (${(err as Error).message}) <- ${repro(p)}`);
          }
        }
      }),
    );
    return [...problems, ...(await stillServing())];
  }

  async function stillServing(): Promise<string[]> {
    sent += 2;
    const live = await sendRpc(stack.coreUrl, { method: 'GET', path: '/healthz' }).catch((err: Error) => ({
      status: 0,
      body: Buffer.from(err.message),
    }));
    const check = await sendRpc(stack.coreUrl, {
      path: '/vps.health.v1.HealthService/Check',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }).catch((err: Error) => ({ status: 0, body: Buffer.from(err.message) }));
    return live.status === 200 && check.status === 200
      ? []
      : [`core stopped serving: /healthz ${live.status}, HealthService/Check ${check.status} ${check.body.toString().slice(0, 200)}`];
  }

  const expectClean = (problems: string[]) =>
    expect({ count: problems.length, first: [...new Set(problems)].slice(0, Number(process.env.FUZZ_SHOW ?? 25)) }).toEqual({
      count: 0,
      first: [],
    });

  it('refuses hostile Connect JSON and binary bodies of every method with our codes, under every credential', async () => {
    const probes: Probe[] = methods.flatMap((m) => {
      const ct = (kind: 'json' | 'proto') => (streaming(m) ? `application/connect+${kind}` : `application/${kind}`);
      const wrap = (body: Buffer | string) => (streaming(m) ? envelope(0, body) : body);
      const windowMs = streaming(m) ? STREAM_WINDOW_MS : undefined;
      const json = jsonBodies(m.input).map((body): Probe => ({
        label: 'json',
        path: rpcPath(m),
        headers: { 'content-type': ct('json'), ...anyCredential(m) },
        body: wrap(body),
        windowMs,
        decodes: decodesJson(m.input, body),
      }));
      const proto = protoBodies(m.input).map((body): Probe => ({
        label: 'proto',
        path: rpcPath(m),
        headers: { 'content-type': ct('proto'), ...anyCredential(m) },
        body: wrap(body),
        windowMs,
        decodes: decodesBinary(m.input, body),
      }));
      const everyCredential = credentials(m).map((c): Probe => ({
        label: 'credential',
        path: rpcPath(m),
        headers: { 'content-type': ct('json'), ...c },
        body: wrap('{}'),
        windowMs,
        decodes: true,
      }));
      return [...json, ...proto, ...everyCredential];
    });
    expectClean(await run(probes));
  });

  it('refuses malformed gRPC and gRPC-Web framing, and Connect streaming framing, without internal errors', async () => {
    const kinds = [
      'application/grpc',
      'application/grpc+json',
      'application/grpc-web+proto',
      'application/grpc-web+json',
      'application/grpc-web-text',
      'application/connect+proto',
      'application/connect+json',
    ];
    const framings: Array<{ label: string; body: (empty: string) => Buffer; headers?: Record<string, string>; ok?: boolean }> = [
      { label: 'valid envelope', body: (e) => envelope(0, e), ok: true },
      { label: 'compressed flag without grpc-encoding', body: () => envelope(1, 'x') },
      {
        label: 'compressed flag, payload not gzip',
        body: () => envelope(1, 'not gzip'),
        headers: { 'grpc-encoding': 'gzip', 'connect-content-encoding': 'gzip' },
      },
      {
        label: 'unknown encoding',
        body: (e) => envelope(1, e),
        headers: { 'grpc-encoding': 'zstd-nope', 'connect-content-encoding': 'nope' },
      },
      { label: 'bad flags 0x80', body: () => envelope(0x80, '') },
      { label: 'bad flags 0xff', body: () => envelope(0xff, 'x') },
      { label: 'length longer than the body', body: (e) => envelope(0, e, 1_000) },
      { label: 'length 4 GiB', body: () => envelope(0, 'ab', 0xffffffff) },
      { label: 'short header', body: () => Buffer.from([0, 0, 0]) },
      { label: 'no envelope', body: () => Buffer.alloc(0) },
      { label: 'two envelopes', body: (e) => Buffer.concat([envelope(0, e), envelope(0, e)]) },
      { label: 'trailing bytes', body: (e) => Buffer.concat([envelope(0, e), Buffer.from([1, 2])]) },
      { label: 'hostile timeout', body: (e) => envelope(0, e), headers: { 'grpc-timeout': '999999999H', 'connect-timeout-ms': '-1' } },
      { label: 'garbage', body: () => bytes(33) },
    ];
    const probes = methods.flatMap((m) =>
      pick(rand, framings, 6).flatMap((f) =>
        pick(rand, kinds, 2).map((ct): Probe => {
          const json = ct.endsWith('json');
          const connectStream = ct.startsWith('application/connect+');
          return {
            label: `${ct} ${f.label}`,
            path: rpcPath(m),
            headers: { 'content-type': ct, te: 'trailers', ...f.headers, ...anyCredential(m) },
            body: f.body(json ? '{}' : ''),
            windowMs: STREAM_WINDOW_MS,
            // A Connect streaming content type on a unary method is a protocol refusal, whatever the framing.
            decodes: f.ok === true && ct !== 'application/grpc-web-text' && (!connectStream || streaming(m)),
          };
        }),
      ),
    );
    expectClean(await run(probes));
  });

  it('answers Connect GET requests with hostile query values, whether or not the method allows GET', async () => {
    const values = ['{}', '{', '%ff', deep(5_000, '[', ']'), '{"a":"\\ud800"}', 'x'.repeat(12_000), JSON.stringify({ id: '\u0000' })];
    const queries = (v: string) => [
      `connect=v1&encoding=json&message=${encodeURIComponent(v)}`,
      `connect=v1&encoding=proto&base64=1&message=${bytes(20).toString('base64url')}`,
      `connect=v1&encoding=json&compression=gzip&message=${encodeURIComponent(v)}`,
      `connect=v2&encoding=json&message=${encodeURIComponent(v)}`,
      `encoding=json&message=${encodeURIComponent(v)}`,
      `connect=v1&encoding=xml&message=x`,
      `connect=v1&encoding=json&message=${encodeURIComponent(v)}&message=2`,
      `connect=v1&encoding=json&base64=1&message=%%%`,
      `connect=v1&encoding=json&message=%E0%A4%A`,
      'connect=v1&encoding=json',
    ];
    const probes = methods.flatMap((m) =>
      pick(rand, values, 3).flatMap((v) =>
        pick(rand, queries(v), 2).map((q): Probe => {
          const getAllowed = m.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS && !streaming(m);
          return {
            label: 'GET',
            method: 'GET',
            path: `${rpcPath(m)}?${q}`,
            headers: anyCredential(m),
            decodes:
              getAllowed && q.startsWith('connect=v1&encoding=json&message=') && !q.includes('&message=2') && decodesJson(m.input, v),
          };
        }),
      ),
    );
    expectClean(await run(probes));
  });

  it('refuses hostile requests to the streaming methods, and survives clients that leave at once', async () => {
    const streams = methods.filter(streaming);
    expect(streams.map((m) => m.name)).toContain('WatchEvents');
    const probes = streams.flatMap((m) =>
      [...jsonBodies(m.input), ...STATIC_JSON].map((body): Probe => ({
        label: 'stream json',
        path: rpcPath(m),
        headers: { 'content-type': 'application/connect+json', ...anyCredential(m) },
        body: envelope(0, body),
        windowMs: STREAM_WINDOW_MS,
        decodes: decodesJson(m.input, body),
      })),
    );
    const problems = await run(probes);
    // A caller that sends its request and leaves (before, during and after the answer starts).
    const key = `Bearer ${a.apiKey}`;
    for (const m of streams) {
      for (const delay of [0, 0, 1, 5, 20, 50, 100]) {
        const body = envelope(0, '{}');
        const head = `POST ${rpcPath(m)} HTTP/1.1\r\nHost: core\r\nContent-Type: application/connect+json\r\nAuthorization: ${key}\r\nContent-Length: ${body.length}\r\n\r\n`;
        const partial = delay === 0 && rand() < 0.5;
        await new Promise<void>((resolve) => {
          const socket = net.connect({ host: '127.0.0.1', port: Number(new URL(stack.coreUrl).port) }, () => {
            sent++;
            socket.write(partial ? head : Buffer.concat([Buffer.from(head), body]));
            setTimeout(() => (socket.destroy(), resolve()), delay);
          });
          socket.on('error', () => resolve());
        });
      }
    }
    expectClean([...problems, ...(await stillServing())]);
  });

  it('answers unknown services and methods, wrong HTTP methods, malformed credentials and oversized bodies', async () => {
    const names = [
      '/vps.nope.v1.NopeService/Check',
      '/vps.admin.v1.AdminService/Nope',
      '/vps.admin.v1.AdminService/',
      '/vps.admin.v1.AdminService',
      '//',
      '/',
      '/vps.admin.v1.adminservice/createcustomer',
      '/vps.health.v1.HealthService/Check/extra',
      '/vps.admin.v1.AdminService/../../vps.health.v1.HealthService/Check',
      '/vps.admin.v1.AdminService%2FCreateCustomer',
      '/%2e%2e/%2e%2e/etc/passwd',
      `/${'x'.repeat(10_000)}/Y`,
      '/vps.health.v1.HealthService/Check%00',
      '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
    ];
    const unknown = names.map((p): Probe => ({
      label: 'unknown route',
      path: p,
      headers: { 'content-type': 'application/json', ...anyCredential() },
      body: '{}',
      decodes: false,
    }));
    const verbs = methods.flatMap((m) =>
      pick(rand, ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE'], 1).map((verb): Probe => ({
        label: `${verb}`,
        method: verb,
        path: rpcPath(m),
        headers: { 'content-type': 'application/json', ...anyCredential(m) },
        body: verb === 'HEAD' || verb === 'TRACE' ? undefined : '{}',
        decodes: false,
      })),
    );
    const contentTypes = methods.flatMap((m) =>
      pick(
        rand,
        [
          'text/plain',
          'application/xml',
          '',
          'application/json; charset=utf-16',
          'application/proto; charset=x',
          `application/json; ${'x=y; '.repeat(2_000)}`,
          'multipart/form-data; boundary=b',
        ],
        1,
      ).map((ct): Probe => ({
        label: 'content type',
        path: rpcPath(m),
        headers: { 'content-type': ct, ...anyCredential(m) },
        body: '{}',
        decodes: false,
      })),
    );
    const big = Buffer.from(JSON.stringify({ name: 'x'.repeat(16 * 1024 * 1024) }));
    const oversized = [
      '/vps.admin.v1.AdminService/CreateCustomer',
      '/vps.webhook.v1.WebhookEndpointService/CreateEndpoint',
      '/vps.console.v1.ConsoleService/SignIn',
    ].map((p): Probe => ({
      label: 'oversized',
      path: p,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.adminToken}` },
      body: big,
      decodes: true,
    }));
    const problems = await run([...unknown, ...verbs, ...contentTypes, ...oversized]);
    // What Node's client refuses to send: control characters in the credential, a length that lies, raw bytes.
    const rawOnes = [
      ...methods.map((m) => ({
        path: rpcPath(m),
        auth: pick(
          rand,
          ['Bearer \x01\x7f\x1b[31m', 'Bearer a\x00b', 'Bearer \xff\xfe', `Bearer ${a.apiKey}\x0b`, 'Bearer\tBearer\tx'],
          1,
        )[0]!,
        length: '2',
      })),
      { path: '/vps.health.v1.HealthService/Check', auth: 'x', length: String(2 ** 40) },
      { path: '/vps.seat.v1.SeatService/ListSeats', auth: `Bearer ${a.apiKey}`, length: '-1' },
    ];
    for (const r of rawOnes) {
      sent++;
      const ans = await sendRaw(
        stack.coreUrl,
        Buffer.from(
          `POST ${r.path} HTTP/1.1\r\nHost: core\r\nConnection: close\r\nContent-Type: application/json\r\nAuthorization: ${r.auth}\r\nContent-Length: ${r.length}\r\n\r\n{}`,
          'latin1',
        ),
      );
      if (ans.status === 0 || ans.status === 500 || ans.headers['vps-code'] === '5000')
        problems.push(
          `raw: HTTP ${ans.status} vps-code ${String(ans.headers['vps-code'])} <- ${r.path} Authorization: ${JSON.stringify(r.auth)} Content-Length: ${r.length}`,
        );
    }
    expectClean([...problems, ...(await stillServing())]);
  });

  it("answers tenant B's ids under tenant A's key as it answers ids never issued (1005 or 1007), never with B's data", async () => {
    const idOf = (m: DescMethod, f: DescField): string | undefined => {
      const byService: Record<string, string> = {
        WebhookEndpointService: b.endpointId,
        VideoService: b.videoId,
        EventService: b.eventId,
        PrecheckService: b.videoId,
      };
      return (
        {
          seat_id: b.seatId,
          account: b.videoAccount,
          account_id: b.shopAccount,
          endpoint_id: b.endpointId,
          event_id: b.eventId,
          after_event_id: b.eventId,
          video_id: b.videoId,
          file_id: b.videoId,
          id: byService[m.parent.name],
        } as Record<string, string | undefined>
      )[f.name];
    };
    // The same shape, never issued: an answer that differs from its answer tells A something about B.
    const neverIssued = (id: string) => `${id.slice(0, -6)}zzzzzz`;
    const customerMethods = methods.filter(
      (m) => !/Admin|Console|Ingest|Health/.test(m.parent.name) && !['CompleteUpload', 'OpenMedia'].includes(m.name),
    );
    const marks = [b.customerId, b.userId, b.apiKeyId, b.secret, `user_${b.videoAccount}`, 'hooks.example.com/tenant-b', 'b.mp4'];
    const problems: string[] = [];
    let refusedAsNotFound = 0;
    const ask = async (m: DescMethod, body: Record<string, unknown>, ids: string[]) => {
      sent++;
      const json = JSON.stringify(body);
      const ans = await sendRpc(stack.coreUrl, {
        path: rpcPath(m),
        headers: { 'content-type': streaming(m) ? 'application/connect+json' : 'application/json', authorization: `Bearer ${a.apiKey}` },
        body: streaming(m) ? envelope(0, json) : json,
        windowMs: STREAM_WINDOW_MS,
      });
      const { code, vps } = outcomeOf(ans);
      const text = `${ans.body.toString('latin1')} ${String(ans.headers['vps-data'] ?? '')}`;
      return {
        code,
        vps,
        raw: text + JSON.stringify(ans.headers) + JSON.stringify(ans.trailers),
        seen: ids.reduce((t, id) => t.split(id).join('<id>'), `${code} ${vps} ${text}`),
      };
    };
    for (const m of customerMethods) {
      const ids = m.input.fields.filter((f) => f.fieldKind === 'scalar' && idOf(m, f));
      const fill = (f: DescField) => (f.fieldKind === 'scalar' && f.scalar === ScalarType.STRING ? 'x' : undefined);
      const bodies = ids.length
        ? [ids, m.input.fields].map(
            (fields) => (twin: boolean) =>
              Object.fromEntries(fields.map((f) => [f.jsonName, idOf(m, f) ? (twin ? neverIssued(idOf(m, f)!) : idOf(m, f)) : fill(f)])),
          )
        : [() => ({})];
      for (const body of bodies) {
        const theirs = await ask(
          m,
          body(false),
          ids.map((f) => idOf(m, f)!),
        );
        const never = await ask(
          m,
          body(true),
          ids.map((f) => neverIssued(idOf(m, f)!)),
        );
        const leaked = marks.filter((mark) => theirs.raw.includes(mark));
        if (leaked.length) problems.push(`${rpcPath(m)} ${JSON.stringify(body(false))} answered B's ${leaked.join(', ')}`);
        if (theirs.seen !== never.seen)
          problems.push(
            `${rpcPath(m)} ${JSON.stringify(body(false))}: B's ids answered "${theirs.seen.slice(0, 200)}", never-issued ids "${never.seen.slice(0, 200)}"`,
          );
        if (['1005', '1007'].includes(theirs.vps ?? '')) refusedAsNotFound++;
      }
    }
    expectClean([...problems, ...(await stillServing())]);
    // The sweep reached the ownership checks, rather than stopping at validation everywhere.
    expect(refusedAsNotFound).toBeGreaterThanOrEqual(20);
  });
});
