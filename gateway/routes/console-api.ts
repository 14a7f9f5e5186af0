/**
 * The console's own API under /console/api: signing in and out with the session cookie, and the
 * customer's API keys. Each route is one ConsoleService call; the console's other pages call /v1
 * with the same cookie (see forwardedHeaders).
 */
import type { Transport } from '@connectrpc/connect';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiKey } from '../../gen/vps/admin/v1/admin_pb';
import { ConsoleService, type ConsoleSession } from '../../gen/vps/console/v1/console_pb';
import { isoOrNull } from '../presenters/shared';
import { forwardedHeaders, forwardResponseHeaders, SESSION_COOKIE } from '../rpc-route';
import { listOf, okEnvelope } from '../schemas/common';
import {
  ConsoleApiKeyJson,
  ConsoleApiKeyParams,
  ConsoleSessionJson,
  CreateConsoleApiKeyBody,
  CreatedConsoleApiKeyJson,
  SignInBody,
} from '../schemas/console';

export const CONSOLE_API_PREFIX = '/console/api';

function sessionJson(session: ConsoleSession | undefined) {
  return { user: session?.user, customer: session?.customer, csrfToken: session?.csrfToken ?? '' };
}

function apiKeyJson(key: ApiKey | undefined): ConsoleApiKeyJson {
  return {
    id: key?.id ?? '',
    name: key?.name ?? '',
    prefix: key?.prefix ?? '',
    createdAt: isoOrNull(key?.createdAt) ?? '',
    lastUsedAt: isoOrNull(key?.lastUsedAt),
    revokedAt: isoOrNull(key?.revokedAt),
  };
}

/**
 * HttpOnly: script (and so an XSS) cannot read the token. SameSite=Strict: no cross-site request
 * carries it, the first line against CSRF (the X-CSRF-Token header is the second). No Max-Age: it
 * ends with the browser, and core ends it earlier on its own clock. Secure whenever served over https.
 */
function sessionCookie(value: string, secure: boolean, clear = false): string {
  return [
    `${SESSION_COOKIE}=${value}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    ...(clear ? ['Max-Age=0'] : []),
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

const ok = (data: Record<string, unknown>) => ({ code: 0 as const, message: 'ok' as const, data });

export async function registerConsoleApi(app: FastifyInstance, opts: { transport: Transport; publicUrl?: string }): Promise<void> {
  const secure = opts.publicUrl?.startsWith('https:') ?? false;
  const { transport } = opts;
  const m = ConsoleService.method;

  await app.register(
    async (api) => {
      api.post<{ Body: SignInBody }>(
        '/session',
        {
          // The answer holds the session's CSRF token and sets the session cookie.
          config: { carriesSecret: true },
          schema: { summary: 'Sign in to the console', body: SignInBody, response: { 200: okEnvelope(ConsoleSessionJson) } },
        },
        async (req, reply) => {
          const body = req.body;
          const res = await transport.unary(m.signIn, undefined, undefined, forwardedHeaders(req), {
            email: body.email,
            password: body.password,
          });
          void reply.header('set-cookie', sessionCookie(res.message.token, secure));
          return ok(sessionJson(res.message.session));
        },
      );

      api.get(
        '/session',
        {
          config: { carriesSecret: true },
          schema: { summary: 'The signed-in session', response: { 200: okEnvelope(ConsoleSessionJson) } },
        },
        async (req, reply) => {
          const res = await transport.unary(m.getSession, undefined, undefined, forwardedHeaders(req), {});
          forwardResponseHeaders(res.header, reply);
          return ok(sessionJson(res.message.session));
        },
      );

      api.delete(
        '/session',
        { schema: { summary: 'Sign out', response: { 200: okEnvelope(Type.Object({})) } } },
        async (req, reply: FastifyReply) => {
          // Cleared whatever core answers: a browser asking to sign out should not keep a dead cookie.
          void reply.header('set-cookie', sessionCookie('', secure, true));
          await transport.unary(m.signOut, undefined, undefined, forwardedHeaders(req), {});
          return ok({});
        },
      );

      api.get(
        '/keys',
        { schema: { summary: "The customer's API keys, newest first", response: { 200: okEnvelope(listOf(ConsoleApiKeyJson)) } } },
        async (req, reply) => {
          const res = await transport.unary(m.listApiKeys, undefined, undefined, forwardedHeaders(req), {});
          forwardResponseHeaders(res.header, reply);
          return ok({ items: res.message.apiKeys.map(apiKeyJson) });
        },
      );

      api.post<{ Body: CreateConsoleApiKeyBody }>(
        '/keys',
        {
          config: { carriesSecret: true },
          schema: {
            summary: 'Create an API key; the key is returned once',
            body: CreateConsoleApiKeyBody,
            response: { 200: okEnvelope(CreatedConsoleApiKeyJson) },
          },
        },
        async (req, reply) => {
          const body = req.body;
          const res = await transport.unary(m.createApiKey, undefined, undefined, forwardedHeaders(req), { name: body.name });
          forwardResponseHeaders(res.header, reply);
          return ok({ ...apiKeyJson(res.message.apiKey), key: res.message.plaintext });
        },
      );

      api.post<{ Params: ConsoleApiKeyParams }>(
        '/keys/:id/revoke',
        {
          schema: {
            summary: 'Revoke an API key, effective on its next request',
            params: ConsoleApiKeyParams,
            response: { 200: okEnvelope(ConsoleApiKeyJson) },
          },
        },
        async (req, reply) => {
          const { id } = req.params;
          const res = await transport.unary(m.revokeApiKey, undefined, undefined, forwardedHeaders(req), { id });
          forwardResponseHeaders(res.header, reply);
          return ok(apiKeyJson(res.message.apiKey));
        },
      );
    },
    { prefix: CONSOLE_API_PREFIX },
  );
}
