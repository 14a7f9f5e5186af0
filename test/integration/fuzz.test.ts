/**
 * The broad sweep: every /v1 route, read from the gateway's own route table, gets malformed,
 * oversized and hostile input over real HTTP. Whatever arrives, the answer is the envelope with a
 * code of the table (never 5000, a 5xx only for the upstream codes), the gateway keeps serving,
 * and a customer who names another customer's ids learns nothing of them. bad-input.test.ts and
 * videos-bad-input.test.ts pin the exact message of each case; this file checks the invariants
 * on every route. Inputs are drawn by a seeded generator: FUZZ_SEED=<n> replays a failing run.
 */
import { createHash } from 'node:crypto';
import { ERROR_CODES } from '../../core/errors';
import { ENDPOINTS } from '../../sdk/endpoints';
import type { Endpoint } from '../../sdk/endpoint';
import { call } from '../helpers/http';
import {
  envelopeProblem,
  exampleOf,
  HOSTILE_BODIES,
  HOSTILE_FIELD_JSON,
  HOSTILE_PATH_VALUES,
  HOSTILE_QUERY_VALUES,
  hostileQueryStrings,
  ID_FIELD,
  pick,
  routesOf,
  seededRandom,
  send,
  sendRaw,
  type Answer,
  type FuzzRoute,
} from '../helpers/hostile-inputs';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { mp4Bytes, uploadMultipart } from '../helpers/videos';
import { bindSandboxSeat, startWorkingStack, type WorkingStack } from '../helpers/working-stack';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
/** Each test draws from its own sequence, so running one test alone (-t) replays its inputs exactly. */
let rand = seededRandom(SEED);
/** `count` of the items drawn at random; every one with FUZZ_EXHAUSTIVE=1 (minutes, not seconds). */
const sample = <T>(items: readonly T[], count: number): T[] => (process.env.FUZZ_EXHAUSTIVE ? [...items] : pick(rand, items, count));

interface Req {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The route it was aimed at, for the answers a route may give besides the envelope. */
  route?: FuzzRoute;
}

/** A customer with real data: seats bound to emulator accounts, a webhook endpoint, an event, a video and a publish. */
interface Owned {
  tenant: Tenant;
  videoSeat: string;
  shopSeat: string;
  videoAccount: string;
  videoUsername: string;
  shopAccount: string;
  ids: Record<string, string>;
  secrets: string[];
}

/** The SDK's endpoint table, which test/unit/sdk-endpoints.test.ts proves is the router's /v1 routes but the stream. */
const TABLE = Object.values(ENDPOINTS).flatMap((group) =>
  Object.values(group).flatMap((e: Endpoint | Record<string, Endpoint>) => ('method' in e ? [e as Endpoint] : Object.values(e))),
);
const keyOf = (e: Endpoint) => `${e.method} ${e.path.replace(/:(\w+)/g, '{$1}')}`;
/** The one route answering bytes rather than an envelope when it succeeds. */
const FILE_ROUTES = TABLE.filter((e) => e.answersFile).map(keyOf);

