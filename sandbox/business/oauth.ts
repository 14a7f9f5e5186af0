/**
 * The short-video platform's OAuth for account holders: the consent page (a plain form where a
 * tester picks a sandbox account and approves), the code exchange, refresh (which rotates the
 * refresh token), revoke and token info, with the official lifetimes unless configured shorter.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Account } from '../accounts';
import { appRoute, type SandboxContext } from '../context';
import { grantTokens } from '../control';
import { escapeHtml, page } from '../html';
import { OfficialError } from '../official-error';
import type { Params } from '../params';
import type { TokenClaims } from '../tokens';

/** Granted when the authorize request names no scope. */
const DEFAULT_SCOPES = [
  'user.info.basic',
  'user.info.username',
  'user.insights',
  'video.list',
  'video.insights',
  'video.upload',
  'video.publish',
  'comment.list',
  'comment.list.manage',
  'message.list.read',
  'message.list.send',
  'message.list.manage',
];

const CODE_TTL_SECONDS = 600;

function checkClient(ctx: SandboxContext, id: string, secret: string): void {
  if (id !== ctx.settings.vplatAppId || secret !== ctx.settings.vplatAppSecret) {
    throw new OfficialError(40101, 'Invalid client_id or client_secret.');
  }
}

function tokenResponse(ctx: SandboxContext, account: Account, scope: string[]) {
  const tokens = grantTokens(ctx, account, scope);
  return {
    access_token: tokens.access_token,
    token_type: 'Bearer',
    scope: scope.join(','),
    expires_in: tokens.expires_in,
    refresh_token: tokens.refresh_token,
    refresh_token_expires_in: tokens.refresh_token_expires_in,
    open_id: account.openId,
  };
}

function credentials(params: Params) {
  return { id: params.requiredString('client_id'), secret: params.requiredString('client_secret') };
}

function consentForm(ctx: SandboxContext, q: Record<string, string | undefined>): string {
  const accounts = ctx.accounts.list('business');
  const hidden = ['client_key', 'redirect_uri', 'scope', 'state']
    .map((name) => `<input type="hidden" name="${name}" value="${escapeHtml(q[name] ?? '')}">`)
    .join('');
  const choices = accounts
    .map(
      (a, i) =>
        `<label><input type="radio" name="open_id" value="${escapeHtml(a.openId)}"${i === 0 ? ' checked' : ''}> ${escapeHtml(a.displayName)} (@${escapeHtml(a.username)})</label>`,
    )
    .join('');
  return page(
    'Authorize app (sandbox)',
    `<h1>Authorize app</h1><p>The app <strong>${escapeHtml(q.client_key ?? '')}</strong> asks for: ${escapeHtml(q.scope || DEFAULT_SCOPES.join(','))}.</p>
<form method="post" action="/v2/auth/authorize">${hidden}<fieldset><legend>Sign in as a sandbox account</legend>${choices}</fieldset>
<button type="submit" name="decision" value="approve">Authorize</button><button type="submit" name="decision" value="deny">Cancel</button></form>`,
  );
}

function badRequestPage(reply: FastifyReply, message: string) {
  return reply
    .code(400)
    .type('text/html; charset=utf-8')
    .send(page('Authorization error', `<h1>Authorization error</h1><p>${escapeHtml(message)}</p>`));
}

