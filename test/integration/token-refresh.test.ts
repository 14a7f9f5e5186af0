/**
 * The token refresh workflow of a bound seat, through the Temporal dev server, a real worker and
 * the emulator's OAuth: the access token is renewed before it expires, the rotated refresh token
 * is kept, and a revoked authorization flags the seat for re-authorization.
 */
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import * as seatsRepo from '../../core/db/repositories/seats';
import { connectTemporalClient } from '../../core/temporal/connection';
import type { RunningWorker } from '../../worker/worker';
import { openCredentials } from '../../core/upstream/credentials';
import { UpstreamError } from '../../core/upstream/failures';
import { refreshAccessToken } from '../../core/upstream/vplat/oauth';
import { getVideoSettings } from '../../core/upstream/vplat/publishing';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { createTenant, startStack, startStackWorker, type Stack } from '../helpers/stack';

describe('token refresh workflow', () => {
  const taskQueue = `vps-token-refresh-${process.pid}-${Date.now()}`;
  let stack: Stack;
  let sb: TestSandbox;
  let worker: RunningWorker;

  beforeAll(async () => {
    // Tokens live 4 s and are refreshed 3 s before expiry: a refresh about every second.
    sb = await startTestSandbox({ settings: { accessTokenTtlSeconds: { business: 4, shop: 4 } } });
    stack = await startStack({
      taskQueue,
      ratePerMinute: 1_000_000,
      tokenRefresh: { marginSeconds: 3, minIntervalMs: 200, retryAfterRefusalMs: 300 },
    });
    worker = await startStackWorker(stack, taskQueue, sb.upstream);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await sb?.close();
  });

  // Each test's seats are unbound after it, so that a test's refreshes are the only ones the
  // emulator sees (a fault applies to the next matching call, whoever makes it).
  const boundSeats: string[] = [];
  afterEach(async () => {
    for (const seatId of boundSeats.splice(0)) await stack.admin.unbindSeat({ seatId }).catch(() => undefined);
    await sb.control('DELETE', '/_sandbox/faults');
  });

  async function bind(platform: 'business' | 'shop') {
    const account = await sb.account(platform);
    const tenant = await createTenant(stack);
    const { seat } = await stack.admin.createSeat({
      customerId: tenant.customerId,
      track: platform === 'shop' ? Track.SHOP : Track.VIDEO,
      name: 'refresh',
    });
    await stack.admin.bindSeat({
      seatId: seat!.id,
      accountId: account.openId,
      credentials: {
        accessToken: account.tokens.access_token,
        refreshToken: account.tokens.refresh_token,
        accessTokenExpiresAt: { seconds: BigInt(account.tokens.access_token_expires_at), nanos: 0 },
      },
    });
    boundSeats.push(seat!.id);
    return { account, seatId: seat!.id, tenant };
  }

  const credentialsOf = async (seatId: string) => {
    const row = (await seatsRepo.findSeat(stack.database.db, seatId))!;
    return { row, credentials: row.credentialsSealed ? openCredentials(stack.sealedBox, seatId, row.credentialsSealed) : undefined };
  };
  /** The seat once it holds an access token other than `accessToken`. */
  const renewedFrom = (seatId: string, accessToken: string) =>
    eventually(
      () => credentialsOf(seatId),
      (s) => s.credentials?.accessToken !== accessToken,
      15_000,
      100,
    );

  it('renews a video seat’s token before it expires and keeps the rotated refresh token', async () => {
    const { account, seatId } = await bind('business');
    const renewed = await renewedFrom(seatId, account.tokens.access_token);
    expect(renewed.row.authorizationStatus).toBe('active');
    expect(renewed.credentials!.refreshToken).not.toBe(account.tokens.refresh_token);
    expect(renewed.row.accessTokenExpiresAt!.getTime()).toBeGreaterThan(Date.now());
    // The new token works upstream, and the old refresh token was used up by the rotation.
    await expect(
      getVideoSettings(sb.upstream.vplat, renewed.credentials!.accessToken, { business_id: account.openId }),
    ).resolves.toHaveProperty('privacy_level_options');
    const reused = await refreshAccessToken(sb.upstream.vplat, account.tokens.refresh_token).catch((e: unknown) => e);
    expect((reused as UpstreamError).failure.failureClass).toBe('auth');
    // It keeps going: a second renewal follows the first.
    await renewedFrom(seatId, renewed.credentials!.accessToken);
  });

  it('renews a shop seat’s token with the shop refresh flow', async () => {
    const { account, seatId } = await bind('shop');
    const renewed = await renewedFrom(seatId, account.tokens.access_token);
    expect(renewed.row.refreshTokenExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 86_400_000);
  });

  it('flags the seat for re-authorization when the account removed the app, and logs it once', async () => {
    const { account, seatId, tenant } = await bind('business');
    await sb.control('POST', `/_sandbox/accounts/${account.openId}/deauthorize`);
    const flagged = await eventually(
      () => credentialsOf(seatId),
      (s) => s.row.authorizationStatus !== 'active',
      15_000,
      100,
    );
    expect(flagged.row.authorizationStatus).toBe('reauthorization_required');
    // The seat is flagged first and the event logged right after: wait for the log too.
    const logged = await eventually(
      () =>
        call<{ items: Array<{ type: string; seat_id: string; data: Record<string, unknown> }> }>(stack.baseUrl, 'GET', '/v1/events', {
          key: tenant.apiKey,
        }),
      (r) => r.body.data.items.length > 0,
    );
    expect(logged.body.data.items).toEqual([
      expect.objectContaining({
        type: 'vplat.account.authorization_removed',
        seat_id: seatId,
        data: expect.objectContaining({ account_id: account.openId, official_code: 40107 }),
      }),
    ]);
  });

  it('tries a refresh the platform refused for another reason than the token again after a pause, leaving the seat active', async () => {
    const { account, seatId, tenant } = await bind('business');
    // The app lost a scope for a moment: the next refresh is refused with 40001.
    await sb.control('POST', '/_sandbox/faults', {
      kind: 'permission_denied',
      platform: 'business',
      pathPrefix: '/open_api/v1.3/tt_user/oauth2/refresh_token/',
    });
    await eventually(
      () => sb.control<{ faults: unknown[] }>('GET', '/_sandbox/faults'),
      (r) => r.faults.length === 0,
      15_000,
      100,
    );
    // Refused, then tried again after the pause, and renewed: the seat never needed a person.
    const renewed = await renewedFrom(seatId, account.tokens.access_token);
    expect(renewed.row.authorizationStatus).toBe('active');
    const client = await connectTemporalClient({
      address: process.env.TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TLS: false,
    });
    try {
      const handle = client.client.workflow.getHandle(`token-refresh-${seatId}`);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      // The refresh steps the workflow was given, in order: the refusal became retry_later, then a renewal.
      const steps = (await handle.fetchHistory())
        .events!.flatMap((e) => e.activityTaskCompletedEventAttributes?.result?.payloads ?? [])
        .map((p) => (JSON.parse(Buffer.from(p.data!).toString()) as { outcome: string }).outcome);
      expect(steps).toContain('retry_later');
      expect(steps.slice(steps.indexOf('retry_later'))).toContain('refreshed');
    } finally {
      await client.close();
    }
    // Nothing was logged for the customer: the authorization stands.
    const logged = await call<{ items: unknown[] }>(stack.baseUrl, 'GET', '/v1/events', { key: tenant.apiKey });
    expect(logged.body.data.items).toEqual([]);
  });

  it('stops refreshing once the seat is unbound', async () => {
    const { seatId } = await bind('business');
    await stack.admin.unbindSeat({ seatId });
    const client = await connectTemporalClient({
      address: process.env.TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TLS: false,
    });
    try {
      const result = await client.client.workflow.getHandle(`token-refresh-${seatId}`).result();
      expect(result).toEqual({ outcome: 'unbound' });
    } finally {
      await client.close();
    }
  });
});
