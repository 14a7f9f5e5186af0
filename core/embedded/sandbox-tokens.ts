/**
 * Tokens for the demo seats in the embedded mode, obtained from the sandbox emulator's control API
 * as a tester approving the app would get them, so the demo seats work against the emulator and
 * are refreshed like any other seat.
 */
import type { DemoTokenGrant } from './seed';

export function sandboxTokenGrant(sandboxUrl: string): DemoTokenGrant {
  return async (openId) => {
    const res = await fetch(`${sandboxUrl}/_sandbox/accounts/${encodeURIComponent(openId)}/tokens`, { method: 'POST' });
    if (!res.ok) throw new Error(`the sandbox refused tokens for ${openId}: HTTP ${res.status}`);
    const { tokens } = (await res.json()) as {
      tokens: { access_token: string; refresh_token: string; access_token_expires_at: number; refresh_token_expires_at: number };
    };
    return {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      accessTokenExpiresAt: new Date(tokens.access_token_expires_at * 1000),
      refreshTokenExpiresAt: new Date(tokens.refresh_token_expires_at * 1000),
    };
  };
}