function validRedirect(uri: string | undefined): uri is string {
  if (!uri) return false;
  try {
    const u = new URL(uri);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

export function registerBusinessOAuth(app: FastifyInstance, ctx: SandboxContext): void {
  app.get('/v2/auth/authorize', async (request, reply) => {
    const q = request.query as Record<string, string | undefined>;
    if (q.client_key !== ctx.settings.vplatAppId) return badRequestPage(reply, 'Unknown client_key.');
    if (q.response_type !== 'code') return badRequestPage(reply, 'response_type must be code.');
    if (!validRedirect(q.redirect_uri)) return badRequestPage(reply, 'redirect_uri must be an absolute http(s) URL.');
    return reply.type('text/html; charset=utf-8').send(consentForm(ctx, q));
  });

  app.post('/v2/auth/authorize', async (request, reply) => {
    const form = (request.body ?? {}) as Record<string, string | undefined>;
    if (form.client_key !== ctx.settings.vplatAppId) return badRequestPage(reply, 'Unknown client_key.');
    if (!validRedirect(form.redirect_uri)) return badRequestPage(reply, 'redirect_uri must be an absolute http(s) URL.');
    const target = new URL(form.redirect_uri);
    if (form.state) target.searchParams.set('state', form.state);
    if (form.decision !== 'approve') {
      target.searchParams.set('error', 'access_denied');
      return reply.redirect(target.toString(), 302);
    }
    const account = form.open_id ? ctx.accounts.get(form.open_id) : undefined;
    if (!account || account.platform !== 'business') return badRequestPage(reply, 'Choose a sandbox account.');
    const scope = (form.scope || DEFAULT_SCOPES.join(',')).split(',').filter(Boolean);
    const code = ctx.tokens.issue({
      platform: 'business',
      kind: 'code',
      openId: account.openId,
      expiresAt: ctx.clock.nowSeconds() + CODE_TTL_SECONDS,
      scope,
      redirectUri: form.redirect_uri,
    });
    target.searchParams.set('code', code);
    return reply.redirect(target.toString(), 302);
  });

  appRoute(app, 'business', 'POST', '/open_api/v1.3/tt_user/oauth2/token/', ({ body }) => {
    const client = credentials(body);
    const grantType = body.requiredString('grant_type');
    const authCode = body.requiredString('auth_code');
    const redirectUri = body.requiredString('redirect_uri');
    checkClient(ctx, client.id, client.secret);
    if (grantType !== 'authorization_code') throw new OfficialError(40108, 'Invalid grant_type.');
    const verified = ctx.tokens.verify(authCode, 'code', 'business');
    if (!verified.ok || verified.claims.redirectUri !== redirectUri)
      throw new OfficialError(40110, 'The authorization code is invalid, used or expired.');
    ctx.tokens.revoke(verified.claims);
    const account = ctx.accounts.forToken(verified.claims.openId, 'business');
    return tokenResponse(ctx, account, verified.claims.scope);
  });

  appRoute(app, 'business', 'POST', '/open_api/v1.3/tt_user/oauth2/refresh_token/', ({ body }) => {
    const client = credentials(body);
    const grantType = body.requiredString('grant_type');
    const refreshToken = body.requiredString('refresh_token');
    checkClient(ctx, client.id, client.secret);
    if (grantType !== 'refresh_token') throw new OfficialError(40108, 'Invalid grant_type.');
    const verified = ctx.tokens.verify(refreshToken, 'refresh', 'business');
    if (!verified.ok) {
      throw verified.reason === 'expired'
        ? new OfficialError(40103, 'The refresh token has expired.')
        : new OfficialError(40107, 'The refresh token is invalid.');
    }
    // Refresh tokens rotate: the one just used stops working.
    ctx.tokens.revoke(verified.claims);
    return tokenResponse(ctx, ctx.accounts.forToken(verified.claims.openId, 'business'), verified.claims.scope);
  });

  appRoute(app, 'business', 'POST', '/open_api/v1.3/tt_user/oauth2/revoke/', ({ body }) => {
    const client = credentials(body);
    const accessToken = body.requiredString('access_token');
    checkClient(ctx, client.id, client.secret);
    const verified = ctx.tokens.verify(accessToken, 'access', 'business');
    if (!verified.ok) throw new OfficialError(40105, 'Access token is incorrect or has been revoked.');
    ctx.tokens.revoke(verified.claims);
    return {};
  });

  appRoute(app, 'business', 'POST', '/open_api/v1.3/tt_user/token_info/get/', ({ body }) => {
    const appId = body.requiredString('app_id');
    const accessToken = body.requiredString('access_token');
    if (appId !== ctx.settings.vplatAppId) throw new OfficialError(40113, 'The app does not exist or does not match the token.');
    const verified = ctx.tokens.verify(accessToken, 'access', 'business');
    if (!verified.ok) {
      throw verified.reason === 'expired'
        ? new OfficialError(40102, 'Access token has expired.')
        : new OfficialError(40105, 'Access token is incorrect or has been revoked.');
    }
    const claims: TokenClaims = verified.claims;
    return { app_id: appId, scope: claims.scope.join(','), creator_id: claims.openId };
  });
}
