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
import { PLATFORM } from '../core/events/event-types';
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
        if (err instanceof UpstreamError && err.failureClass === 'auth') {
          deps.logger.warn(
            { seatId: seat.id, officialCode: err.failure.officialCode },
            'refresh token refused: the seat needs re-authorization',
          );
          await seatsRepo.markReauthorizationRequired(deps.db, seat.id, seat.accountId);
          await recordAuthorizationRemoved(deps.events, seat, err);
          return { outcome: 'reauthorization_required' };
        }
        throw err;
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
    platform: PLATFORM,
    type: 'vplat.account.authorization_removed',
    event: 'token_refresh_refused',
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
