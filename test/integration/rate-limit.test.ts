import { randomBytes } from 'node:crypto';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { call, type Envelope } from '../helpers/http';
import { cleanEnv, spawnVps, UNREACHABLE_PLATFORM_ENV, type ChildHandle } from '../helpers/processes';
import { createTenant, requiredEnv, startStack, type Stack } from '../helpers/stack';

/**
 * Sends requests, one at a time and rotating over the given gateways, until the first refusal.
 * A token bucket of 60 with a refill of 1 per second lets through exactly 60 plus what refilled
 * while the burst ran, so the bound below holds however fast or slow this machine is.
 */
async function burstUntilRefused(baseUrls: string[], key: string) {
  const started = Date.now();
  let accepted = 0;
  for (let i = 0; i < 200; i++) {
    const res = await call(baseUrls[i % baseUrls.length]!, 'GET', '/v1/seats', { key });
    if (res.body.code !== 0) return { accepted, refused: res, seconds: (Date.now() - started) / 1000 };
    accepted++;
  }
  throw new Error('never refused after 200 requests');
}

function expectRateLimited(refused: Envelope) {
  expect(refused.status).toBe(429);
  expect(refused.body.code).toBe(2002);
  const retryAfter = refused.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
}

describe('rate limit', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('refuses the 61st request of a burst with 429, code 2002 and Retry-After', async () => {
    const tenant = await createTenant(stack);
    const { accepted, refused, seconds } = await burstUntilRefused([stack.baseUrl], tenant.apiKey);
    expect(accepted).toBeGreaterThanOrEqual(60);
    expect(accepted).toBeLessThanOrEqual(60 + Math.ceil(seconds));
    expectRateLimited(refused);
  });

  it('keeps one bucket per key: another key of the same customer is unaffected', async () => {
    const tenant = await createTenant(stack);
    await burstUntilRefused([stack.baseUrl], tenant.apiKey);
    const other = await stack.admin.createApiKey({ userId: tenant.userId, name: 'second' });
    expect((await call(stack.baseUrl, 'GET', '/v1/seats', { key: other.plaintext })).body.code).toBe(0);
  });

  it('lets through at most one bucket plus its refill of a concurrent burst, each accepted request drawing its own token', async () => {
    const tenant = await createTenant(stack);
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 120 }, () => call(stack.baseUrl, 'GET', '/v1/seats', { key: tenant.apiKey })));
    const seconds = (Date.now() - started) / 1000;
    const accepted = answers.filter((res) => res.body.code === 0);
    expect(accepted.length).toBeGreaterThanOrEqual(60);
    expect(accepted.length).toBeLessThanOrEqual(60 + Math.ceil(seconds));
    for (const refused of answers.filter((res) => res.body.code !== 0)) expectRateLimited(refused);
    const remaining = accepted.map((res) => res.headers.get('x-ratelimit-remaining'));
    for (const value of remaining) expect(value).toMatch(/^\d+$/);
    // Each accepted request sees one token fewer than the one before it, so the counts differ, except
    // where a whole token refilled in between: at most one repeat per second the burst took.
    expect(new Set(remaining).size).toBeGreaterThanOrEqual(accepted.length - Math.ceil(seconds));
  });

  it('answers each credential of one concurrent batch on its own', async () => {
    const [valid, revoked, disabled] = await Promise.all([createTenant(stack), createTenant(stack), createTenant(stack)]);
    await stack.admin.revokeApiKey({ id: revoked.apiKeyId });
    await stack.admin.setUserDisabled({ userId: disabled.userId, disabled: true });
    // Well formed, so it reaches the database like the others rather than being refused on its shape.
    const unknown = `${valid.apiKey.slice(0, -1)}${valid.apiKey.endsWith('A') ? 'B' : 'A'}`;
    const expected = [
      { key: valid.apiKey, code: 0 },
      { key: revoked.apiKey, code: 1001 },
      { key: disabled.apiKey, code: 1002 },
      { key: unknown, code: 1001 },
    ];
    const requests = Array.from({ length: 5 }, () => expected).flat();
    const answers = await Promise.all(requests.map(({ key }) => call(stack.baseUrl, 'GET', '/v1/seats', { key })));
    expect(answers.map((res) => res.body.code)).toEqual(requests.map(({ code }) => code));
  });

  describe('across separate processes sharing one Postgres', () => {
    const children: ChildHandle[] = [];
    // The two gateways the first test starts; the tests after it reuse them.
    let urls: string[] = [];
    afterAll(async () => {
      await Promise.all(children.map((c) => c.stop()));
    });

    it('holds the limit across a gateway calling a core over HTTP and a gateway with its own core', async () => {
      const shared = {
        DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
        TEMPORAL_ADDRESS: requiredEnv('TEMPORAL_ADDRESS'),
        VPS_ADMIN_TOKEN: `proc-admin-${randomBytes(16).toString('hex')}`,
        VPS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        TEMPORAL_TASK_QUEUE: 'vps-rate-limit-test',
        ...UNREACHABLE_PLATFORM_ENV,
      };
      const [corePort, gatewayAPort, gatewayBPort, coreBPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
      const core = spawnVps(['serve', '--role', 'core'], cleanEnv({ ...shared, CORE_PORT: String(corePort) }));
      children.push(core);
      const gatewayB = spawnVps(
        ['serve', '--role', 'gateway,core'],
        cleanEnv({ ...shared, PORT: String(gatewayBPort), CORE_PORT: String(coreBPort) }),
      );
      children.push(gatewayB);
      await core.waitFor(/vps is running/);
      const gatewayA = spawnVps(
        ['serve', '--role', 'gateway'],
        cleanEnv({ ...shared, PORT: String(gatewayAPort), CORE_URL: `http://127.0.0.1:${corePort}` }),
      );
      children.push(gatewayA);
      await Promise.all([gatewayA.waitFor(/vps is running/), gatewayB.waitFor(/vps is running/)]);

      const tenant = await createTenant(stack);
      urls = [`http://127.0.0.1:${gatewayAPort}`, `http://127.0.0.1:${gatewayBPort}`];
      const { accepted, refused, seconds } = await burstUntilRefused(urls, tenant.apiKey);
      expect(accepted).toBeGreaterThanOrEqual(60);
      expect(accepted).toBeLessThanOrEqual(60 + Math.ceil(seconds));
      expectRateLimited(refused);
      // The other gateway sees the same empty bucket: it refuses, or, if a whole token refilled in
      // between on a slow machine, lets one through with nothing left (its own bucket would hold ~30).
      const other = await call(urls[accepted % 2 === 0 ? 1 : 0]!, 'GET', '/v1/seats', { key: tenant.apiKey });
      if (other.body.code === 0) expect(other.headers.get('x-ratelimit-remaining')).toBe('0');
      else expectRateLimited(other);
    }, 120_000);

    it('holds the limit for a concurrent burst spread over both gateways', async () => {
      expect(urls).toHaveLength(2);
      // A tenant of its own: the test above drained its bucket.
      const tenant = await createTenant(stack);
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 150 }, (_, i) => call(urls[i % 2]!, 'GET', '/v1/seats', { key: tenant.apiKey })),
      );
      const seconds = (Date.now() - started) / 1000;
      const accepted = answers.filter((res) => res.body.code === 0).length;
      expect(accepted).toBeGreaterThanOrEqual(60);
      expect(accepted).toBeLessThanOrEqual(60 + Math.ceil(seconds));
      for (const refused of answers.filter((res) => res.body.code !== 0)) expectRateLimited(refused);
    }, 60_000);
  });
});
