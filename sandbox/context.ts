/**
 * What every part of the emulator shares: its clock, accounts, tokens, faults and webhook pusher,
 * and the helpers that declare an official route with the official auth and error handling.
 */
import type { CallJournal } from './journal';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../core/logger';
import type { Account, AccountRegistry } from './accounts';
import type { SandboxClock } from './clock';
import type { FaultPlan } from './faults';
import type { OutcomeQueue } from './outcomes';
import type { PostStore } from './posts';
import { BUSINESS, OfficialError, SHOP, success, type Platform } from './official-error';
import { verifyShopSignature } from './shop-signature';
import type { TokenMint } from './tokens';
import type { WebhookPusher } from './webhooks';
import { objectBody, Params } from './params';

export interface SandboxSettings {
  vplatAppId: string;
  vplatAppSecret: string;
  shopAppKey: string;
  shopAppSecret: string;
  /** Official lifetimes: Business API access 1 day, refresh 1 year; shop access 7 days, refresh 1 year. */
  accessTokenTtlSeconds: Record<Platform, number>;
  refreshTokenTtlSeconds: number;
  /** Virtual time a publish spends processing after its media was downloaded. */
  publishProcessingMs: number;
  /** Virtual time until a completed post's id appears in the status (about 3 minutes officially). */
  postIdDelayMs: number;
  /** Real time the emulator gives a media download before the task fails with video_pull_failed. */
  downloadTimeoutMs: number;
  webhookRetryDelaysMs: number[];
}

export interface SandboxContext {
  settings: SandboxSettings;
  clock: SandboxClock;
  accounts: AccountRegistry;
  tokens: TokenMint;
  faults: FaultPlan;
  webhooks: WebhookPusher;
  posts: PostStore;
  outcomes: OutcomeQueue;
  /** The official calls answered for an account, for tests that count what the service sent. */
  journal: CallJournal;
  logger: Logger;
  /** Where the emulator is reachable, for links it hands out (media download addresses). */
  baseUrl(): string;
}

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: string;
  }
}

export interface OfficialCall {
  request: FastifyRequest;
  reply: FastifyReply;
  /** The account the access token belongs to. */
  account: Account;
  query: Params;
  body: Params;
}

type Method = 'GET' | 'POST';

function paramsOf(request: FastifyRequest, platform: Platform): { query: Params; body: Params } {
  const errors = platform === 'shop' ? SHOP : BUSINESS;
  const body = objectBody(request.body);
  return {
    query: new Params((request.query ?? {}) as Record<string, unknown>, errors, true),
    body: new Params(body, errors, false),
  };
}

function businessAccount(ctx: SandboxContext, request: FastifyRequest): Account {
  const header = request.headers['access-token'];
  const token = Array.isArray(header) ? header[0] : header;
  if (!token) throw BUSINESS.tokenMissing();
  const verified = ctx.tokens.verify(token, 'access', 'business');
  if (!verified.ok) throw verified.reason === 'expired' ? BUSINESS.tokenExpired() : BUSINESS.tokenInvalid();
  return ctx.accounts.forToken(verified.claims.openId, 'business');
}

function shopAccount(ctx: SandboxContext, request: FastifyRequest): Account {
  const query = (request.query ?? {}) as Record<string, string>;
  if (!query.app_key) throw SHOP.missing('app_key');
  if (query.app_key !== ctx.settings.shopAppKey) throw SHOP.appKey();
  if (!query.sign) throw SHOP.missing('sign');
  const timestamp = Number(query.timestamp);
  // Signatures follow the real clock: the client signs with its own wall time.
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > 300) throw SHOP.timestamp();
  if ('shop_cipher' in query) throw SHOP.invalid('shop_cipher', 'is not accepted by creator endpoints');
  const multipart = String(request.headers['content-type'] ?? '').startsWith('multipart/form-data');
  const path = request.url.split('?')[0]!;
  if (!verifyShopSignature(ctx.settings.shopAppSecret, path, query, multipart ? undefined : request.rawBody, query.sign))
    throw SHOP.signature();
  const header = request.headers['x-tts-access-token'];
  const token = Array.isArray(header) ? header[0] : header;
  if (!token) throw SHOP.tokenInvalid();
  const verified = ctx.tokens.verify(token, 'access', 'shop');
  if (!verified.ok) throw verified.reason === 'expired' ? SHOP.tokenExpired() : SHOP.tokenInvalid();
  return ctx.accounts.forToken(verified.claims.openId, 'shop');
}

/**
 * Declares an official endpoint: authenticated by the platform's token (and, for the shop, its
 * request signature), answered in the platform's success envelope. Handlers return `data`.
 */
export function officialRoute(
  app: FastifyInstance,
  ctx: SandboxContext,
  platform: Platform,
  method: Method,
  url: string,
  handler: (call: OfficialCall) => unknown,
): void {
  app.route({
    method,
    url,
    handler: async (request, reply) => {
      const account = platform === 'shop' ? shopAccount(ctx, request) : businessAccount(ctx, request);
      const entry = {
        platform,
        method,
        path: request.url.split('?')[0]!,
        openId: account.openId,
        at: new Date(ctx.clock.now()).toISOString(),
      };
      try {
        const data = await handler({ request, reply, account, ...paramsOf(request, platform) });
        ctx.journal.record({ ...entry, code: 0 });
        return reply.send(success(platform, data));
      } catch (err) {
        ctx.journal.record({ ...entry, code: err instanceof OfficialError ? err.code : -1 });
        throw err;
      }
    },
  });
}

/** An official endpoint that takes app credentials instead of an access token (OAuth, webhook config). */
export function appRoute(
  app: FastifyInstance,
  platform: Platform,
  method: Method,
  url: string,
  handler: (call: Omit<OfficialCall, 'account'>) => unknown,
): void {
  app.route({
    method,
    url,
    handler: async (request, reply) => {
      const data = await handler({ request, reply, ...paramsOf(request, platform) });
      return reply.send(success(platform, data));
    },
  });
}

/** The Business API's business_id must name the account the token belongs to. */
export function requireOwnBusiness(call: OfficialCall, source: 'query' | 'body'): Account {
  const businessId = call[source].requiredString('business_id');
  if (businessId !== call.account.openId) {
    throw new OfficialError(40001, 'No permission to operate the account: business_id does not match the access token.');
  }
  return call.account;
}
