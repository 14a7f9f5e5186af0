/**
 * The shop platform's creator OAuth (official-api.md 8.2): the authorize page, and the token
 * service's get and refresh, all on the emulator's one origin (the platform splits them between
 * shop.tiktok.com and auth.tiktok-shops.com).
 *
 * Authorize page: GET /alliance/creator/auth?app_key&state&redirect_uri is a plain HTML form that
 * lists the shop sandbox accounts; approving POSTs to the same path and is redirected (302) to
 * `redirect_uri?code=<code>&state=<state>`. `redirect_uri` as a query parameter is an emulator
 * extension: the platform redirects to the URI registered for the app in its partner center,
 * which an emulator has no other way to learn. Codes live 10 minutes and are single use.
 *
 * Token service: GET /api/v2/token/get and /api/v2/token/refresh take the app credentials in the
 * query and no signature. Their errors: a wrong app_key or app_secret, or a wrong grant_type,
 * answer 36009004 naming the field (the official codes are not documented); a bad, used or expired
 * code answers 36004004, an unknown or revoked refresh token 36004005 "can not find related auth
 * record", an expired one 36004001 "rt has expired", with HTTP 200 (as observed on the live host).
 * `*_expire_in` are absolute Unix times. A refresh rotates the refresh token (the old one stops
 * working) and keeps its expiry: the authorization period does not grow with each refresh.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Account } from '../accounts';
import { appRoute, type SandboxContext } from '../context';
import { objectBody } from '../params';
import { escapeHtml, page } from '../html';
import { OfficialError, SHOP } from '../official-error';
import type { Params } from '../params';

export const AUTHORIZE_PATH = '/alliance/creator/auth';
export const TOKEN_GET_PATH = '/api/v2/token/get';
export const TOKEN_REFRESH_PATH = '/api/v2/token/refresh';

/** What approving grants: posting, reading the showcase and the profile (8.2). */
export const GRANTED_SCOPES = ['creator.video.write', 'creator.showcase.read', 'creator.affiliate.info'];
const CODE_TTL_SECONDS = 600;

const AUTH_ERRORS = {
  authCode: () => new OfficialError(36004004, 'invalid auth code: it does not exist, has expired or has been used'),
  refreshUnknown: () => new OfficialError(36004005, 'can not find related auth record'),
  refreshExpired: () => new OfficialError(36004001, 'rt has expired'),
};

class PageError extends Error {}

interface AuthorizeRequest {
  appKey: string;
  state: string;
  redirectUri: string;
}

