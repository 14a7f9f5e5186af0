/**
 * The sweep of fuzz.test.ts, for every HTTP surface the gateway serves outside /v1: the console's
 * sign-in, key and seat API (with no session, a broken one, and a real one), the OAuth callback,
 * the platform's webhook receiver, signed media URLs, the console's static files, the docs, the
 * probes, and whatever else a client may try at the root. Whatever arrives: the envelope with a
 * code of the table where the route answers JSON (never 5000, never HTTP 500), a redirect that
 * stays on our own console page, no file from outside the console build, nothing of another
 * customer's, and a gateway that keeps serving. FUZZ_SEED=<n> replays a failing run.
 */
import { createHash, createHmac } from 'node:crypto';
import { isEventType } from '../../core/events/event-types';
import { SANDBOX_APP } from '../../core/upstream/settings';
import { DEFAULT_CONSOLE_DIST } from '../../gateway/routes/console-static';
import { call } from '../helpers/http';
import {
  brief,
  codeOf,
  decodable,
  envelopeProblem,
  filesUnder,
  HOSTILE_BODIES,
  HOSTILE_FIELD_JSON,
  HOSTILE_PATH_VALUES,
  HOSTILE_QUERY_VALUES,
  HOSTILE_TRAVERSALS,
  hostileQueryStrings,
  hostileSignatures,
  okHeadStatus,
  pick,
  seededRandom,
  send,
  sendRaw,
  SERVER_FILE_MARKS,
  type Answer,
} from '../helpers/hostile-inputs';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { mp4Bytes, uploadMultipart } from '../helpers/videos';
import { bindSandboxSeat, startWorkingStack, type WorkingStack } from '../helpers/working-stack';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
let rand = seededRandom(SEED);
const sample = <T>(items: readonly T[], count: number): T[] => (process.env.FUZZ_EXHAUSTIVE ? [...items] : pick(rand, items, count));
const PASSWORD = 'correct horse battery staple';
const CALLBACK = '/console/oauth/callback';
const WEBHOOK = '/webhooks/vplat';

type Req = { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer };
type Check = (req: Req, ans: Answer) => string | undefined;

/** A signed-in console user (cookie and CSRF token) with a bound video seat and one uploaded video (its signed URL, path only). */
type Browser = {
  tenant: Tenant;
  email: string;
  cookie: string;
  csrf: string;
  seatId: string;
  account: string;
  videoId: string;
  videoUrl: string;
};

