import { randomBytes } from 'node:crypto';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { call, type Envelope } from '../helpers/http';
import { cleanEnv, spawnVps, type ChildHandle } from '../helpers/processes';
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

  describe('across separate processes sharing one Postgres', () => {
    const children: ChildHandle[] = [];
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
      };
      const [corePort, gatewayAPort, gatewayBPort, coreBPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
      const core = spawnVps(['serve', '--role', 'core'], cleanEnv({ ...shared, CORE_PORT: String(corePort) }));
      children.push(core);
      const gatewayB = spawnVps(['serve', '--role', 'gateway,core'], cleanEnv({ ...shared, PORT: String(gatewayBPort), CORE_PORT: String(coreBPort) }));
      children.push(gatewayB);
      await core.waitFor(/vps is running/);
      const gatewayA = spawnVps(['serve', '--role', 'gateway'], cleanEnv({ ...shared, PORT: String(gatewayAPort), CORE_URL: `http://127.0.0.1:${corePort}` }));
      children.push(gatewayA);
      await Promise.all([gatewayA.waitFor(/vps is running/), gatewayB.waitFor(/vps is running/)]);

      const tenant = await createTenant(stack);
      const urls = [`http://127.0.0.1:${gatewayAPort}`, `http://127.0.0.1:${gatewayBPort}`];
      const { accepted, refused, seconds } = await burstUntilRefused(urls, tenant.apiKey);
      expect(accepted).toBeGreaterThanOrEqual(60);
      expect(accepted).toBeLessThanOrEqual(60 + Math.ceil(seconds));
      expectRateLimited(refused);
      // The other gateway sees the same empty bucket.
      expectRateLimited(await call(urls[accepted % 2 === 0 ? 1 : 0]!, 'GET', '/v1/seats', { key: tenant.apiKey }));
    }, 120_000);
  });
});
