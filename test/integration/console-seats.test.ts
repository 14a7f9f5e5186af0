/**
 * Connecting a seat from the console through the platform's consent page, over real HTTP against
 * the emulator: start (the authorize address with our callback and a signed state), approve on the
 * emulator's page, the callback handing the code to the console page, completion with the session
 * cookie, reconnecting after the authorization was removed, and unbinding.
 */
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import * as seatsRepo from '../../core/db/repositories/seats';
import { openCredentials } from '../../core/upstream/credentials';
import type { SeatJson } from '../../gateway/schemas/seats';
import { call, type Envelope } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { startTestSandbox } from '../helpers/sandbox';
import { createTenant, startStack, type Stack, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type WorkingStack } from '../helpers/working-stack';

const PASSWORD = 'correct horse battery staple';
const CALLBACK = '/console/oauth/callback';

interface Browser {
  tenant: Tenant;
  cookie: string;
  csrf: string;
}

/** A tenant whose user signed in to the console: what a browser keeps (cookie and CSRF token). */
async function signedIn(stack: Stack): Promise<Browser> {
  const tenant = await createTenant(stack);
  await stack.admin.setUserPassword({ userId: tenant.userId, password: PASSWORD });
  const res = await call<{ csrfToken: string }>(stack.baseUrl, 'POST', '/console/api/session', {
    json: { email: `user-${tenant.customerId}@example.com`, password: PASSWORD },
  });
  expect(res.status).toBe(200);
  return { tenant, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: res.body.data.csrfToken };
}

function post<T>(stack: Stack, browser: Browser, path: string, json?: unknown): Promise<Envelope<T>> {
  return call<T>(stack.baseUrl, 'POST', path, { headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf }, json: json ?? {} });
}

async function newSeat(stack: Stack, tenant: Tenant, track = Track.VIDEO): Promise<string> {
  const { seat } = await stack.admin.createSeat({ customerId: tenant.customerId, track, name: 'console' });
  return seat!.id;
}

async function startConnect(stack: Stack, browser: Browser, seatId: string): Promise<URL> {
  const res = await post<{ authorizeUrl: string }>(stack, browser, `/console/api/seats/${seatId}/connect`);
  expect(res.status).toBe(200);
  return new URL(res.body.data.authorizeUrl);
}

const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/**
 * What a person does on the emulator's consent page: open it, pick the account, approve. Returns
 * where the platform sends the browser back (our callback with code and state).
 */
async function approveOnPlatform(authorizeUrl: URL, openId: string): Promise<URL> {
  const page = await fetch(authorizeUrl);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain(`value="${openId}"`);
  const form = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    form.set(name!, unescapeHtml(value!));
  form.set('open_id', openId);
  form.set('decision', 'approve');
  const approved = await fetch(new URL('/v2/auth/authorize', authorizeUrl), { method: 'POST', body: form, redirect: 'manual' });
  expect(approved.status).toBe(302);
  return new URL(approved.headers.get('location')!);
}

/** The browser arriving at our callback, without the cookie (a cross-site navigation): where it is sent next. */
async function followCallback(stack: Stack, back: URL): Promise<URLSearchParams> {
  const res = await fetch(`${stack.baseUrl}${CALLBACK}${back.search}`, { redirect: 'manual' });
  expect(res.status).toBe(303);
  const next = new URL(res.headers.get('location')!, stack.baseUrl);
  expect(next.pathname).toBe('/console/seats');
  return new URLSearchParams(next.hash.slice(1));
}

async function connectThroughPlatform(env: Pick<WorkingStack, 'stack'>, browser: Browser, seatId: string, openId: string) {
  const fragment = await followCallback(env.stack, await approveOnPlatform(await startConnect(env.stack, browser, seatId), openId));
  return post<SeatJson>(env.stack, browser, '/console/api/seats/oauth/complete', {
    code: fragment.get('connect_code'),
    state: fragment.get('connect_state'),
  });
}

