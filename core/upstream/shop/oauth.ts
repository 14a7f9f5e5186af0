/**
 * The shop platform's creator OAuth: the authorize page address, the code exchange and the
 * refresh, both on the token service with the app credentials in the query (no signature).
 * `access_token_expire_in` and `refresh_token_expire_in` are absolute Unix times in seconds, not
 * durations. A refresh rotates the refresh token: the caller must keep the newest one every time.
 */
import type { ShopClient } from './client';

export interface ShopTokenResponse {
  access_token: string;
  /** Absolute Unix time (seconds) at which the access token expires. */
  access_token_expire_in: number;
  refresh_token: string;
  /** Absolute Unix time (seconds) at which the refresh token expires. */
  refresh_token_expire_in: number;
  open_id: string;
  seller_name: string;
  seller_base_region: string;
  /** 0 seller, 1 creator. */
  user_type: number;
  granted_scopes: string[];
}

export const SHOP_TOKEN_PATHS = { get: '/api/v2/token/get', refresh: '/api/v2/token/refresh' } as const;

export function getAccessToken(client: ShopClient, authCode: string): Promise<ShopTokenResponse> {
  return client.auth<ShopTokenResponse>(SHOP_TOKEN_PATHS.get, {
    app_key: client.settings.appKey,
    app_secret: client.settings.appSecret,
    auth_code: authCode,
    grant_type: 'authorized_code',
  });
}

export function refreshAccessToken(client: ShopClient, refreshToken: string): Promise<ShopTokenResponse> {
  return client.auth<ShopTokenResponse>(SHOP_TOKEN_PATHS.refresh, {
    app_key: client.settings.appKey,
    app_secret: client.settings.appSecret,
    refresh_token: refreshToken,
    grant_type: 'refresh_token',
  });
}

/**
 * The creator consent page address. `redirectUri` is an extension of the sandbox emulator: the
 * platform itself redirects to the URI registered for the app, so leave it out against the real one.
 */
export function authorizePageUrl(authorizeUrl: string, input: { appKey: string; state: string; redirectUri?: string }): string {
  const url = new URL(authorizeUrl);
  url.searchParams.set('app_key', input.appKey);
  url.searchParams.set('state', input.state);
  if (input.redirectUri) url.searchParams.set('redirect_uri', input.redirectUri);
  return url.toString();
}