describe('fuzz: every surface outside /v1 against hostile input', () => {
  let env: WorkingStack;
  let stack: Stack;
  let a: Browser;
  let b: Browser;
  let dist: string[];
  let sent = 0;

  beforeEach(() => {
    rand = seededRandom(SEED ^ createHash('sha256').update(expect.getState().currentTestName!).digest().readUInt32BE(0));
  });
  beforeAll(async () => {
    env = await startWorkingStack('fuzz-surfaces');
    stack = env.stack;
    [a, b] = await Promise.all([browser(), browser()]);
    // Every file of the console build: the only bytes /console/* may ever answer with.
    dist = filesUnder(DEFAULT_CONSOLE_DIST);
  }, 60_000);
  afterAll(async () => {
    console.log(`fuzz-surfaces: ${sent} requests outside /v1, FUZZ_SEED=${SEED}`);
    await env?.close();
  });

  async function signIn(email: string) {
    const res = await call<{ csrfToken: string }>(stack.baseUrl, 'POST', '/console/api/session', { json: { email, password: PASSWORD } });
    if (res.body.code !== 0) throw new Error(`sign-in: ${JSON.stringify(res.body)}`);
    return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: res.body.data.csrfToken };
  }
  async function browser(): Promise<Browser> {
    const tenant = await createTenant(stack, { seatQuota: 5 });
    await stack.admin.setUserPassword({ userId: tenant.userId, password: PASSWORD });
    const email = `user-${tenant.customerId}@example.com`;
    const { account, seatId } = await bindSandboxSeat(env, tenant, 'business');
    const upload = await uploadMultipart<{ id: string; videoUrl: string }>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'fuzz.mp4', bytes: mp4Bytes(4096) } },
    ]);
    const { id: videoId, videoUrl } = upload.body.data;
    return {
      tenant,
      email,
      ...(await signIn(email)),
      seatId,
      account: account.openId,
      videoId,
      videoUrl: videoUrl.slice(stack.baseUrl.length),
    };
  }
  /** B's secrets, which no answer to A (or to anyone) may carry, and B's ids, unless the request named them. */
  function leaks(req: Req, ans: Answer): string | undefined {
    const text = `${ans.text} ${JSON.stringify(ans.headers)}`;
    const secrets = [b.tenant.apiKey, b.cookie.split('=')[1]!, b.csrf, b.email, a.tenant.apiKey, ...SERVER_FILE_MARKS];
    const asked = `${req.path} ${String(req.body ?? '')} ${JSON.stringify(req.headers ?? {})}`;
    const ids = [b.tenant.customerId, b.tenant.userId, b.tenant.apiKeyId, b.seatId, b.account, b.videoId].filter(
      (id) => !asked.includes(id),
    );
    const found = [...secrets, ...ids].filter((s) => text.includes(s));
    return found.length ? `leaks ${found.map((s) => s.slice(0, 40)).join(', ')}` : undefined;
  }

  /** Sends every request, 8 at a time; checks the envelope (unless `check` judges the answer itself), leaks, and health after. */
  async function fuzz(reqs: Req[], check?: Check): Promise<Array<[Req, Answer]>> {
    const problems: string[] = [];
    const answers: Array<[Req, Answer]> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < reqs.length) {
          const req = reqs[next++]!;
          sent += 1;
          // A HEAD answer with a body breaks the client's parser: that is the answer's fault, said plainly.
          const ans = await send(stack.baseUrl, req).catch((err: Error): Answer => ({
            status: 0,
            headers: {},
            text: `no answer${req.method === 'HEAD' ? ' (a HEAD answer with a body?)' : ''}: ${err.message}`,
          }));
          const head =
            req.method === 'HEAD' ? (okHeadStatus(ans.status) ? undefined : `HEAD answered ${ans.status} ${ans.text}`) : undefined;
          const problem = (check ? check(req, ans) : req.method === 'HEAD' ? head : envelopeProblem(ans)) ?? leaks(req, ans);
          if (problem)
            problems.push(
              `${req.method} ${req.path.slice(0, 160)} ${JSON.stringify(req.headers ?? {}).slice(0, 160)} [${brief(req.body)}]: ${problem}`,
            );
          answers.push([req, ans]);
        }
      }),
    );
    const health = await send(stack.baseUrl, { method: 'GET', path: '/healthz' });
    if (health.status !== 200) problems.push(`/healthz answered ${health.status} after the batch`);
    if (problems.length)
      throw new Error(`FUZZ_SEED=${SEED}: ${problems.length} of ${reqs.length} answers wrong:\n${problems.slice(0, 40).join('\n')}`);
    return answers;
  }
  const json = (
    method: string,
    p: string,
    body: string | Buffer | undefined,
    headers: Record<string, string> = {},
    contentType = 'application/json',
  ): Req => ({ method, path: p, body, headers: { ...(body !== undefined ? { 'content-type': contentType } : {}), ...headers } });
  const asA = (csrf = true) => ({ cookie: a.cookie, ...(csrf ? { 'x-csrf-token': a.csrf } : {}) });

  it('answers hostile sign-ins (field types and values, whole bodies, content types) with an envelope, and never signs anyone in', async () => {
    const fields = [...sample(HOSTILE_FIELD_JSON, 14), '"a\\u0000b@example.com"', '"\\ud800"', '" "', JSON.stringify('x'.repeat(2_000))];
    const reqs = [
      ...fields.map((v) => json('POST', '/console/api/session', `{"email":${v},"password":"${PASSWORD}x"}`)),
      ...fields.map((v) => json('POST', '/console/api/session', `{"email":${JSON.stringify(a.email)},"password":${v}}`)),
      json('POST', '/console/api/session', JSON.stringify({ email: a.email, password: `${PASSWORD}\u0000` })),
      json('POST', '/console/api/session', JSON.stringify({ email: `${a.email}\u0000`, password: PASSWORD })),
      json(
        'POST',
        '/console/api/session',
        `{"email":${JSON.stringify(a.email)},"password":"${PASSWORD}","__proto__":{"admin":true},"extra":1}`,
      ),
      json('POST', '/console/api/session', JSON.stringify({ email: [a.email], password: [PASSWORD] })),
      json('POST', '/console/api/session', JSON.stringify({ email: a.email, password: 'p'.repeat(2_000_000) })),
      ...HOSTILE_BODIES.map((h) => json('POST', '/console/api/session', h.body, {}, h.contentType)),
      json('POST', '/console/api/session', undefined),
      json('POST', '/console/api/session', ''),
      {
        method: 'POST',
        path: '/console/api/session',
        body: `email=${encodeURIComponent(a.email)}&password=${encodeURIComponent(PASSWORD)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      json('PUT', '/console/api/session', JSON.stringify({ email: a.email, password: PASSWORD })),
    ];
    const answers = await fuzz(reqs, (_req, ans) => {
      const problem = envelopeProblem(ans);
      if (problem) return problem;
      if (codeOf(ans) === 0 || ans.headers['set-cookie']) return 'a hostile sign-in was signed in';
      return undefined;
    });
    expect(answers.filter(([, ans]) => codeOf(ans) === 2001).length).toBeGreaterThan(20);
  });

  it('answers the session, key and seat routes with no session, a broken one, and a real one with hostile input, never across customers', async () => {
    const routes = [
      'GET /console/api/session',
      'DELETE /console/api/session',
      'GET /console/api/keys',
      'POST /console/api/keys',
      'POST /console/api/keys/{id}/revoke',
      'POST /console/api/seats/{id}/connect',
      'POST /console/api/seats/oauth/complete',
      'POST /console/api/seats/{id}/unbind',
    ];
    const baseBody = (p: string) =>
      p.endsWith('/keys')
        ? '{"name":"fuzz"}'
        : p.endsWith('/complete')
          ? '{"code":"c","state":"s.1.x"}'
          : p.includes('{id}')
            ? '{}'
            : undefined;
    const token = a.cookie.split('=')[1]!;
    const badCredentials: Array<Record<string, string>> = [
      {},
      { cookie: 'vps_session=' },
      { cookie: `vps_session=${'\xff'.repeat(50)}` },
      { cookie: `vps_session=vpss_${'A'.repeat(43)}`, 'x-csrf-token': a.csrf },
      { cookie: `vps_session=${token}x`, 'x-csrf-token': a.csrf },
      { cookie: `vps_session="${token}"`, 'x-csrf-token': a.csrf },
      { cookie: `vps_session=${'x'.repeat(12_000)}` },
      { cookie: `vps_session=a; vps_session=${token}`, 'x-csrf-token': a.csrf },
      { cookie: a.cookie, 'x-csrf-token': b.csrf },
      { cookie: a.cookie, 'x-csrf-token': `${a.csrf}\xff` },
      { cookie: a.cookie, 'x-csrf-token': 'c'.repeat(12_000) },
      { authorization: `Bearer ${a.tenant.apiKey}` },
      { authorization: 'Bearer \xff', cookie: a.cookie, 'x-csrf-token': a.csrf },
    ];
    const build = (route: string, id: string, headers: Record<string, string>, body = baseBody(route)) => {
      const [method, p] = route.split(' ') as [string, string];
      return json(method, p.replace('{id}', id), method === 'GET' ? undefined : body, headers);
    };
    const refused = routes.flatMap((route) => badCredentials.map((h) => build(route, a.seatId, h)));
    await fuzz(refused, (req, ans) => {
      const problem = envelopeProblem(ans);
      const readable = req.method === 'GET' && req.headers?.cookie === a.cookie;
      return problem ?? (codeOf(ans) === 0 && !readable ? 'served without a valid session and CSRF token' : undefined);
    });

    // A's real session: hostile ids, hostile fields, hostile whole bodies; B's ids are 1005.
    const withId = routes.filter((r) => r.includes('{id}'));
    const hostile = [
      ...withId.flatMap((route) => sample(HOSTILE_PATH_VALUES, 10).map((id) => build(route, id, asA()))),
      ...withId.flatMap((route) => [b.seatId, b.tenant.apiKeyId].map((id) => ({ ...build(route, id, asA()), foreign: true }))),
      ...withId.map((route) => build(route, encodeURIComponent(`${a.seatId}\u0000`), asA())),
      ...sample(HOSTILE_FIELD_JSON, 8).flatMap((v) => [
        json('POST', '/console/api/keys', `{"name":${v}}`, asA()),
        json('POST', '/console/api/seats/oauth/complete', `{"code":${v},"state":"s.1.x"}`, asA()),
      ]),
      ...sample(HOSTILE_FIELD_JSON, 8).map((v) => json('POST', '/console/api/seats/oauth/complete', `{"code":"c","state":${v}}`, asA())),
      json('POST', '/console/api/keys', '{"name":"a\\u0000b"}', asA()),
      json('POST', '/console/api/keys', '{"name":"\\udfff\\ud800"}', asA()),
      json('POST', '/console/api/seats/oauth/complete', '{"code":"a\\u0000b","state":"s\\u0000.1.x"}', asA()),
      json(
        'POST',
        '/console/api/seats/oauth/complete',
        JSON.stringify({ code: 'c', state: `${b.seatId}.99999999999.${'A'.repeat(43)}` }),
        asA(),
      ),
      ...['/console/api/keys', '/console/api/seats/oauth/complete', `/console/api/seats/${a.seatId}/connect`].flatMap((p) =>
        sample(HOSTILE_BODIES, 8).map((h) => json('POST', p, h.body, asA(), h.contentType)),
      ),
      ...[
        '/console/api/nope',
        '/console/api',
        '/console/api/',
        '/console/api/keys/x/y',
        '/console/api/..%2fkeys',
        '/console/api/%2e%2e/api/keys',
        '/console/api/keys%00',
      ].map((p) => json('GET', p, undefined, asA())),
    ];
    await fuzz(hostile, (req, ans) => {
      const problem = envelopeProblem(ans);
      if (problem) return problem;
      if ((req as Req & { foreign?: boolean }).foreign && codeOf(ans) !== 1005)
        return `code ${codeOf(ans)} for another customer's id, expected 1005`;
      return undefined;
    });
    // B's keys and seat are untouched; A still signed in; then a sign-out with hostile bodies ends A's session only.
    expect((await call(stack.baseUrl, 'GET', '/v1/seats', { key: b.tenant.apiKey })).body.code).toBe(0);
    const out = await fuzz(sample(HOSTILE_BODIES, 4).map((h) => json('DELETE', '/console/api/session', h.body, asA(), h.contentType)));
    expect(out.every(([, ans]) => [0, 1001, 2001].includes(codeOf(ans)!))).toBe(true);
    expect((await call(stack.baseUrl, 'GET', '/console/api/session', { headers: { cookie: b.cookie } })).body.code).toBe(0);
    Object.assign(a, await signIn(a.email));
  });

  it('redirects the OAuth callback to the console page alone, whatever the query, and answers an envelope otherwise', async () => {
    const offsite = [
      'https://evil.example',
      '//evil.example',
      '/\\evil.example',
      'javascript:alert(1)',
      '%0d%0aLocation:%20https://evil.example',
      '%0aSet-Cookie:%20vps_session=x',
      '#//evil.example',
    ];
    const queries = [
      ...sample(HOSTILE_QUERY_VALUES, 12).flatMap((v) => [`code=${v}&state=${v}`, `error=${v}`, `code=c&state=${v}`]),
      ...['code', 'state', 'error'].flatMap((n) => sample(hostileQueryStrings(n), 5)),
      ...offsite.flatMap((v) => [
        `error=${v}`,
        `code=${v}&state=${v}`,
        `redirect_uri=${v}&error=x`,
        `next=${v}`,
        `return_to=${v}&code=c&state=s`,
      ]),
      `code=${'c'.repeat(2_001)}&state=s`,
      `state=${'s'.repeat(4_001)}&code=c`,
      `error=${'e'.repeat(201)}`,
      '',
      '?',
      '&&&',
      `${'q'.repeat(10_000)}=1`,
    ];
    const reqs: Req[] = [
      ...queries.map((q) => ({ method: 'GET', path: `${CALLBACK}?${q}` })),
      ...sample(
        queries.filter((q) => !/[\x80-\xff]/.test(q) && q.length < 8_000),
        10,
      ).map((q) => ({ method: 'HEAD', path: `${CALLBACK}?${q}` })),
      ...['/', '/..', '/..%2f..%2fhealthz', '%00', '/%2f%2fevil.example', '//evil.example'].map((s) => ({
        method: 'GET',
        path: `${CALLBACK}${s}?error=x`,
      })),
      {
        method: 'GET',
        path: `${CALLBACK}?error=x`,
        headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'javascript' },
      },
      { method: 'POST', path: `${CALLBACK}?error=x`, body: '{}', headers: { 'content-type': 'application/json' } },
    ];
    let redirects = 0;
    await fuzz(reqs, (req, ans) => {
      // A path below or beside the callback is a console route: the console's page, as for any other.
      if (ans.status === 200 && req.path.split('?')[0] !== CALLBACK && dist.includes(ans.text)) return undefined;
      if (ans.status !== 303)
        return req.method === 'HEAD' ? (okHeadStatus(ans.status) ? undefined : `HEAD answered ${ans.status}`) : envelopeProblem(ans);
      redirects += 1;
      const location = String(ans.headers.location ?? '');
      const target = new URL(location, stack.baseUrl);
      if (!location.startsWith('/console/seats#') || target.origin !== stack.baseUrl || target.pathname !== '/console/seats')
        return `redirected off the console page: ${location}`;
      const keys = [...new URLSearchParams(target.hash.slice(1)).keys()].sort().join();
      if (keys !== 'connect_code,connect_state' && keys !== 'connect_error') return `unexpected fragment ${target.hash.slice(0, 80)}`;
      return ans.headers['set-cookie'] ? 'a cookie set by the callback' : undefined;
    });
    expect(redirects).toBeGreaterThan(40);
  });

  /** A platform push as the platform signs it (the sandbox app's secret), or with some of its fields replaced. */
  // Read when each test starts: a push signed with a time older than the 300 s window is refused.
  let now = Math.floor(Date.now() / 1000);
  beforeEach(() => {
    now = Math.floor(Date.now() / 1000);
  });
  const sign = (body: string | Buffer) =>
    `t=${now},s=${createHmac('sha256', SANDBOX_APP.vplatAppSecret).update(`${now}.`).update(body).digest('hex')}`;
  const push = (over: Record<string, unknown>, content: unknown = { comment_action: 'insert', comment_id: 7001, text: 'hi' }) =>
    JSON.stringify({
      client_key: SANDBOX_APP.vplatAppId,
      event: 'comment.update',
      create_time: now,
      user_openid: a.account,
      content: typeof content === 'string' ? content : JSON.stringify(content),
      ...over,
    });

  it('refuses unsigned, badly signed and oversized platform webhooks with an envelope', async () => {
    const reqs: Req[] = [
      ...HOSTILE_BODIES.map((h) => json('POST', WEBHOOK, h.body, { 'tiktok-signature': sign(h.body) }, h.contentType)),
      ...hostileSignatures(now).map((s) => json('POST', WEBHOOK, push({}), { 'tiktok-signature': s })),
      json('POST', WEBHOOK, push({})),
      json('POST', WEBHOOK, '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000), {
        'tiktok-signature': sign('{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000)),
      }),
      json('POST', WEBHOOK, JSON.stringify({ pad: 'x'.repeat(300 * 1024) }), {
        'tiktok-signature': sign(JSON.stringify({ pad: 'x'.repeat(300 * 1024) })),
      }),
      json(
        'POST',
        WEBHOOK,
        Buffer.from([0x7b, 0xff, 0xfe, 0xc3, 0x28, 0x7d]),
        { 'tiktok-signature': sign(Buffer.from([0x7b, 0xff, 0xfe, 0xc3, 0x28, 0x7d])) },
        'application/octet-stream',
      ),
      { method: 'POST', path: WEBHOOK, body: push({}), headers: { 'tiktok-signature': `t=${now},s=${'b'.repeat(64)}` } },
      ...['GET', 'PUT', 'DELETE', 'PATCH'].map((method) => json(method, WEBHOOK, method === 'GET' ? undefined : '{}')),
      ...['/webhooks/shop', '/webhooks/vplat/..', '/webhooks/vplat%00', '/webhooks/', '/webhooks/vplat/x', '/webhooks/%2e%2e/healthz'].map(
        (p) => json('POST', p, '{}'),
      ),
    ];
    const answers = await fuzz(reqs, (req, ans) => {
      const problem = envelopeProblem(ans);
      if (problem) return problem;
      if (Buffer.byteLength(req.body ?? '') > 256 * 1024 && codeOf(ans) !== 2001) return `a body over 256 KB answered ${codeOf(ans)}`;
      const signed = req.headers?.['tiktok-signature'] === sign(req.body ?? '');
      return !signed && codeOf(ans) === 0 ? 'a push without a valid signature was taken' : undefined;
    });
    expect(answers.filter(([, ans]) => codeOf(ans) === 1001).length).toBeGreaterThan(20);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('takes signed pushes with hostile fields without failing, and logs only event types of the table', async () => {
    const deep = (n: number) => `{"comment_action":"insert","a":${'['.repeat(n)}${']'.repeat(n)}}`;
    const signed = [
      ...['a\u0000b', '\ud800', 'x'.repeat(200_000), 123, null, ['x'], { $ne: '' }, b.account].map((user_openid) => push({ user_openid })),
      ...[
        'constructor',
        'toString',
        '__proto__',
        'hasOwnProperty',
        'im_receive_msg',
        'im_send_msg',
        'authorization.removed',
        '',
        'a\u0000',
      ].map((event) => push({ event })),
      ...['constructor', '__proto__', 'valueOf', 'delete', 'set_to_hidden'].map((comment_action) =>
        push({}, { comment_action, comment_id: 7002 }),
      ),
      push({}, { comment_action: 'insert', comment_id: 7003, text: 'a\u0000b' }),
      push({}, '{"comment_action":"insert","comment_id":7004,"text":"\\ud800"}'),
      push({}, { comment_action: 'insert', comment_id: 7005, timestamp: 1e300 }),
      push({}, { comment_action: 'insert', comment_id: 7006, timestamp: -8.64e15 - 1 }),
      push({ create_time: 'x' }, { comment_action: 'insert', comment_id: 7007 }),
      push({ create_time: 1e300 }, { comment_action: 'insert', comment_id: 7008 }),
      push({ event: 'im_send_msg' }, { message_id: { a: 1 }, timestamp: now * 1000 }),
      push({ event: 'im_send_msg' }, { message_id: 'm\u0000', timestamp: now * 1000 }),
      push({}, deep(5_000)),
      push({}, deep(60_000)),
      push({}, '[]'),
      push({}, 'null'),
      push({}, '"x"'),
      push({}, '{"comment_action":"insert"'),
      push({}, '{"__proto__":{"polluted":1},"comment_action":"insert","comment_id":1234567890123456789012}'),
      push({ content: { comment_action: 'insert' } }),
      push({ client_key: 'another-app' }),
    ];
    const failed = await fuzz(signed.map((body) => json('POST', WEBHOOK, body, { 'tiktok-signature': sign(body) }))).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // What the pushes made of A's log: only types of the table (a push the table does not name is ignored).
    const events = await call<{ items: Array<{ type: string }> }>(stack.baseUrl, 'GET', '/v1/events?limit=100', { key: a.tenant.apiKey });
    expect({ failed, types: events.body.data.items.map((e) => e.type).filter((t) => !isEventType(t)) }).toEqual({
      failed: undefined,
      types: [],
    });
  });

  it('answers hostile, foreign and tampered media URLs 404 with 1005 (GET and HEAD), and serves a valid one under hostile ranges', async () => {
    const [prefix, query] = a.videoUrl.split('?') as [string, string];
    const { expires, signature } = Object.fromEntries(new URLSearchParams(query)) as { expires: string; signature: string };
    const base = '/media/videos/';
    const refused: Req[] = [
      ...sample(HOSTILE_PATH_VALUES, 14).map((id) => ({ method: 'GET', path: `${base}${id}?${query}` })),
      // HEAD with raw bytes in the path: the last test, on every surface at once.
      ...sample(HOSTILE_TRAVERSALS, 14).flatMap((t) => [
        { method: 'GET', path: `${base}${t}?${query}` },
        ...(/[\x80-\xff]/.test(t) ? [] : [{ method: 'HEAD', path: `${base}${t}` }]),
        { method: 'GET', path: `${base}${a.videoId}/${t}?${query}` },
      ]),
      ...sample(HOSTILE_QUERY_VALUES, 10).flatMap((v) => [
        { method: 'GET', path: `${prefix}?expires=${v}&signature=${signature}` },
        { method: 'GET', path: `${prefix}?expires=${expires}&signature=${v}` },
      ]),
      ...sample(hostileQueryStrings('signature'), 5).map((q) => ({ method: 'GET', path: `${prefix}?expires=${expires}&${q}` })),
      { method: 'GET', path: `${base}${b.videoId}?${query}` },
      { method: 'HEAD', path: `${base}${b.videoId}?${query}` },
      { method: 'GET', path: `${prefix}?expires=${Number(expires) + 1}&signature=${signature}` },
      { method: 'GET', path: `${prefix}?expires=${expires}&signature=${signature.toUpperCase()}` },
      { method: 'GET', path: `${prefix}?expires=${expires}&signature=${signature}x` },
      { method: 'GET', path: `${prefix}?expires=${expires}&signature=${signature}&extra=1` },
      { method: 'GET', path: `${prefix}%00?${query}` },
      { method: 'GET', path: `${prefix}` },
      { method: 'GET', path: base },
      { method: 'POST', path: `${prefix}?${query}`, body: '{}', headers: { 'content-type': 'application/json' } },
    ];
    // The router refuses, before any route, a path it cannot decode and a segment over its 100 characters (2001 naming the path).
    const unroutable = (p: string) =>
      !decodable(p) ||
      p
        .split('?')[0]!
        .split('/')
        .some((seg) => seg.length > 100);
    await fuzz(refused, (req, ans) => {
      if (req.method === 'HEAD')
        return ans.status === 404 || (unroutable(req.path) && ans.status === 422) ? undefined : `HEAD answered ${ans.status} ${ans.text}`;
      const problem = envelopeProblem(ans);
      if (problem) return problem;
      const want = req.method !== 'POST' && unroutable(req.path) ? [1005, 2001] : [1005];
      return want.includes(codeOf(ans)!) ? undefined : `code ${codeOf(ans)}, expected ${want.join(' or ')}`;
    });
    const ranges = [
      'bytes=0-0,1-1',
      'bytes=99999999999999999999-',
      'bytes=-99999999999999999999',
      'bytes=5-1',
      'bytes=--',
      'bytes=0-99999999999999999999',
      'bytes=-0',
      'items=0-1',
      'bytes=\xff-',
      'x'.repeat(10_000),
    ];
    const served = [
      ...ranges.map((range) => ({ method: 'GET', path: a.videoUrl, headers: { range } })),
      { method: 'HEAD', path: a.videoUrl, headers: { range: 'bytes=0-0' } },
      { method: 'GET', path: a.videoUrl, headers: { 'if-none-match': '"\xff"', 'if-range': 'x'.repeat(5_000), range: 'bytes=0-1' } },
    ];
    await fuzz(served, (_req, ans) =>
      [200, 206, 304, 416].includes(ans.status) ? undefined : `a valid URL answered ${ans.status}: ${ans.text.slice(0, 120)}`,
    );
  });

  it('serves nothing from outside the console build, whatever the traversal, and keeps /console/config.json, /docs, /openapi.json and the probes to their own answers', async () => {
    const reqs: Req[] = [
      ...HOSTILE_TRAVERSALS.flatMap((t) =>
        ['/console/', '/console/assets/', '/console/api/', '/console/seats/', '/docs/', '/docs/static/', '/'].map((p) => ({
          method: 'GET',
          path: `${p}${t}`,
        })),
      ),
      ...sample(
        HOSTILE_TRAVERSALS.filter((t) => !/[\x80-\xff]/.test(t)),
        8,
      ).map((t) => ({ method: 'HEAD', path: `/console/assets/${t}` })),
      ...sample(HOSTILE_PATH_VALUES, 10).map((v) => ({ method: 'GET', path: `/console/assets/${v}.js` })),
      ...[
        '/console',
        '/console/',
        '/console/index.html',
        '/console/favicon.svg',
        '/console/config.json',
        '/console/config.json/..',
        '/console/config.json%00',
      ].map((p) => ({ method: 'GET', path: p })),
      ...['/console/config.json', '/docs', '/openapi.json', '/healthz', '/readyz'].flatMap((p) => [
        ...sample(HOSTILE_QUERY_VALUES, 3).map((v) => ({ method: 'GET', path: `${p}?x=${v}` })),
        { method: 'GET', path: `${p}?${sample(hostileQueryStrings('x'), 1)[0]!}` },
        { method: 'POST', path: p, body: '{}', headers: { 'content-type': 'application/json' } },
        { method: 'DELETE', path: p },
        { method: 'GET', path: `${p}/..%2f..%2fpackage.json` },
      ]),
    ];
    const own: Record<string, RegExp> = {
      '/console/config.json': /^\{"temporalUiUrl":/,
      '/openapi.json': /^\{"openapi":"3\.1\.0"/,
      '/healthz': /^\{"status":"ok"\}$/,
      '/readyz': /^\{"status":"(ready|not_ready)"\}$/,
      '/docs': /<html/i,
    };
    await fuzz(reqs, (req, ans) => {
      const p = req.path.split('?')[0]!;
      if (req.method === 'GET' && own[p] && [200, 503].includes(ans.status))
        return own[p].test(ans.text) && (ans.status === 200 || p === '/readyz')
          ? undefined
          : `${p} answered ${ans.status}: ${ans.text.slice(0, 80)}`;
      if (p === '/console' && ans.status === 301)
        return ans.headers.location === '/console/' ? undefined : `redirected to ${String(ans.headers.location)}`;
      if (ans.status === 200 && !String(ans.headers['content-type']).includes('json')) {
        // The console's own files (index.html for a console route): nothing else ever.
        if (!p.startsWith('/console/') || /^\/console\/api(\/|$)/.test(p)) return `served ${p} from outside the console`;
        return dist.includes(ans.text) || req.method === 'HEAD'
          ? undefined
          : `served a file that is not in the console build: ${ans.text.slice(0, 80)}`;
      }
      if (req.method === 'HEAD')
        return ans.status === 404 || (!decodable(req.path) && ans.status === 422) ? undefined : `HEAD answered ${ans.status} ${ans.text}`;
      const problem = envelopeProblem(ans);
      if (problem) return problem;
      return [1005, 2001].includes(codeOf(ans)!) ? undefined : `code ${codeOf(ans)} for ${p}`;
    });
  });

  it('answers unknown paths, unknown methods and raw requests at the root with an envelope', async () => {
    const paths = [
      '/',
      '/x',
      '/v2/seats',
      '/metrics',
      '/.env',
      '/.git/config',
      '/package.json',
      '/node_modules/fastify/package.json',
      '/gen',
      '/%00',
      '/..',
      '//',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/media',
      '/webhooks',
    ];
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH', 'PURGE'];
    const reqs: Req[] = paths.flatMap((p) =>
      sample(methods, 4).map((method) => ({
        method,
        path: p,
        ...(method === 'GET' || method === 'TRACE' ? {} : { body: '{}', headers: { 'content-type': 'application/json' } }),
      })),
    );
    await fuzz(reqs, (_req, ans) => envelopeProblem(ans) ?? ([1005, 2001].includes(codeOf(ans)!) ? undefined : `code ${codeOf(ans)}`));
    const raw = (line: string, extra = '', body = '') =>
      Buffer.from(`${line}\r\nHost: x\r\n${extra}Connection: close\r\n\r\n${body}`, 'latin1');
    const payloads = [
      raw('GET /console/../../package.json HTTP/1.1'),
      raw('GET /console/assets/../../../package.json HTTP/1.1'),
      raw('GET /media/videos/../../../package.json HTTP/1.1'),
      raw('GET /console/a\x00b HTTP/1.1'),
      raw('GET /console/\xff\xfe.js HTTP/1.1'),
      raw(`GET ${CALLBACK}?error=\xff\xfe HTTP/1.1`),
      raw(`GET http://evil.example${CALLBACK}?error=x HTTP/1.1`),
      raw('OPTIONS * HTTP/1.1'),
      raw('FOO / HTTP/1.1'),
      raw(
        `POST ${WEBHOOK} HTTP/1.1`,
        'Content-Type: application/json\r\nContent-Length: 8\r\nTiktok-Signature: t=1,s=aa\r\n',
        '{"a":"\xff\xfe"}',
      ),
      raw(`POST ${WEBHOOK} HTTP/1.1`, 'Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n'),
      raw(`POST ${WEBHOOK} HTTP/1.1`, `Content-Type: application/json\r\nContent-Length: ${300 * 1024}\r\n`, '{'),
      raw('POST /console/api/session HTTP/1.1', 'Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n', '{}'),
      raw(
        'POST /console/api/session HTTP/1.1',
        'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n',
        'zz\r\n{}\r\n0\r\n\r\n',
      ),
      raw('GET /healthz HTTP/1.1', 'Bad\x00Header: x\r\n'),
    ];
    const problems: string[] = [];
    for (const payload of payloads) {
      sent += 1;
      const ans = await sendRaw(stack.baseUrl, payload);
      const line = payload.toString('latin1').slice(0, 60);
      const text = `${ans.text} ${JSON.stringify(ans.headers)}`;
      const problem =
        (line.startsWith('GET http://evil') && ans.status === 303
          ? String(ans.headers.location).startsWith('/console/seats#')
            ? undefined
            : `redirected to ${String(ans.headers.location)}`
          : envelopeProblem(ans)) ?? (SERVER_FILE_MARKS.some((m) => text.includes(m)) ? 'a server file served' : undefined);
      if (problem) problems.push(`${JSON.stringify(line)}: ${problem}`);
    }
    // A request line Node's parser refuses is answered 2001 before any route; to a HEAD, without a body (RFC 9110 §9.3.2).
    for (const p of [
      '/console/assets/\xff.js',
      '/media/videos/\xff',
      `${CALLBACK}?error=\xff`,
      `${CALLBACK}?code=${'x'.repeat(20_000)}`,
      WEBHOOK,
      '/\xff',
    ]) {
      sent += 1;
      const ans = await sendRaw(stack.baseUrl, raw(`HEAD ${p === WEBHOOK ? `${p}\xff` : p} HTTP/1.1`));
      if (ans.status !== 422 || ans.text !== '')
        problems.push(
          `HEAD ${JSON.stringify(p.slice(0, 60))}: HTTP ${ans.status} with a body of ${ans.text.length} bytes: ${ans.text.slice(0, 80)}`,
        );
    }
    expect(problems).toEqual([]);
    expect((await send(stack.baseUrl, { method: 'GET', path: '/healthz' })).status).toBe(200);
  });
});