function readAuthorizeRequest(ctx: SandboxContext, source: Record<string, unknown>): AuthorizeRequest {
  const text = (name: string) => (typeof source[name] === 'string' ? (source[name] as string) : '');
  const appKey = text('app_key');
  const state = text('state');
  const redirectUri = text('redirect_uri');
  if (appKey !== ctx.settings.shopAppKey) throw new PageError('Unknown app_key: this app is not registered with the shop platform.');
  if (!state) throw new PageError('The state parameter is required.');
  let parsed: URL;
  try {
    parsed = new URL(redirectUri);
  } catch {
    throw new PageError('redirect_uri is required (an emulator extension: the platform uses the URI registered for the app).');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new PageError('redirect_uri must be an http or https address.');
  return { appKey, state, redirectUri };
}

function authorizeForm(ctx: SandboxContext, req: AuthorizeRequest): string {
  const accounts = ctx.accounts.list('shop');
  const choices = accounts
    .map(
      (a, i) =>
        `<label><input type="radio" name="open_id" value="${escapeHtml(a.openId)}"${i === 0 ? ' checked' : ''}> ` +
        `${escapeHtml(a.displayName)} (@${escapeHtml(a.username)})</label>`,
    )
    .join('');
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  return page(
    'Authorize app - shop platform sandbox',
    '<h1>Authorize app</h1>' +
      `<p>The app <code>${escapeHtml(req.appKey)}</code> asks to act for a creator: ${GRANTED_SCOPES.map((s) => `<code>${escapeHtml(s)}</code>`).join(', ')}.</p>` +
      `<form method="post" action="${AUTHORIZE_PATH}">` +
      hidden('app_key', req.appKey) +
      hidden('state', req.state) +
      hidden('redirect_uri', req.redirectUri) +
      `<fieldset><legend>Sign in as</legend>${choices || '<p>No shop sandbox accounts exist.</p>'}</fieldset>` +
      '<p><button type="submit">Approve</button></p></form>',
  );
}

function sendPageError(reply: FastifyReply, err: unknown) {
  if (!(err instanceof PageError)) throw err;
  return reply
    .code(400)
    .type('text/html; charset=utf-8')
    .send(page('Authorization failed', `<h1>Authorization failed</h1><p>${escapeHtml(err.message)}</p>`));
}

function checkApp(ctx: SandboxContext, query: Params, grantType: string): void {
  const appKey = query.requiredString('app_key');
  const appSecret = query.requiredString('app_secret');
  const grant = query.requiredString('grant_type');
  if (appKey !== ctx.settings.shopAppKey) throw SHOP.appKey();
  if (appSecret !== ctx.settings.shopAppSecret) throw SHOP.invalid('app_secret');
  if (grant !== grantType) throw SHOP.invalid('grant_type', `must be ${grantType}`);
}

function tokenData(ctx: SandboxContext, account: Account, scope: string[], refreshExpiresAt: number) {
  const now = ctx.clock.nowSeconds();
  const accessExpiresAt = now + ctx.settings.accessTokenTtlSeconds.shop;
  return {
    access_token: ctx.tokens.issue({ platform: 'shop', kind: 'access', openId: account.openId, expiresAt: accessExpiresAt, scope }),
    access_token_expire_in: accessExpiresAt,
    refresh_token: ctx.tokens.issue({ platform: 'shop', kind: 'refresh', openId: account.openId, expiresAt: refreshExpiresAt, scope }),
    refresh_token_expire_in: refreshExpiresAt,
    open_id: account.openId,
    seller_name: account.displayName,
    seller_base_region: 'US',
    user_type: 1,
    granted_scopes: scope,
  };
}

export function registerShopOAuth(app: FastifyInstance, ctx: SandboxContext): void {
  app.get(AUTHORIZE_PATH, async (request, reply) => {
    try {
      const req = readAuthorizeRequest(ctx, (request.query ?? {}) as Record<string, unknown>);
      return reply.type('text/html; charset=utf-8').send(authorizeForm(ctx, req));
    } catch (err) {
      return sendPageError(reply, err);
    }
  });

  app.post(AUTHORIZE_PATH, async (request, reply) => {
    try {
      const form = objectBody(request.body);
      const req = readAuthorizeRequest(ctx, form);
      const account = typeof form.open_id === 'string' ? ctx.accounts.get(form.open_id) : undefined;
      if (!account || account.platform !== 'shop') throw new PageError('Choose a shop sandbox account to sign in as.');
      const code = ctx.tokens.issue({
        platform: 'shop',
        kind: 'code',
        openId: account.openId,
        expiresAt: ctx.clock.nowSeconds() + CODE_TTL_SECONDS,
        scope: GRANTED_SCOPES,
        redirectUri: req.redirectUri,
      });
      const target = new URL(req.redirectUri);
      target.searchParams.set('code', code);
      target.searchParams.set('state', req.state);
      return reply.redirect(target.toString(), 302);
    } catch (err) {
      return sendPageError(reply, err);
    }
  });

  appRoute(app, 'shop', 'GET', TOKEN_GET_PATH, ({ query }) => {
    checkApp(ctx, query, 'authorized_code');
    const verified = ctx.tokens.verify(query.requiredString('auth_code'), 'code', 'shop');
    if (!verified.ok) throw AUTH_ERRORS.authCode();
    ctx.tokens.revoke(verified.claims);
    const account = ctx.accounts.forToken(verified.claims.openId, 'shop');
    return tokenData(ctx, account, verified.claims.scope, ctx.clock.nowSeconds() + ctx.settings.refreshTokenTtlSeconds);
  });

  appRoute(app, 'shop', 'GET', TOKEN_REFRESH_PATH, ({ query }) => {
    checkApp(ctx, query, 'refresh_token');
    const verified = ctx.tokens.verify(query.requiredString('refresh_token'), 'refresh', 'shop');
    if (!verified.ok) throw verified.reason === 'expired' ? AUTH_ERRORS.refreshExpired() : AUTH_ERRORS.refreshUnknown();
    ctx.tokens.revoke(verified.claims);
    const account = ctx.accounts.forToken(verified.claims.openId, 'shop');
    return tokenData(ctx, account, verified.claims.scope, verified.claims.expiresAt);
  });
}
