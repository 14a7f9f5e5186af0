import { call } from '../helpers/http';
import { createTenant, startStack, type Stack, type TransportKind } from '../helpers/stack';

const PUBLIC_HOOK = { url: 'https://93.184.215.14/hooks/vps', eventTypes: ['*'] };

describe.each<TransportKind>(['in-memory', 'http'])('authentication through the %s core transport', (transport) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ transport });
  });
  afterAll(() => stack.close());

  it('accepts a created key, and refuses it with 1001 on the very next request after revocation', async () => {
    const tenant = await createTenant(stack);
    const ok = await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ code: 0, message: 'ok', data: { items: [] } });

    await stack.admin.revokeApiKey({ id: tenant.apiKeyId });
    const revoked = await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey });
    expect(revoked.status).toBe(401);
    expect(revoked.body.code).toBe(1001);
    expect(revoked.body.data).toEqual({});
  });

  it.each([
    ['a doubled Bearer prefix', (key: string) => `Bearer Bearer ${key}`],
    ['no scheme', (key: string) => key],
    ['the Basic scheme', (key: string) => `Basic ${key}`],
    ['a key with one character changed', (key: string) => `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`],
    ['an empty header', () => ''],
  ])('answers 1001 for %s', async (_name, header) => {
    const tenant = await createTenant(stack);
    const res = await call(stack.baseUrl, 'GET', '/v1/seats', { authorization: header(tenant.apiKey) });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(1001);
  });

  it('answers 1001 without any Authorization header', async () => {
    const res = await call(stack.baseUrl, 'GET', '/v1/seats');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 1001, data: {} });
  });

  it('refuses every key of a disabled user with 1002, and accepts them again once re-enabled', async () => {
    const tenant = await createTenant(stack);
    await stack.admin.setUserDisabled({ userId: tenant.userId, disabled: true });
    const disabled = await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey });
    expect(disabled.status).toBe(403);
    expect(disabled.body.code).toBe(1002);

    await stack.admin.setUserDisabled({ userId: tenant.userId, disabled: false });
    const enabled = await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey });
    expect(enabled.body.code).toBe(0);
  });

  it('refuses writes with 1003 once the plan has expired, while reads keep answering 0', async () => {
    const tenant = await createTenant(stack, { planExpiresAt: new Date(Date.now() - 60_000) });
    const write = await call(stack.baseUrl, 'POST', '/v1/webhook-endpoints', { key: tenant.apiKey, json: PUBLIC_HOOK });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe(1003);
    expect(write.body.message).toMatch(/plan expired/);

    const read = await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey });
    expect(read.status).toBe(200);
    expect(read.body.code).toBe(0);
    const list = await call(stack.baseUrl, 'GET', '/v1/webhook-endpoints', { key: tenant.apiKey });
    expect(list.body.code).toBe(0);
  });

  it('lets writes through again after the plan is renewed, with no restart', async () => {
    const tenant = await createTenant(stack, { planExpiresAt: new Date(Date.now() - 60_000) });
    expect((await call(stack.baseUrl, 'POST', '/v1/webhook-endpoints', { key: tenant.apiKey, json: PUBLIC_HOOK })).body.code).toBe(1003);
    await stack.admin.updateCustomer({ id: tenant.customerId, clearPlanExpiry: true });
    const renewed = await call(stack.baseUrl, 'POST', '/v1/webhook-endpoints', { key: tenant.apiKey, json: PUBLIC_HOOK });
    expect(renewed.body.code).toBe(0);
  });

  it('reports the remaining rate-limit budget on successful responses', async () => {
    const tenant = await createTenant(stack);
    const res = await call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey });
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('59');
  });
});
