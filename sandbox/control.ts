/**
 * The control API under `/_sandbox/`, for tests and demos: accounts and their tokens, faults,
 * the clock, the outcome of the next publish, and what was pushed to webhooks. Plain JSON, no
 * envelope: it is the emulator's own interface, not an official one. Engagement and shop control
 * routes (injecting comments, messages, products) live beside their official routes.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Account } from './accounts';
import type { SandboxContext } from './context';
import { FAULT_KINDS, type FaultKind } from './faults';
import type { Platform } from './official-error';
import type { PublishOutcome } from './outcomes';
import { objectBody } from './params';

export class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function controlFail(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).send({ error: message });
}

function platformParam(value: unknown): Platform {
  if (value === 'business' || value === 'shop') return value;
  throw new ControlError(400, 'platform must be "business" or "shop"');
}

/** An account with a fresh token pair, as if its owner had just approved the app. */
export function grantTokens(ctx: SandboxContext, account: Account, scope: string[] = []) {
  const now = ctx.clock.nowSeconds();
  const accessTtl = ctx.settings.accessTokenTtlSeconds[account.platform];
  const refreshTtl = ctx.settings.refreshTokenTtlSeconds;
  return {
    access_token: ctx.tokens.issue({
      platform: account.platform,
      kind: 'access',
      openId: account.openId,
      expiresAt: now + accessTtl,
      scope,
    }),
    refresh_token: ctx.tokens.issue({
      platform: account.platform,
      kind: 'refresh',
      openId: account.openId,
      expiresAt: now + refreshTtl,
      scope,
    }),
    access_token_expires_at: now + accessTtl,
    refresh_token_expires_at: now + refreshTtl,
    expires_in: accessTtl,
    refresh_token_expires_in: refreshTtl,
  };
}

export function requireAccount(ctx: SandboxContext, openId: string): Account {
  const account = ctx.accounts.get(openId);
  if (!account) throw new ControlError(404, `no sandbox account ${openId}`);
  return account;
}

/**
 * Declares control routes in their own scope, whose errors answer as plain JSON `{error}` rather
 * than in an official envelope.
 */
export function controlRoutes(app: FastifyInstance, ctx: SandboxContext, register: (control: FastifyInstance) => void): void {
  app.register(async (control) => {
    control.setErrorHandler((error, request, reply) => {
      if (error instanceof ControlError) return controlFail(reply, error.status, error.message);
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      if (status >= 500) ctx.logger.error({ err: error, url: request.url }, 'sandbox control route failed');
      return controlFail(reply, status, (error as Error).message);
    });
    register(control);
  });
}

export function registerControl(app: FastifyInstance, ctx: SandboxContext): void {
  controlRoutes(app, ctx, (control) => {
    control.get('/_sandbox/accounts', async (request) => {
      const platform = (request.query as { platform?: string }).platform;
      return { accounts: ctx.accounts.list(platform === undefined ? undefined : platformParam(platform)) };
    });

    control.post('/_sandbox/accounts', async (request) => {
      const b = objectBody(request.body);
      const account = ctx.accounts.create({
        platform: platformParam(b.platform),
        ...(typeof b.openId === 'string' && b.openId ? { openId: b.openId } : {}),
        ...(typeof b.username === 'string' && b.username ? { username: b.username } : {}),
        ...(typeof b.displayName === 'string' ? { displayName: b.displayName } : {}),
        ...(typeof b.isPrivate === 'boolean' ? { isPrivate: b.isPrivate } : {}),
      });
      return { account, tokens: grantTokens(ctx, account) };
    });

    control.post('/_sandbox/accounts/:openId/tokens', async (request) => {
      const account = requireAccount(ctx, (request.params as { openId: string }).openId);
      return { account, tokens: grantTokens(ctx, account) };
    });

    // The account removes the app: every token issued so far stops working.
    control.post('/_sandbox/accounts/:openId/deauthorize', async (request) => {
      const account = requireAccount(ctx, (request.params as { openId: string }).openId);
      ctx.tokens.revokeAccount(account.openId);
      return { account };
    });

    control.post('/_sandbox/accounts/:openId/next-publish', async (request) => {
      const account = requireAccount(ctx, (request.params as { openId: string }).openId);
      const b = objectBody(request.body);
      let outcome: PublishOutcome;
      if (b.outcome === 'complete') outcome = { kind: 'complete' };
      else if (b.outcome === 'draft') outcome = { kind: 'draft' };
      else if (b.outcome === 'failed')
        outcome = { kind: 'failed', reason: typeof b.reason === 'string' && b.reason ? b.reason : 'internal' };
      else throw new ControlError(400, 'outcome must be "complete", "failed" or "draft"');
      ctx.outcomes.push(account.openId, outcome);
      return { openId: account.openId, outcome };
    });

    control.delete('/_sandbox/accounts/:openId/next-publish', async (request) => {
      const account = requireAccount(ctx, (request.params as { openId: string }).openId);
      ctx.outcomes.clear(account.openId);
      return { openId: account.openId, outcome: null };
    });

    control.get('/_sandbox/faults', async () => ({ faults: ctx.faults.list() }));
    control.post('/_sandbox/faults', async (request) => {
      const b = objectBody(request.body);
      if (!FAULT_KINDS.includes(b.kind as FaultKind)) throw new ControlError(400, `kind must be one of ${FAULT_KINDS.join(', ')}`);
      const count = b.count === undefined ? 1 : Number(b.count);
      if (!Number.isInteger(count) || count < 1) throw new ControlError(400, 'count must be a positive integer');
      const hangMs = b.hangMs === undefined ? undefined : Number(b.hangMs);
      if (hangMs !== undefined && (!Number.isInteger(hangMs) || hangMs < 0))
        throw new ControlError(400, 'hangMs must be a non-negative integer');
      const fault = ctx.faults.add({
        kind: b.kind as FaultKind,
        count,
        ...(b.platform !== undefined ? { platform: platformParam(b.platform) } : {}),
        ...(typeof b.pathPrefix === 'string' ? { pathPrefix: b.pathPrefix } : {}),
        ...(hangMs !== undefined ? { hangMs } : {}),
      });
      return { fault };
    });
    control.delete('/_sandbox/faults', async () => {
      ctx.faults.clear();
      return { faults: [] };
    });

    control.get('/_sandbox/clock', async () => ctx.clock.state());
    control.post('/_sandbox/clock', async (request) => {
      const b = objectBody(request.body);
      if (b.advanceMs !== undefined) {
        const ms = Number(b.advanceMs);
        if (!Number.isFinite(ms) || ms < 0) throw new ControlError(400, 'advanceMs must be a non-negative number');
        ctx.clock.advance(ms);
      }
      if (b.speed !== undefined) {
        const speed = Number(b.speed);
        if (!Number.isFinite(speed) || speed <= 0) throw new ControlError(400, 'speed must be a positive number');
        ctx.clock.setSpeed(speed);
      }
      return ctx.clock.state();
    });

    control.get('/_sandbox/webhooks/pushes', async () => ({ pushes: ctx.webhooks.history() }));
    control.get('/_sandbox/calls', async (request) => {
      const q = (request.query ?? {}) as { path?: string; openId?: string };
      return {
        calls: ctx.journal.list({
          path: typeof q.path === 'string' ? q.path : undefined,
          openId: typeof q.openId === 'string' ? q.openId : undefined,
        }),
      };
    });
  });
}
