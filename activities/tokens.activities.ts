/**
 * Refreshing a seat's upstream access token with the platform's refresh flow. The refresh token
 * may rotate, so the newest pair is stored every time, and only while the seat still holds the
 * account (a refresh racing an unbind must not resurrect it).
 */
import type { Db } from '../core/db/client';
import * as seatsRepo from '../core/db/repositories/seats';
import type { SealedBox } from '../core/crypto/sealed-box';
import type { EventRecorder } from '../core/events/recorder';
import type { Logger } from '../core/logger';
import { openCredentials, sealCredentials } from '../core/upstream/credentials';
import { catalogued } from '../core/events/event-types';
import { UpstreamError } from '../core/upstream/failures';
import type { Upstream } from '../core/upstream';
import { refreshAccessToken as refreshShopToken } from '../core/upstream/shop/oauth';
import { refreshAccessToken as refreshVplatToken } from '../core/upstream/vplat/oauth';
import type { TokenRefreshStep } from '../workflows/shared';

export interface TokenActivityDeps {
  db: Db;
  sealedBox: SealedBox;
  upstream: Upstream;
  events: EventRecorder;
  logger: Logger;
  tokenRefreshRetryMs: number;
}

interface Refreshed {
  accessToken: string;
  refreshToken: string;
  accessTokenExpiresAt: Date;
  refreshTokenExpiresAt: Date;
  scopes?: string[];
}

export function createTokenActivities(deps: TokenActivityDeps) {
  const refreshUpstream = async (track: 'video' | 'shop', refreshToken: string): Promise<Refreshed> => {
    if (track === 'video') {
      const r = await refreshVplatToken(deps.upstream.vplat, refreshToken);
      const now = Date.now();
      return {
        accessToken: r.access_token,
        refreshToken: r.refresh_token,
        accessTokenExpiresAt: new Date(now + r.expires_in * 1000),
        refreshTokenExpiresAt: new Date(now + r.refresh_token_expires_in * 1000),
        scopes: r.scope.split(',').filter(Boolean),
      };
    }
    // The shop's *_expire_in fields are absolute Unix times, not durations.
    const r = await refreshShopToken(deps.upstream.shop, refreshToken);
    return {
      accessToken: r.access_token,
      refreshToken: r.refresh_token,
      accessTokenExpiresAt: new Date(r.access_token_expire_in * 1000),
      refreshTokenExpiresAt: new Date(r.refresh_token_expire_in * 1000),
      scopes: r.granted_scopes,
    };
  };

  return {
    async refreshSeatToken(input: { seatId: string; marginSeconds: number }): Promise<TokenRefreshStep> {
      const seat = await seatsRepo.findSeat(deps.db, input.seatId);
      if (!seat?.accountId || !seat.credentialsSealed) return { outcome: 'unbound' };
      if (seat.authorizationStatus === 'reauthorization_required') return { outcome: 'reauthorization_required' };
      const marginMs = input.marginSeconds * 1000;
      const expiresAt = seat.accessTokenExpiresAt?.getTime();
      if (expiresAt !== undefined && expiresAt - marginMs > Date.now()) return { outcome: 'not_due', refreshAt: expiresAt - marginMs };

      const credentials = openCredentials(deps.sealedBox, seat.id, seat.credentialsSealed);
      if (!credentials.refreshToken) {
        // Without a refresh token the seat keeps its token until it expires; then a person reconnects it.
        await seatsRepo.markReauthorizationRequired(deps.db, seat.id, seat.accountId);
        return { outcome: 'reauthorization_required' };
      }
      let refreshed: Refreshed;
      try {
        refreshed = await refreshUpstream(seat.track, credentials.refreshToken);
      } catch (err) {
        // Transient failures are retried by the activity's policy; the platform's refusals are not.
        if (!(err instanceof UpstreamError) || err.retryable) throw err;
        const official = { seatId: seat.id, officialCode: err.failure.officialCode, failureClass: err.failureClass };
        if (err.failureClass === 'auth') {
          deps.logger.warn(official, 'refresh token refused: the seat needs re-authorization');
          await seatsRepo.markReauthorizationRequired(deps.db, seat.id, seat.accountId);
          await recordAuthorizationRemoved(deps.events, seat, err);
          return { outcome: 'reauthorization_required' };
        }
        // A refusal that is not about the token (a missing scope, a used-up quota, a request the
        // platform calls bad, as a wrong app secret makes every refresh): re-authorizing may not
        // help, and ending here would let the token lapse unnoticed. Try again after a pause, so
        // the seat recovers by itself once the cause is fixed, and say so loudly meanwhile.
        deps.logger.error(
          { ...official, officialMessage: err.failure.officialMessage, retryInMs: deps.tokenRefreshRetryMs },
          'the platform refused a token refresh; it is tried again after a pause',
        );
        return { outcome: 'retry_later', refreshAt: Date.now() + deps.tokenRefreshRetryMs };
      }
      const stored = await seatsRepo.replaceSeatCredentials(deps.db, seat.id, seat.accountId, {
        credentialsSealed: sealCredentials(deps.sealedBox, seat.id, {
          accessToken: refreshed.accessToken,
          refreshToken: refreshed.refreshToken,
          ...(refreshed.scopes ? { scopes: refreshed.scopes } : {}),
        }),
        accessTokenExpiresAt: refreshed.accessTokenExpiresAt,
        refreshTokenExpiresAt: refreshed.refreshTokenExpiresAt,
      });
      if (!stored) return { outcome: 'unbound' };
      return { outcome: 'refreshed', refreshAt: refreshed.accessTokenExpiresAt.getTime() - marginMs };
    },
  };
}

/**
 * The platform refused the seat's refresh token: the account withdrew its authorization (or it
 * lapsed). Logged once per seat and account binding, so a retried activity does not log it twice.
 */
async function recordAuthorizationRemoved(events: EventRecorder, seat: seatsRepo.SeatRow, err: UpstreamError): Promise<void> {
  await events.record({
    customerId: seat.customerId,
    seatId: seat.id,
    ...catalogued('vplat.account.authorization_removed'),
    occurredAt: new Date(),
    data: {
      account_id: seat.accountId,
      track: seat.track,
      official_code: err.failure.officialCode ?? null,
      official_message: err.failure.officialMessage ?? null,
    },
    sourceKey: `authorization-removed:${seat.id}:${seat.boundAt?.toISOString() ?? ''}`,
  });
}
