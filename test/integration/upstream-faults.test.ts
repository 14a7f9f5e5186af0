/**
 * The upstream client against every fault the emulator can inject: each failure becomes 3001 or
 * 3002 with the official message kept and a retry classification the workflows act on.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { asActivityFailure } from '../../activities/upstream-failure';
import { createUpstream } from '../../core/upstream';
import { UpstreamError } from '../../core/upstream/failures';
import { getVideoSettings } from '../../core/upstream/vplat/publishing';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';

describe('upstream client: faults, codes and retry classification', () => {
  let sb: TestSandbox;
  let account: Awaited<ReturnType<TestSandbox['account']>>;

  beforeAll(async () => {
    sb = await startTestSandbox({ timeouts: { connectMs: 500, totalMs: 800 } });
    account = await sb.account('business');
  });
  afterEach(() => sb.control('DELETE', '/_sandbox/faults'));
  afterAll(() => sb?.close());

  const settings = () => getVideoSettings(sb.upstream.vplat, account.tokens.access_token, { business_id: account.openId });
  const failureOf = async (call: () => Promise<unknown>): Promise<UpstreamError> => {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamError);
    return err as UpstreamError;
  };

  it.each([
    ['server_error', 3001, 'transient', true, 50000],
    ['rate_limit', 3001, 'rate_limited', true, 40100],
    ['invalid_token', 3001, 'auth', false, 40105],
    ['expired_token', 3001, 'token_expired', true, 40102],
    ['permission_denied', 3001, 'permission', false, 40001],
  ] as const)(
    'maps an injected %s to %i (%s, retryable %s) with the official code and message',
    async (kind, code, failureClass, retryable, officialCode) => {
      await sb.control('POST', '/_sandbox/faults', { kind, platform: 'business' });
      const err = await failureOf(settings);
      expect(err.code).toBe(code);
      expect(err.failure).toMatchObject({ platform: 'vplat', failureClass, retryable, officialCode, endpoint: 'business/video/settings/' });
      expect(err.message.length).toBeGreaterThan(0);
      expect(err.options.data).toMatchObject({ officialCode, retryable });
      // The fault was used up: the next call succeeds.
      await expect(settings()).resolves.toHaveProperty('privacy_level_options');
    },
  );

  it('turns a call that hangs past the total timeout into 3002, retryable', async () => {
    await sb.control('POST', '/_sandbox/faults', { kind: 'hang', hangMs: 2_000, platform: 'business' });
    const started = Date.now();
    const err = await failureOf(settings);
    expect(Date.now() - started).toBeLessThan(1_900);
    expect(err.code).toBe(3002);
    expect(err.failure).toMatchObject({ failureClass: 'timeout', retryable: true });
  });

  it('applies a fault only to the path prefix it names', async () => {
    await sb.control('POST', '/_sandbox/faults', { kind: 'server_error', pathPrefix: '/open_api/v1.3/business/publish/status/', count: 5 });
    await expect(settings()).resolves.toHaveProperty('max_video_post_duration_sec');
  });

  it('reports an unreachable platform as a retryable 3001', async () => {
    const port = await freePort();
    const upstream = createUpstream({
      vplat: { baseUrl: `http://127.0.0.1:${port}`, appId: 'a', appSecret: 's' },
      shop: { baseUrl: `http://127.0.0.1:${port}`, authBaseUrl: `http://127.0.0.1:${port}`, appKey: 'k', appSecret: 's' },
      timeouts: { connectMs: 500, totalMs: 800 },
    });
    try {
      const err = await failureOf(() => getVideoSettings(upstream.vplat, 'token', { business_id: 'b' }));
      expect(err.code).toBe(3001);
      expect(err.failure).toMatchObject({ failureClass: 'transient', retryable: true });
    } finally {
      await upstream.close();
    }
  });

  it('gives the shop platform its own codes: rate limits come with HTTP 429 and Retry-After', async () => {
    const shopAccount = await sb.account('shop');
    await sb.control('POST', '/_sandbox/faults', { kind: 'rate_limit', platform: 'shop' });
    const err = await failureOf(() => sb.upstream.shop.get('/affiliate_creator/202508/profiles', shopAccount.tokens.access_token));
    expect(err.failure).toMatchObject({
      platform: 'shop',
      failureClass: 'rate_limited',
      retryable: true,
      officialCode: 36009002,
      httpStatus: 429,
      retryAfterSeconds: 1,
    });
    expect(err.options.retryAfterSeconds).toBe(1);
  });

  it('turns upstream failures into Temporal failures: non-retryable for bad requests, with the platform delay for rate limits', async () => {
    await sb.control('POST', '/_sandbox/faults', { kind: 'invalid_token', platform: 'business' });
    const auth = asActivityFailure(await failureOf(settings)) as ApplicationFailure;
    expect(auth).toBeInstanceOf(ApplicationFailure);
    expect(auth).toMatchObject({ type: 'upstream.auth', nonRetryable: true });

    await sb.control('POST', '/_sandbox/faults', { kind: 'server_error', platform: 'business' });
    const transient = asActivityFailure(await failureOf(settings)) as ApplicationFailure;
    expect(transient).toMatchObject({ type: 'upstream.transient', nonRetryable: false });

    const plain = new Error('not an upstream failure');
    expect(asActivityFailure(plain)).toBe(plain);
  });
});