describe('fuzz: every /v1 route against hostile input', () => {
  let env: WorkingStack;
  let stack: Stack;
  let receiver: WebhookReceiver;
  let routes: FuzzRoute[];
  let a: Owned;
  let b: Owned;
  let sent = 0;

  beforeEach(() => {
    rand = seededRandom(SEED ^ createHash('sha256').update(expect.getState().currentTestName!).digest().readUInt32BE(0));
  });
  beforeAll(async () => {
    env = await startWorkingStack('fuzz', { stack: { allowInsecureWebhookUrls: true } });
    stack = env.stack;
    receiver = await startWebhookReceiver();
    routes = routesOf(JSON.parse((await send(stack.baseUrl, { method: 'GET', path: '/openapi.json' })).text));
    [a, b] = await Promise.all([seedTenant(), seedTenant()]);
  }, 60_000);
  afterAll(async () => {
    console.log(`fuzz: ${sent} requests over ${routes?.length} routes, FUZZ_SEED=${SEED}`);
    await env?.close();
    await receiver?.close();
  });

  async function seedTenant(): Promise<Owned> {
    const tenant = await createTenant(stack, { seatQuota: 5 });
    const api = async (method: string, path: string, json?: unknown) => {
      const res = await call<Record<string, never>>(stack.baseUrl, method, path, { key: tenant.apiKey, json });
      if (res.body.code !== 0) throw new Error(`${method} ${path}: ${JSON.stringify(res.body)}`);
      return res.body.data as Record<string, unknown>;
    };
    const [video, shop] = await Promise.all([bindSandboxSeat(env, tenant, 'business'), bindSandboxSeat(env, tenant, 'shop')]);
    const hook = await api('POST', '/v1/webhook-endpoints', { url: `${receiver.url}/hook`, eventTypes: ['*'] });
    const tested = (await api('POST', `/v1/webhook-endpoints/${String(hook.id)}/test`)) as {
      event: { id: string };
      delivery: { id: string };
    };
    const file = { name: 'file', value: { fileName: 'fuzz.mp4', bytes: mp4Bytes(4096) } };
    const upload = await uploadMultipart<{ id: string }>(stack.baseUrl, tenant.apiKey, [{ name: 'seatId', value: video.seatId }, file]);
    const published = await api('POST', '/v1/vplat/v1.3/business/video/publish', {
      account: video.account.openId,
      videoId: upload.body.data.id,
      caption: 'fuzz',
    });
    return {
      tenant,
      videoSeat: video.seatId,
      shopSeat: shop.seatId,
      videoAccount: video.account.openId,
      videoUsername: video.account.username,
      shopAccount: shop.account.openId,
      ids: {
        customer: tenant.customerId,
        user: tenant.userId,
        apiKey: tenant.apiKeyId,
        videoSeat: video.seatId,
        shopSeat: shop.seatId,
        videoAccount: video.account.openId,
        videoUsername: video.account.username,
        shopAccount: shop.account.openId,
        shopUsername: shop.account.username,
        endpoint: String(hook.id),
        event: tested.event.id,
        delivery: tested.delivery.id,
        video: upload.body.data.id,
        publishRecord: String(published.id),
        ...(published.shareId ? { shareId: String(published.shareId) } : {}),
      },
      secrets: [
        tenant.apiKey,
        String(hook.secret),
        ...[video, shop].flatMap((s) => [s.account.tokens.access_token, s.account.tokens.refresh_token]),
      ],
    };
  }

  const isShop = (r: FuzzRoute) => /\/(tts|products|music|photos)(\/|$)/.test(r.path);
  /** A's own value for an id field, else a value the schema accepts. */
  function baseValue(r: FuzzRoute, field: string, schema: object): unknown {
    if (field === 'account' || field === 'accountId') return isShop(r) ? a.shopAccount : a.videoAccount;
    if (field === 'seatId') return isShop(r) ? a.shopSeat : a.videoSeat;
    return exampleOf(schema, field, receiver.url);
  }
  function baseQuery(r: FuzzRoute, except?: string): string[] {
    return Object.entries(r.query)
      .filter(([k]) => k !== except && (k === 'account' || k === 'accountId' || r.requiredQuery.includes(k)))
      .map(([k, s]) => `${k}=${encodeURIComponent(String(baseValue(r, k, s)))}`);
  }
  function baseBody(r: FuzzRoute): Record<string, unknown> | undefined {
    if (!r.body) return undefined;
    return Object.fromEntries((r.body.required ?? []).map((k) => [k, baseValue(r, k, r.body!.properties?.[k] ?? {})]));
  }
  function request(
    r: FuzzRoute,
    opts: { params?: Record<string, string>; query?: string[]; body?: string | Buffer; headers?: Record<string, string> } = {},
  ): Req {
    const path = r.path.replace(/\{(\w+)\}/g, (_m, name: string) => opts.params?.[name] ?? 'xxxx');
    const query = opts.query ?? baseQuery(r);
    const json = opts.body ?? (r.body ? JSON.stringify(baseBody(r)) : undefined);
    return {
      route: r,
      method: r.method,
      path: query.length ? `${path}?${query.join('&')}` : path,
      body: json,
      headers: {
        authorization: `Bearer ${a.tenant.apiKey}`,
        ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      },
    };
  }

  /** Sends every request, a few at a time, and checks each answer; then the gateway must still be up. */
  async function fuzz(reqs: Req[], check: (req: Req, ans: Answer) => string | undefined = () => undefined): Promise<Array<[Req, Answer]>> {
    const problems: string[] = [];
    const answers: Array<[Req, Answer]> = [];
    let next = 0;
    const pid = process.pid;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < reqs.length) {
          const req = reqs[next++]!;
          sent += 1;
          const ans = await send(stack.baseUrl, req).catch((err: Error): Answer => ({
            status: 0,
            headers: {},
            text: `no answer: ${err.message}`,
          }));
          const file =
            req.route &&
            FILE_ROUTES.includes(`${req.method} ${req.route.path}`) &&
            ans.status === 200 &&
            !String(ans.headers['content-type']).includes('json');
          // A HEAD answer has no body to judge: its status must still be one of the table's.
          const head =
            req.method === 'HEAD' &&
            (ans.status === 200 || Object.values(ERROR_CODES).some((c) => c.http === ans.status && c.http !== 500));
          const problem = (file || head ? undefined : envelopeProblem(ans)) ?? check(req, ans);
          if (problem) problems.push(`${req.method} ${req.path.slice(0, 160)} [${String(req.body ?? '').slice(0, 200)}]: ${problem}`);
          answers.push([req, ans]);
        }
      }),
    );
    const health = await send(stack.baseUrl, { method: 'GET', path: '/healthz' });
    if (health.status !== 200 || process.pid !== pid) problems.push(`/healthz answered ${health.status} after the batch`);
    if (problems.length)
      throw new Error(`FUZZ_SEED=${SEED}: ${problems.length} of ${reqs.length} answers wrong:\n${problems.slice(0, 40).join('\n')}`);
    return answers;
  }

  it('reads every /v1 route from the gateway: the SDK table (checked against the router) plus the stream', () => {
    expect(new Set(routes.map((r) => `${r.method} ${r.path}`))).toEqual(new Set([...TABLE.map(keyOf), 'GET /v1/events/stream']));
    expect(routes.length).toBeGreaterThan(50);
  });

  it('answers hostile path parameters and traversal in any segment with an envelope', async () => {
    const reqs = routes.flatMap((r) => [
      ...r.params.flatMap((p) => sample(HOSTILE_PATH_VALUES, 16).map((v) => request(r, { params: { [p]: v } }))),
      request(r),
      ...['/..', '/../../healthz', '/%2e%2e/%2e%2e/openapi.json', '/..%2f..%2fhealthz', '/..%00', '%00', '/', '//x'].map((suffix) => ({
        ...request(r),
        path: r.path.replace(/\{\w+\}/g, 'xxxx') + suffix,
      })),
      { ...request(r), path: r.path.replace(/^\/v1\//, '/v1/%2e%2e/v1/').replace(/\{\w+\}/g, 'xxxx') },
      { ...request(r), path: r.path.replace(/^\/v1\//, '/v1//').replace(/\{\w+\}/g, '..%5c..') },
      { ...request(r), method: r.method === 'GET' ? 'PUT' : 'PATCH' },
      { ...request(r), method: r.method === 'GET' ? 'HEAD' : 'OPTIONS' },
    ]);
    const answers = await fuzz(reqs, (req, ans) =>
      /healthz|openapi/.test(req.path) && ans.text.includes('"status":"ok"') ? 'traversal reached another route' : undefined,
    );
    expect(answers.filter(([, ans]) => ans.text.includes('"code":1005')).length).toBeGreaterThan(100);
  });

  it('answers hostile, duplicated, nested and polluting query parameters with an envelope', async () => {
    const reqs = routes.flatMap((r) => [
      request(r, { query: [...baseQuery(r), '__proto__[polluted]=1', 'constructor[prototype][polluted]=1', 'unknown=1'] }),
      ...Object.keys(r.query).flatMap((name) => [
        ...sample(HOSTILE_QUERY_VALUES, 5).map((v) => request(r, { query: [...baseQuery(r, name), `${name}=${v}`] })),
        ...sample(hostileQueryStrings(name), 3).map((q) => request(r, { query: [...baseQuery(r, name), q] })),
      ]),
    ]);
    await fuzz(reqs);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers hostile JSON in every body field, and hostile whole bodies on every route, with an envelope', async () => {
    const fields = routes.flatMap((r) =>
      Object.keys(r.body?.properties ?? {}).flatMap((field) =>
        // A lone surrogate in every field: jsonb refuses one, which was a 5000 on photo publish.
        [...new Set([...sample(HOSTILE_FIELD_JSON, 5), '"\\udfff\\ud800"'])].map((value) => {
          const base = JSON.stringify({ ...baseBody(r), [field]: '\u0001' });
          return request(r, { body: base.replace('"\\u0001"', () => value) });
        }),
      ),
    );
    // The heavy bodies (deep, oversized) cost a parse each: every one goes to the first route of each
    // kind of handler, one drawn at random to the others. GET bodies are never parsed.
    const heavy = HOSTILE_BODIES.filter((h) => h.body.length > 100_000);
    const kinds = new Set<string>();
    const bodies = routes.flatMap((r) => {
      const kind = `${r.method} ${!!r.body} ${r.multipart} ${r.params.length > 0}`;
      const light = HOSTILE_BODIES.filter((h) => !heavy.includes(h));
      const chosen = [...(r.method === 'GET' ? sample(light, 5) : light), ...(kinds.has(kind) ? sample(heavy, 1) : heavy)];
      kinds.add(kind);
      return chosen.map((h) => request(r, { body: h.body, headers: { 'content-type': h.contentType ?? 'application/json' } }));
    });
    const answers = await fuzz([...fields, ...bodies], (req, ans) =>
      req.method !== 'GET' && Buffer.byteLength(req.body ?? '') > 1024 * 1024 && !/"code":(2001|1005)/.test(ans.text)
        ? 'a body over 1 MiB was not refused'
        : undefined,
    );
    expect(answers.length).toBeGreaterThan(1_000);
  });

  it('answers huge, duplicated and invalid headers with an envelope; a header just under the limit is served', async () => {
    const key = a.tenant.apiKey;
    const badAuth = [
      '',
      'Bearer',
      'Bearer ',
      `Bearer  ${key}`,
      `Bearer Bearer ${key}`,
      `Basic ${key}`,
      `Bearer ${key}x`,
      `Bearer ${key}\xff`,
      `Bearer ${'v'.repeat(15_000)}`,
      `Bearer ${key.slice(0, -1)}\u00e9`,
    ];
    const badKeys = ['', ' ', 'k'.repeat(256), 'caf\xe9', 'a\tb', 'x'.repeat(15_000)];
    const reqs = routes.flatMap((r) => [
      { ...request(r, { headers: { 'x-pad': 'p'.repeat(20_000) } }), expect: 2001 },
      { ...request(r, { headers: { 'x-pad': 'p'.repeat(15_500) } }), served: true },
      { ...request(r, { headers: { 'x-request-id': '../../etc/passwd\xff', 'last-event-id': '\xff'.repeat(100) } }) },
      { ...request(r, { headers: { cookie: `vps_session=${'\xff'.repeat(50)}; vps_session=x` } }) },
      ...badAuth.map((authorization) => ({ ...request(r, { headers: { authorization } }), expect: 1001 })),
      { ...request(r), headers: { 'content-type': 'application/json' }, expect: 1001 },
      ...(r.write ? badKeys.map((k) => ({ ...request(r, { headers: { 'idempotency-key': k } }), expect: 2001 })) : []),
    ]);
    await fuzz(reqs, (req, ans) => {
      const { expect: want, served } = req as Req & { expect?: number; served?: boolean };
      const { code, message } = ans.stream ? { code: 0, message: 'stream' } : (JSON.parse(ans.text) as { code: number; message: string });
      if (!/^[A-Za-z0-9._:-]{1,128}$/.test(String(ans.headers['x-request-id'] ?? 'req_raw')))
        return `unsafe X-Request-Id echoed: ${String(ans.headers['x-request-id'])}`;
      if (served && (message === 'headers: too large' || !ans.headers['x-request-id'])) return 'a header under the limit was refused';
      return want === undefined || code === want ? undefined : `code ${code}, expected ${want}`;
    });
  });

  it("answers raw bytes Node's client will not send (invalid UTF-8, NUL, smuggling, broken framing) with an envelope", async () => {
    const auth = `Authorization: Bearer ${a.tenant.apiKey}\r\n`;
    const raw = (line: string, extra = '', body = '') =>
      Buffer.from(`${line}\r\nHost: x\r\n${auth}${extra}Connection: close\r\n\r\n${body}`, 'latin1');
    const paths = routes.filter((r) => r.params.length || Object.keys(r.query).length).map((r) => r.path);
    const payloads = [
      ...paths.flatMap((p) => [
        raw(`GET ${p.replace(/\{\w+\}/g, '\xff\xfe')}?a=\xc3\x28 HTTP/1.1`),
        raw(`GET ${p.replace(/\{\w+\}/g, 'a\x00b')} HTTP/1.1`),
      ]),
      raw('POST /v1/webhook-endpoints HTTP/1.1', 'Content-Type: application/json\r\nContent-Length: 9\r\n', '{"url":"\xff\xfe"}'),
      raw(
        'POST /v1/webhook-endpoints HTTP/1.1',
        'Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n',
        '0\r\n\r\n',
      ),
      raw('POST /v1/webhook-endpoints HTTP/1.1', 'Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n', '{}'),
      raw(
        'POST /v1/webhook-endpoints HTTP/1.1',
        'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n',
        'zz\r\n{}\r\n0\r\n\r\n',
      ),
      raw('GET /v1/seats HTTP/1.1', 'X-Folded: a\r\n b\r\n'),
      raw('GET /v1/seats HTTP/1.1', 'Bad\x00Header: x\r\n'),
      raw(`GET /v1/seats?${'q'.repeat(20_000)} HTTP/1.1`),
      raw('GET http://evil.example/v1/seats HTTP/1.1'),
      raw('GE\x00T /v1/seats HTTP/1.1'),
      raw('GET /v1/seats HTTP/9.9'),
      raw('GET /v1/seats HTTP/1.0'),
      raw('\r\n\r\nGET /v1/seats HTTP/1.1'),
      Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00]),
    ];
    const problems: string[] = [];
    for (const payload of payloads) {
      sent += 1;
      const ans = await sendRaw(stack.baseUrl, payload);
      const problem = envelopeProblem(ans);
      if (problem) problems.push(`${JSON.stringify(payload.toString('latin1').slice(0, 80))}: ${problem}`);
    }
    expect(problems).toEqual([]);
    expect((await send(stack.baseUrl, { method: 'GET', path: '/healthz' })).status).toBe(200);
  });

  it("never shows one customer another customer's data, whichever of their ids is named, and answers 1005 or 1007", async () => {
    const foreign = Object.values(b.ids);
    const kindOf = new Map(Object.entries(b.ids).map(([kind, id]) => [id, kind]));
    // Where B's id of this kind in this field must be 1005 exactly (A's own resource in the path).
    const exact: Record<string, RegExp> = { 'body endpointId=endpoint': /redeliver/, 'body videoId=video': /publish/ };
    const reqs: Array<Req & { field: string; value: string }> = [];
    for (const r of routes) {
      // A's own resource in the path, so that the field is what decides.
      const params = Object.fromEntries(
        r.params.map((p) => [
          p,
          /^\/v1\/events\//.test(r.path) ? a.ids.event! : /^\/v1\/webhook-endpoints\//.test(r.path) ? a.ids.endpoint! : 'xxxx',
        ]),
      );
      for (const value of foreign) {
        for (const p of r.params) reqs.push({ ...request(r, { params: { [p]: encodeURIComponent(value) } }), field: `path ${p}`, value });
        for (const q of Object.keys(r.query).filter((k) => ID_FIELD.test(k))) {
          reqs.push({
            ...request(r, { params, query: [...baseQuery(r, q), `${q}=${encodeURIComponent(value)}`] }),
            field: `query ${q}`,
            value,
          });
        }
        for (const [f, s] of Object.entries(r.body?.properties ?? {}).filter(([k]) => ID_FIELD.test(k))) {
          const v = (s as { type?: string }).type === 'array' ? [value] : value;
          reqs.push({ ...request(r, { params, body: JSON.stringify({ ...baseBody(r), [f]: v }) }), field: `body ${f}`, value });
        }
      }
      if (r.path === '/v1/events/stream')
        reqs.push({ ...request(r, { headers: { 'last-event-id': b.ids.event! } }), field: 'header Last-Event-ID', value: b.ids.event! });
    }
    const leaks = (text: string, sent = '') =>
      [...b.secrets, ...foreign.filter((id) => id !== sent && !sent.includes(id))].filter((s) => text.includes(s));
    // What A's own requests get (nothing of B's either): naming B's account instead may only turn that into 1007 (or 1005).
    const answers = await fuzz(
      routes.map((r) => request(r)),
      (_req, ans) => (leaks(ans.text).length ? `leaks ${leaks(ans.text).join(', ')}` : undefined),
    );
    const own = new Map(answers.map(([req, ans]) => [req.route, ans.stream ? 0 : (JSON.parse(ans.text) as { code: number }).code]));
    const codes: Record<string, number> = {};
    await fuzz(reqs, (req, ans) => {
      const { field, value } = req as (typeof reqs)[number];
      const leaked = leaks(ans.text, value);
      if (leaked.length) return `leaks ${leaked.join(', ')} (sent ${field}=${value})`;
      if (ans.stream) return `a stream opened with ${field}=${value}`;
      const code = (JSON.parse(ans.text) as { code: number }).code;
      codes[code] = (codes[code] ?? 0) + 1;
      const mustBe1005 =
        field.startsWith('path') || field === 'header Last-Event-ID' || exact[`${field}=${kindOf.get(value)}`]?.test(req.path);
      if (mustBe1005) return code === 1005 ? undefined : `code ${code} for ${field}=${value}, expected 1005`;
      if (/^(body|query) account/.test(field) && [b.videoAccount, b.videoUsername, b.shopAccount].includes(value)) {
        return [1005, 1007].includes(code) || (code === 2001 && own.get(req.route) === 2001)
          ? undefined
          : `code ${code} for ${field}=${value}, expected 1007 (A's own: ${own.get(req.route)})`;
      }
      return [0, 1005, 1007, 2001, 2005, 3001].includes(code)
        ? undefined
        : `code ${code} (${ERROR_CODES[code as keyof typeof ERROR_CODES]?.message}) for ${field}=${value}`;
    });
    console.log(`cross-tenant answers by code: ${JSON.stringify(codes)}`);
    expect((codes[1005] ?? 0) + (codes[1007] ?? 0)).toBeGreaterThan(reqs.length / 3);
  });
});