describe('connecting seats from the console', () => {
  let env: WorkingStack;
  beforeAll(async () => {
    // Tokens live 4 s and are refreshed 3 s before expiry, so a removed authorization shows within a second or two.
    env = await startWorkingStack('console-seats', {
      sandbox: { accessTokenTtlSeconds: { business: 4, shop: 4 } },
      stack: { tokenRefresh: { marginSeconds: 3, minIntervalMs: 200 } },
    });
  }, 120_000);
  afterAll(() => env?.close());

  const credentialsOf = async (seatId: string) => {
    const row = (await seatsRepo.findSeat(env.stack.database.db, seatId))!;
    return { row, credentials: row.credentialsSealed ? openCredentials(env.stack.sealedBox, seatId, row.credentialsSealed) : undefined };
  };

  it('connects an unbound seat through the emulator’s consent page and shows it bound', async () => {
    const browser = await signedIn(env.stack);
    const seatId = await newSeat(env.stack, browser.tenant);
    const account = await env.sb.account('business');

    const authorize = await startConnect(env.stack, browser, seatId);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${env.sb.url}/v2/auth/authorize`);
    expect(authorize.searchParams.get('client_key')).toBe(env.sb.upstream.vplat.settings.appId);
    expect(authorize.searchParams.get('response_type')).toBe('code');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${env.stack.baseUrl}${CALLBACK}`);
    expect(authorize.searchParams.get('state')).toMatch(/^[\w-]+\.\d+\.[\w-]+$/);

    const back = await approveOnPlatform(authorize, account.openId);
    expect(`${back.origin}${back.pathname}`).toBe(`${env.stack.baseUrl}${CALLBACK}`);
    expect(back.searchParams.get('state')).toBe(authorize.searchParams.get('state'));
    const fragment = await followCallback(env.stack, back);
    const done = await post<SeatJson>(env.stack, browser, '/console/api/seats/oauth/complete', {
      code: fragment.get('connect_code'),
      state: fragment.get('connect_state'),
    });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ id: seatId, bound: true, capabilityAccountId: account.openId, authorizationStatus: 'active' });

    const listed = await call<{ items: SeatJson[] }>(env.stack.baseUrl, 'GET', '/v1/seats', { key: browser.tenant.apiKey });
    expect(listed.body.data.items).toEqual([
      expect.objectContaining({ id: seatId, bound: true, capabilityAccountId: account.openId, authorizationStatus: 'active' }),
    ]);
    const { credentials } = await credentialsOf(seatId);
    expect(credentials?.refreshToken).toBeTruthy();
  });

  it('refuses a tampered state and another customer’s session without using up the code', async () => {
    const browser = await signedIn(env.stack);
    const other = await signedIn(env.stack);
    const seatId = await newSeat(env.stack, browser.tenant);
    const account = await env.sb.account('business');
    const fragment = await followCallback(
      env.stack,
      await approveOnPlatform(await startConnect(env.stack, browser, seatId), account.openId),
    );
    const code = fragment.get('connect_code')!;
    const state = fragment.get('connect_state')!;

    const [subject, expires, signature] = state.split('.');
    const tampered = await post(env.stack, browser, '/console/api/seats/oauth/complete', {
      code,
      state: `${subject}.${Number(expires) + 3600}.${signature}`,
    });
    expect(tampered.status).toBe(422);
    expect(tampered.body).toMatchObject({ code: 2001, message: expect.stringContaining('state') });

    const stranger = await post(env.stack, other, '/console/api/seats/oauth/complete', { code, state });
    expect(stranger.status).toBe(404);
    expect(stranger.body.code).toBe(1005);
    // Without the CSRF token, the session's write is refused before anything else.
    const forged = await call(env.stack.baseUrl, 'POST', '/console/api/seats/oauth/complete', {
      headers: { cookie: browser.cookie },
      json: { code, state },
    });
    expect(forged.body.code).toBe(1001);

    const done = await post<SeatJson>(env.stack, browser, '/console/api/seats/oauth/complete', { code, state });
    expect(done.body.data).toMatchObject({ id: seatId, capabilityAccountId: account.openId });
    expect((await credentialsOf(seatId)).row.customerId).toBe(browser.tenant.customerId);
  });

  it('refuses API keys and other customers’ seats when starting', async () => {
    const browser = await signedIn(env.stack);
    const other = await signedIn(env.stack);
    const seatId = await newSeat(env.stack, browser.tenant);
    const byKey = await call(env.stack.baseUrl, 'POST', `/console/api/seats/${seatId}/connect`, { key: browser.tenant.apiKey, json: {} });
    expect(byKey.body.code).toBe(1001);
    const foreign = await post(env.stack, other, `/console/api/seats/${seatId}/connect`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe(1005);
  });

  it('sends a declined consent back to the console page with the error', async () => {
    const fragment = await followCallback(env.stack, new URL(`${env.stack.baseUrl}${CALLBACK}?error=access_denied&state=s`));
    expect(fragment.get('connect_error')).toBe('access_denied');
    expect(fragment.has('connect_code')).toBe(false);
  });

  it('keeps the binding rules: 1006 for an account bound elsewhere, 1008 for another account on a bound seat', async () => {
    const browser = await signedIn(env.stack);
    const { account: held, seatId: heldSeat } = await bindSandboxSeat(env, browser.tenant, 'business');
    const free = await newSeat(env.stack, browser.tenant);
    const elsewhere = await connectThroughPlatform(env, browser, free, held.openId);
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.code).toBe(1006);
    const stranger = await env.sb.account('business');
    const taken = await connectThroughPlatform(env, browser, heldSeat, stranger.openId);
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe(1008);
  });

  it('reconnects a seat whose authorization was removed, with new credentials', async () => {
    const browser = await signedIn(env.stack);
    const { account, seatId } = await bindSandboxSeat(env, browser.tenant, 'business');
    await env.sb.control('POST', `/_sandbox/accounts/${account.openId}/deauthorize`);
    const removed = await eventually(
      () => credentialsOf(seatId),
      (s) => s.row.authorizationStatus === 'reauthorization_required',
      15_000,
      100,
    );
    const before = removed.credentials!.accessToken;

    const done = await connectThroughPlatform(env, browser, seatId, account.openId);
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({
      id: seatId,
      capabilityAccountId: account.openId,
      accountUsername: account.username,
      authorizationStatus: 'active',
    });
    const after = await credentialsOf(seatId);
    expect(after.credentials!.accessToken).not.toBe(before);
  });

  it('unbinds a seat of the customer and frees it', async () => {
    const browser = await signedIn(env.stack);
    const other = await signedIn(env.stack);
    const { seatId } = await bindSandboxSeat(env, browser.tenant, 'shop');
    const foreign = await post(env.stack, other, `/console/api/seats/${seatId}/unbind`);
    expect(foreign.body.code).toBe(1005);
    const res = await post<SeatJson>(env.stack, browser, `/console/api/seats/${seatId}/unbind`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: seatId, bound: false, capabilityAccountId: null, authorizationStatus: 'unbound' });
    expect((await credentialsOf(seatId)).row.credentialsSealed).toBeNull();
  });

  it('connects a shop seat through the shop’s consent page', async () => {
    const browser = await signedIn(env.stack);
    const seatId = await newSeat(env.stack, browser.tenant, Track.SHOP);
    const account = await env.sb.account('shop');
    const authorize = await startConnect(env.stack, browser, seatId);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${env.sb.url}/alliance/creator/auth`);
    const page = await (await fetch(authorize)).text();
    const form = new URLSearchParams();
    for (const [, name, value] of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      form.set(name!, unescapeHtml(value!));
    form.set('open_id', account.openId);
    const approved = await fetch(new URL('/alliance/creator/auth', authorize), { method: 'POST', body: form, redirect: 'manual' });
    const fragment = await followCallback(env.stack, new URL(approved.headers.get('location')!));
    const done = await post<SeatJson>(env.stack, browser, '/console/api/seats/oauth/complete', {
      code: fragment.get('connect_code'),
      state: fragment.get('connect_state'),
    });
    expect(done.body.data).toMatchObject({ id: seatId, track: 'shop', capabilityAccountId: account.openId, authorizationStatus: 'active' });
  });
});

describe('an expired connect state', () => {
  it('is refused, by configuration rather than by waiting', async () => {
    // No worker: a refused state never reaches the binding.
    const sb = await startTestSandbox();
    const stack = await startStack({ upstream: sb.upstream, ratePerMinute: 1_000_000, seatConnectTtlMs: 0 });
    try {
      const browser = await signedIn(stack);
      const seatId = await newSeat(stack, browser.tenant);
      const account = await sb.account('business');
      const res = await connectThroughPlatform({ stack }, browser, seatId, account.openId);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 2001, message: expect.stringContaining('expired') });
    } finally {
      await stack.close();
      await sb.close();
    }
  }, 120_000);
});
