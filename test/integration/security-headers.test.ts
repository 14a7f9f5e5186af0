/**
 * The headers a browser or a cache acts on, over real HTTP: every answer of the gateway says
 * `nosniff` (successes, refusals, unknown routes, requests Node's parser refuses), and every answer
 * that shows a secret (a webhook secret, a console key, the console session's CSRF token, a seat
 * connect's signed state) says `no-store`; core's Connect answers, the admin's keys among them, say both.
 */
import net from 'node:net';
import { call } from '../helpers/http';
import { createTenant, startStack, type Stack, type Tenant } from '../helpers/stack';

const PUBLIC_HOOK = { url: 'https://93.184.215.14/hooks/headers', eventTypes: ['*'] };
const PASSWORD = 'correct horse battery staple';

function expectNosniff(headers: Headers) {
  expect(headers.get('x-content-type-options')).toBe('nosniff');
}

describe('security headers', () => {
  let stack: Stack;
  let tenant: Tenant;
  beforeAll(async () => {
    stack = await startStack();
    tenant = await createTenant(stack);
  });
  afterAll(() => stack.close());

  it('sends nosniff on answers, refusals and unknown routes, and no-store only where a secret is shown', async () => {
    const ok = await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey });
    const refused = await call(stack.baseUrl, 'GET', '/v1/seats');
    const invalid = await call(stack.baseUrl, 'GET', '/v1/videos?limit=many', { key: tenant.apiKey });
    const unknown = await call(stack.baseUrl, 'GET', '/v1/no-such-route', { key: tenant.apiKey });
    expect([ok.status, refused.status, invalid.status, unknown.status]).toEqual([200, 401, 422, 404]);
    for (const res of [ok, refused, invalid, unknown]) {
      expectNosniff(res.headers);
      expect(res.headers.get('cache-control')).toBeNull();
    }
  });

  it('sends no-store with a webhook secret, when the endpoint is created and when its secret is rotated', async () => {
    const created = await call<{ id: string; secret: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: PUBLIC_HOOK,
    });
    expect(created.body.data.secret).toEqual(expect.any(String));
    expect(created.headers.get('cache-control')).toBe('no-store');
    expectNosniff(created.headers);
    const rotated = await call<{ secret: string }>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${created.body.data.id}/rotate-secret`, {
      key: tenant.apiKey,
    });
    expect(rotated.body.data.secret).toEqual(expect.any(String));
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    // A refusal on such a route shows nothing, but is kept by no cache either.
    const anonymous = await call(stack.baseUrl, 'POST', '/v1/webhook-endpoints', { json: PUBLIC_HOOK });
    expect(anonymous.body.code).toBe(1001);
    expect(anonymous.headers.get('cache-control')).toBe('no-store');
    // The list shows no secret.
    const listed = await call(stack.baseUrl, 'GET', '/v1/webhook-endpoints', { key: tenant.apiKey });
    expect(listed.headers.get('cache-control')).toBeNull();
  });

  it('sends no-store with the console session and a new console key, nosniff on every console answer', async () => {
    await stack.admin.setUserPassword({ userId: tenant.userId, password: PASSWORD });
    const signIn = await call<{ csrfToken: string }>(stack.baseUrl, 'POST', '/console/api/session', {
      json: { email: `user-${tenant.customerId}@example.com`, password: PASSWORD },
    });
    expect(signIn.body.code).toBe(0);
    expect(signIn.headers.get('cache-control')).toBe('no-store');
    expectNosniff(signIn.headers);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const browser = { cookie, 'x-csrf-token': signIn.body.data.csrfToken };

    const session = await call(stack.baseUrl, 'GET', '/console/api/session', { headers: browser });
    expect(session.headers.get('cache-control')).toBe('no-store');
    const key = await call<{ key: string }>(stack.baseUrl, 'POST', '/console/api/keys', { headers: browser, json: { name: 'headers' } });
    expect(key.body.data.key).toMatch(/^vps_/);
    expect(key.headers.get('cache-control')).toBe('no-store');
    expectNosniff(key.headers);
    const keys = await call(stack.baseUrl, 'GET', '/console/api/keys', { headers: browser });
    expect(keys.headers.get('cache-control')).toBeNull();
    expectNosniff(keys.headers);
    const wrongPassword = await call(stack.baseUrl, 'POST', '/console/api/session', {
      json: { email: `user-${tenant.customerId}@example.com`, password: 'not the password' },
    });
    expect(wrongPassword.body.code).toBe(1001);
    expectNosniff(wrongPassword.headers);
  });

  it("sends no-store with a seat connect's authorize URL and the platform's redirect back", async () => {
    const connect = await call(stack.baseUrl, 'POST', '/console/api/seats/seat_nope/connect', {});
    expect(connect.headers.get('cache-control')).toBe('no-store');
    const callback = await fetch(`${stack.baseUrl}/console/oauth/callback?code=abc&state=def`, { redirect: 'manual' });
    expect(callback.status).toBe(303);
    expect(callback.headers.get('cache-control')).toBe('no-store');
    expectNosniff(callback.headers);
  });

  it("sends nosniff with the gateway's own answer to a request Node's parser refuses", async () => {
    const url = new URL(stack.baseUrl);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () =>
        socket.write('GET /v1/seats HTTP/1.1\r\nBad Header\r\n\r\n'),
      );
      let data = '';
      socket.on('data', (c: Buffer) => (data += c.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 422 /);
    expect(answer).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
  });

  it("sends nosniff and no-store with core's Connect answers, the admin's new key among them", async () => {
    const res = await fetch(`${stack.coreUrl}/vps.admin.v1.AdminService/CreateApiKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.adminToken}` },
      body: JSON.stringify({ userId: tenant.userId, name: 'over connect' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { plaintext: string }).plaintext).toMatch(/^vps_/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expectNosniff(res.headers);
    const refused = await fetch(`${stack.coreUrl}/vps.admin.v1.AdminService/CreateApiKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('cache-control')).toBe('no-store');
  });
});
