/**
 * Each track's OAuth, behind one shape: where the platform's consent page is, and what its code
 * exchange yields for a binding. The table is the one place that knows the two platforms differ
 * (the short-video platform's lifetimes are durations, the shop's absolute times; only the former
 * takes redirect_uri in the exchange).
 */
import type { SeatTrack } from '../db/schema';
import type { Upstream } from '../upstream';
import * as shopOAuth from '../upstream/shop/oauth';
import * as vplatOAuth from '../upstream/vplat/oauth';
import type { SeatBinding } from './binding';

/** The official consent pages, used when the settings name none (the emulator serves the same paths). */
export const OFFICIAL_AUTHORIZE_URLS: Record<SeatTrack, string> = {
  video: 'https://www.tiktok.com/v2/auth/authorize',
  shop: 'https://shop.tiktok.com/alliance/creator/auth',
};

type Granted = Pick<SeatBinding, 'accountId' | 'accountUsername' | 'credentials' | 'accessTokenExpiresAt' | 'refreshTokenExpiresAt'>;

interface Connector {
  authorizeUrl(upstream: Upstream, input: { redirectUri: string; state: string }): string;
  exchange(upstream: Upstream, input: { code: string; redirectUri: string; nowMs: number }): Promise<Granted>;
}

const secondsFrom = (nowMs: number, seconds: number) => new Date(nowMs + seconds * 1000);

export const CONNECTORS: Record<SeatTrack, Connector> = {
  video: {
    authorizeUrl: (upstream, input) =>
      vplatOAuth.authorizePageUrl(upstream.vplat.settings.authorizeUrl ?? OFFICIAL_AUTHORIZE_URLS.video, {
        clientKey: upstream.vplat.settings.appId,
        ...input,
      }),
    async exchange(upstream, input) {
      const t = await vplatOAuth.exchangeAuthCode(upstream.vplat, { authCode: input.code, redirectUri: input.redirectUri });
      return {
        accountId: t.open_id,
        accountUsername: undefined,
        credentials: { accessToken: t.access_token, refreshToken: t.refresh_token, scopes: t.scope.split(',').filter(Boolean) },
        accessTokenExpiresAt: secondsFrom(input.nowMs, t.expires_in),
        refreshTokenExpiresAt: secondsFrom(input.nowMs, t.refresh_token_expires_in),
      };
    },
  },
  shop: {
    authorizeUrl: (upstream, input) => {
      const page = upstream.shop.settings.authorizeUrl;
      // Only the emulator takes redirect_uri; the platform uses the one registered for the app.
      return shopOAuth.authorizePageUrl(page ?? OFFICIAL_AUTHORIZE_URLS.shop, {
        appKey: upstream.shop.settings.appKey,
        state: input.state,
        ...(page ? { redirectUri: input.redirectUri } : {}),
      });
    },
    async exchange(upstream, input) {
      const t = await shopOAuth.getAccessToken(upstream.shop, input.code);
      return {
        accountId: t.open_id,
        accountUsername: undefined,
        credentials: { accessToken: t.access_token, refreshToken: t.refresh_token, scopes: t.granted_scopes },
        accessTokenExpiresAt: new Date(t.access_token_expire_in * 1000),
        refreshTokenExpiresAt: new Date(t.refresh_token_expire_in * 1000),
      };
    },
  },
};
