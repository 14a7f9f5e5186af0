/**
 * The account-holder OAuth of the Business API: code exchange, refresh, revoke and token info.
 * Refresh tokens may rotate: the caller must keep the newest one every time.
 */
import type { VplatClient } from './client';

export interface TokenResponse {
  access_token: string;
  token_type: string;
  /** Comma-separated. */
  scope: string;
  /** Seconds from now. */
  expires_in: number;
  refresh_token: string;
  refresh_token_expires_in: number;
  open_id: string;
}

export function exchangeAuthCode(client: VplatClient, input: { authCode: string; redirectUri: string }): Promise<TokenResponse> {
  return client.appPost('tt_user/oauth2/token/', {
    client_id: client.settings.appId,
    client_secret: client.settings.appSecret,
    grant_type: 'authorization_code',
    auth_code: input.authCode,
    redirect_uri: input.redirectUri,
  });
}

export function refreshAccessToken(client: VplatClient, refreshToken: string): Promise<TokenResponse> {
  return client.appPost('tt_user/oauth2/refresh_token/', {
    client_id: client.settings.appId,
    client_secret: client.settings.appSecret,
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
  });
}

export async function revokeAccessToken(client: VplatClient, accessToken: string): Promise<void> {
  await client.appPost('tt_user/oauth2/revoke/', {
    client_id: client.settings.appId,
    client_secret: client.settings.appSecret,
    access_token: accessToken,
  });
}

export function getTokenInfo(client: VplatClient, accessToken: string): Promise<{ app_id: string; scope: string; creator_id: string }> {
  return client.appPost('tt_user/token_info/get/', { app_id: client.settings.appId, access_token: accessToken });
}

/** The consent page address a person is sent to; `authorizeUrl` is the platform's (or the emulator's) page. */
export function authorizePageUrl(
  authorizeUrl: string,
  input: { clientKey: string; redirectUri: string; state: string; scopes?: string[] },
): string {
  const url = new URL(authorizeUrl);
  url.searchParams.set('client_key', input.clientKey);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('redirect_uri', input.redirectUri);
  url.searchParams.set('state', input.state);
  if (input.scopes?.length) url.searchParams.set('scope', input.scopes.join(','));
  return url.toString();
}
