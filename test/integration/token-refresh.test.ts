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
    stack = await startStack({ taskQueue, ratePerMinute: 1_000_000, tokenRefresh: { marginSeconds: 3, minIntervalMs: 200 } });
    worker = await startStackWorker(stack, taskQueue, sb.upstream);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await sb?.close();
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
    return { account, seatId: seat!.id, tenant };
  }

  const credentialsOf = async (seatId: string) => {
    const row = (await seatsRepo.findSeat(stack.database.db, seatId))!;
    return { row, credentials: row.credentialsSealed ? openCredentials(stack.sealedBox, seatId, row.credentialsSealed) : undefined };
  };

  it('renews a video seat’s token before it expires and keeps the rotated refresh token', async () => {
    const { account, seatId } = await bind('business');
    const renewed = await eventually(
      () => credentialsOf(seatId),
      (s) => s.credentials?.accessToken !== account.tokens.access_token,
      15_000,
      100,
    );
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
    const first = renewed.credentials!.accessToken;
    await eventually(
      () => credentialsOf(seatId),
      (s) => s.credentials?.accessToken !== first,
      15_000,
      100,
    );
  });

  it('renews a shop seat’s token with the shop refresh flow', async () => {
    const { account, seatId } = await bind('shop');
    const renewed = await eventually(
      () => credentialsOf(seatId),
      (s) => s.credentials?.accessToken !== account.tokens.access_token,
      15_000,
      100,
    );
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
