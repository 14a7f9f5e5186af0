/**
 * The console's sign-in, sessions and API keys, over real HTTP: the session cookie, its CSRF token
 * on writes, the cookie as a /v1 credential, and key management that only a session may do.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { createConnectTransport } from '@connectrpc/connect-node';
import { eq, sql } from 'drizzle-orm';
import { insertSession } from '../../core/db/repositories/console-sessions';
import { consoleSessions } from '../../core/db/schema';
import { generateSessionToken } from '../../core/crypto/session-tokens';
import { createLogger } from '../../core/logger';
import { FolderMediaStore } from '../../core/media/folder-store';
import { buildApp } from '../../gateway/app';
import { call, type Envelope } from '../helpers/http';
import { cleanEnv, REPO_ROOT } from '../helpers/processes';
import { createTenant, startStack, type Stack, type Tenant } from '../helpers/stack';

const PASSWORD = 'correct horse battery staple';
const PUBLIC_HOOK = { url: 'https://93.184.215.14/hooks/console', eventTypes: ['*'] };

interface SessionData {
  user: { id: string; email: string; name: string };
  customer: { id: string; name: string };
  csrfToken: string;
}
interface KeyJson {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  key?: string;
}

const emailOf = (tenant: Tenant) => `user-${tenant.customerId}@example.com`;

/** A tenant whose user has a console password, set through the AdminService as an operator would. */
async function consoleTenant(stack: Stack): Promise<Tenant & { email: string }> {
  const tenant = await createTenant(stack);
  await stack.admin.setUserPassword({ userId: tenant.userId, password: PASSWORD });
  return { ...tenant, email: emailOf(tenant) };
}

/** Signs in and returns what a browser would keep: the cookie pair and the CSRF token. */
async function signIn(stack: Stack, email: string, password = PASSWORD) {
  const res = await call<SessionData>(stack.baseUrl, 'POST', '/console/api/session', { json: { email, password } });
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { res, setCookie, cookie: setCookie.split(';')[0]!, csrf: res.body.data.csrfToken };
}

/** Options for `call` that send the cookie, and the CSRF token when given. */
function asBrowser(cookie: string, csrf?: string, json?: unknown) {
  return { headers: { cookie, ...(csrf ? { 'x-csrf-token': csrf } : {}) }, ...(json !== undefined ? { json } : {}) };
}

function expectRefused(res: Envelope<unknown>, code: number, status: number) {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ code, data: {} });
}

describe('console sign-in, sessions and API keys', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('signs in with e-mail and password, sets an HttpOnly SameSite=Strict cookie, and describes the session', async () => {
    const tenant = await consoleTenant(stack);
    const { res, setCookie, cookie } = await signIn(stack, tenant.email.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      code: 0,
      message: 'ok',
      data: {
        user: { id: tenant.userId, email: tenant.email, name: 'Test' },
        customer: { id: tenant.customerId, name: expect.any(String) },
        csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      },
    });
    const attributes = setCookie.split(';').map((a) => a.trim());
    expect(attributes[0]).toMatch(/^vps_session=vpss_[A-Za-z0-9_-]{43}$/);
    expect(attributes).toEqual(expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Strict']));
    // Served over http here: a Secure cookie would never come back.
    expect(attributes).not.toContain('Secure');

    const session = await call<SessionData>(stack.baseUrl, 'GET', '/console/api/session', asBrowser(cookie));
    expect(session.body).toEqual(res.body);

    const seats = await call(stack.baseUrl, 'GET', '/v1/seats', asBrowser(cookie));
    expect(seats.status).toBe(200);
    expect(seats.body).toEqual({ code: 0, message: 'ok', data: { items: [] } });
  });

  it('answers a wrong password and an unknown e-mail alike with 1001, and sets no cookie', async () => {
    const tenant = await consoleTenant(stack);
    const wrong = await signIn(stack, tenant.email, 'not the password at all');
    const unknown = await signIn(stack, `nobody-${tenant.customerId}@example.com`);
    const noPassword = await signIn(stack, emailOf(await createTenant(stack)));
    for (const r of [wrong, unknown, noPassword]) {
      expectRefused(r.res, 1001, 401);
      expect(r.setCookie).toBe('');
    }
    expect(unknown.res.body.message).toBe(wrong.res.body.message);
    expect(noPassword.res.body.message).toBe(wrong.res.body.message);
  });

  it('refuses a disabled user with 1002, at sign-in only to someone who knows the password', async () => {
    const tenant = await consoleTenant(stack);
    const open = await signIn(stack, tenant.email);
    await stack.admin.setUserDisabled({ userId: tenant.userId, disabled: true });
    expectRefused((await signIn(stack, tenant.email)).res, 1002, 403);
    // A session opened before is refused from its very next request.
    expectRefused(await call(stack.baseUrl, 'GET', '/v1/seats', asBrowser(open.cookie)), 1002, 403);
    expectRefused((await signIn(stack, tenant.email, 'a wrong password here')).res, 1001, 401);
  });

  it('refuses 2001 naming the field when the e-mail or password is missing', async () => {
    const res = await call(stack.baseUrl, 'POST', '/console/api/session', { json: { email: 'a@example.com' } });
    expectRefused(res, 2001, 422);
    expect(res.body.message).toContain('password');
  });

  it('refuses a cookie-authenticated write without the X-CSRF-Token header, and accepts it with the header', async () => {
    const tenant = await consoleTenant(stack);
    const { cookie, csrf } = await signIn(stack, tenant.email);

    const missing = await call(stack.baseUrl, 'POST', '/v1/webhook-endpoints', asBrowser(cookie, undefined, PUBLIC_HOOK));
    expectRefused(missing, 1001, 401);
    expect(missing.body.message).toContain('X-CSRF-Token');
    const other = await signIn(stack, tenant.email);
    expectRefused(await call(stack.baseUrl, 'POST', '/v1/webhook-endpoints', asBrowser(cookie, other.csrf, PUBLIC_HOOK)), 1001, 401);

    const created = await call<{ id: string; secret: string }>(
      stack.baseUrl,
      'POST',
      '/v1/webhook-endpoints',
      asBrowser(cookie, csrf, PUBLIC_HOOK),
    );
    expect(created.status).toBe(200);
    expect(created.body.data.secret).toEqual(expect.any(String));
    const listed = await call<{ items: { id: string }[] }>(stack.baseUrl, 'GET', '/v1/webhook-endpoints', { key: tenant.apiKey });
    expect(listed.body.data.items.map((e) => e.id)).toEqual([created.body.data.id]);
  });

  it('lets an Authorization header win over the cookie', async () => {
    const tenant = await consoleTenant(stack);
    const { cookie } = await signIn(stack, tenant.email);
    const badKey = await call(stack.baseUrl, 'GET', '/v1/seats', { authorization: 'Bearer vps_not-a-key', headers: { cookie } });
    expectRefused(badKey, 1001, 401);
    // Authenticated by the key, the write needs no CSRF token.
    const byKey = await call(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      headers: { cookie },
      json: PUBLIC_HOOK,
    });
    expect(byKey.body.code).toBe(0);
  });

  it('streams events over SSE with the cookie alone, as an EventSource does', async () => {
    const tenant = await consoleTenant(stack);
    const { cookie } = await signIn(stack, tenant.email);
    const abort = new AbortController();
    try {
      const res = await fetch(`${stack.baseUrl}/v1/events/stream`, {
        headers: { cookie, accept: 'text/event-stream' },
        signal: abort.signal,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
    } finally {
      abort.abort();
    }
  });

  it('creates a key shown once, lists keys newest first without secrets, records last use, and revokes at once', async () => {
    const tenant = await consoleTenant(stack);
    const { cookie, csrf } = await signIn(stack, tenant.email);

    expectRefused(await call(stack.baseUrl, 'POST', '/console/api/keys', asBrowser(cookie, undefined, { name: 'ci' })), 1001, 401);
    const created = await call<KeyJson>(stack.baseUrl, 'POST', '/console/api/keys', asBrowser(cookie, csrf, { name: 'ci' }));
    expect(created.status).toBe(200);
    const key = created.body.data.key!;
    expect(key).toMatch(/^vps_[A-Za-z0-9_-]{43}$/);
    expect(created.body.data).toEqual({
      id: expect.any(String),
      name: 'ci',
      prefix: key.slice(0, 12),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      key,
    });

    const list = async () =>
      (await call<{ items: KeyJson[] }>(stack.baseUrl, 'GET', '/console/api/keys', asBrowser(cookie))).body.data.items;
    const before = await list();
    expect(before.map((k) => k.id)).toEqual([created.body.data.id, tenant.apiKeyId]);
    expect(JSON.stringify(before)).not.toContain(key);
    expect(before[0]).not.toHaveProperty('key');

    expect((await call(stack.baseUrl, 'GET', '/v1/seats', { key })).body.code).toBe(0);
    const used = (await list())[0]!;
    expect(used.lastUsedAt).not.toBeNull();
    expect(Date.parse(used.lastUsedAt!)).toBeGreaterThanOrEqual(Date.parse(used.createdAt));

    const revoked = await call<KeyJson>(stack.baseUrl, 'POST', `/console/api/keys/${created.body.data.id}/revoke`, asBrowser(cookie, csrf));
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ id: created.body.data.id, revokedAt: expect.any(String) });
    expectRefused(await call(stack.baseUrl, 'GET', '/v1/seats', { key }), 1001, 401);
    // The other key is untouched.
    expect((await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey })).body.code).toBe(0);
  });

  it("answers 1005 for another customer's key", async () => {
    const mine = await consoleTenant(stack);
    const theirs = await createTenant(stack);
    const { cookie, csrf } = await signIn(stack, mine.email);
    expectRefused(await call(stack.baseUrl, 'POST', `/console/api/keys/${theirs.apiKeyId}/revoke`, asBrowser(cookie, csrf)), 1005, 404);
    expect((await call(stack.baseUrl, 'GET', '/v1/seats', { key: theirs.apiKey })).body.code).toBe(0);
  });

  it('does not let an API key manage keys or sessions', async () => {
    const tenant = await consoleTenant(stack);
    expectRefused(await call(stack.baseUrl, 'GET', '/console/api/keys', { key: tenant.apiKey }), 1001, 401);
    expectRefused(
      await call(stack.baseUrl, 'POST', '/console/api/keys', { key: tenant.apiKey, json: { name: 'minted by a key' } }),
      1001,
      401,
    );
    expectRefused(await call(stack.baseUrl, 'POST', `/console/api/keys/${tenant.apiKeyId}/revoke`, { key: tenant.apiKey }), 1001, 401);
    expectRefused(await call(stack.baseUrl, 'GET', '/console/api/session', { key: tenant.apiKey }), 1001, 401);
    expect((await stack.admin.listApiKeys({ customerId: tenant.customerId })).apiKeys).toHaveLength(1);
  });

  it('signs out: the cookie is cleared and no longer works anywhere', async () => {
    const tenant = await consoleTenant(stack);
    const { cookie, csrf } = await signIn(stack, tenant.email);
    expectRefused(await call(stack.baseUrl, 'DELETE', '/console/api/session', asBrowser(cookie)), 1001, 401);

    const out = await call(stack.baseUrl, 'DELETE', '/console/api/session', asBrowser(cookie, csrf));
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ code: 0, message: 'ok', data: {} });
    expect(out.headers.get('set-cookie')).toMatch(/^vps_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);

    expectRefused(await call(stack.baseUrl, 'GET', '/console/api/session', asBrowser(cookie)), 1001, 401);
    expectRefused(await call(stack.baseUrl, 'GET', '/v1/seats', asBrowser(cookie)), 1001, 401);
  });

  it('ends every session of a user whose password is changed', async () => {
    const tenant = await consoleTenant(stack);
    const { cookie } = await signIn(stack, tenant.email);
    await stack.admin.setUserPassword({ userId: tenant.userId, password: 'a brand new passphrase' });
    expectRefused(await call(stack.baseUrl, 'GET', '/v1/seats', asBrowser(cookie)), 1001, 401);
    expect((await signIn(stack, tenant.email, 'a brand new passphrase')).res.body.code).toBe(0);
  });

  it('refuses a session past its lifetime with 1001', async () => {
    const tenant = await consoleTenant(stack);
    const { token, hash } = generateSessionToken();
    const { id } = await insertSession(stack.database.db, {
      userId: tenant.userId,
      tokenHash: hash,
      lifetime: { ttlMs: 1, maxAgeMs: 60_000 },
    });
    // The database's clock decides; it passes a millisecond within a statement or two.
    for (;;) {
      const [row] = await stack.database.db
        .select({ over: sql<boolean>`clock_timestamp() > ${consoleSessions.expiresAt}` })
        .from(consoleSessions)
        .where(eq(consoleSessions.id, id));
      if (row!.over) break;
    }
    const cookie = `vps_session=${token}`;
    expectRefused(await call(stack.baseUrl, 'GET', '/console/api/session', asBrowser(cookie)), 1001, 401);
    expectRefused(await call(stack.baseUrl, 'GET', '/v1/seats', asBrowser(cookie)), 1001, 401);
  });

  it('extends an idle session on use, never past its absolute lifetime', async () => {
    const tenant = await consoleTenant(stack);
    const { cookie } = await signIn(stack, tenant.email);
    const [session] = await stack.database.db.select().from(consoleSessions).where(eq(consoleSessions.userId, tenant.userId));
    // As if the session had last been used an hour ago.
    await stack.database.db
      .update(consoleSessions)
      .set({ expiresAt: sql`${consoleSessions.expiresAt} - interval '1 hour'` })
      .where(eq(consoleSessions.id, session!.id));
    expect((await call(stack.baseUrl, 'GET', '/v1/seats', asBrowser(cookie))).body.code).toBe(0);
    const [after] = await stack.database.db.select().from(consoleSessions).where(eq(consoleSessions.id, session!.id));
    expect(after!.expiresAt.getTime()).toBeGreaterThan(session!.expiresAt.getTime() - 60_000);
    expect(after!.expiresAt.getTime()).toBeLessThanOrEqual(after!.absoluteExpiresAt.getTime());
  });

  it('sets a password with `vps admin users set-password`, reading it from stdin', async () => {
    const tenant = await createTenant(stack);
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'vps'), 'admin', 'users', 'set-password', tenant.userId], {
      env: cleanEnv({ VPS_CORE_URL: stack.coreUrl, VPS_ADMIN_TOKEN: stack.adminToken }),
      cwd: REPO_ROOT,
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stdin.end('piped in from a file\n');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ user: { id: tenant.userId } });
    expect(stdout).not.toContain('piped in from a file');
    expect((await signIn(stack, emailOf(tenant), 'piped in from a file')).res.body.code).toBe(0);
  });

  it('marks the cookie Secure when the public URL is https', async () => {
    const tenant = await consoleTenant(stack);
    const app = await buildApp({
      transport: createConnectTransport({ baseUrl: stack.coreUrl, httpVersion: '1.1', useBinaryFormat: true }),
      logger: createLogger('silent', 'test'),
      media: new FolderMediaStore(os.tmpdir()),
      maxUploadBytes: 1024,
      publicUrl: 'https://api.example.com',
    });
    try {
      const res = await app.inject({ method: 'POST', url: '/console/api/session', payload: { email: tenant.email, password: PASSWORD } });
      expect(res.statusCode).toBe(200);
      expect(String(res.headers['set-cookie']).split('; ')).toEqual(
        expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Strict', 'Secure']),
      );
    } finally {
      await app.close();
    }
  });
});

describe('rate limit of console sessions', () => {
  let stack: Stack;
  beforeAll(async () => {
    // One request a minute: the second request of a bucket is refused however fast the machine is.
    // Over HTTP to core, so the session credential also crosses the Connect wire.
    stack = await startStack({ ratePerMinute: 1, transport: 'http' });
  });
  afterAll(() => stack.close());

  it("draws from the user's own bucket, shared by the user's sessions and apart from the keys'", async () => {
    const tenant = await consoleTenant(stack);
    const first = await signIn(stack, tenant.email);
    const second = await signIn(stack, tenant.email);
    expect((await call(stack.baseUrl, 'GET', '/v1/seats', asBrowser(first.cookie))).body.code).toBe(0);
    const refused = await call(stack.baseUrl, 'GET', '/v1/seats', asBrowser(second.cookie));
    expectRefused(refused, 2002, 429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey })).body.code).toBe(0);
  });
});
