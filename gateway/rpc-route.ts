/**
 * A /v1 route is one row: method, path, schema, and the RPC it maps onto, with two small functions
 * that translate the request in and the result out. Authentication, the read/write flag (the RPC's
 * declared access), rate limiting and errors are handled once, here and in the envelope plugin.
 */
import type { DescMessage, DescMethodUnary, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type { Transport } from '@connectrpc/connect';
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, HTTPMethods } from 'fastify';
import { AuthService } from '../gen/vps/auth/v1/auth_pb';
import { Access } from '../gen/vps/options/v1/options_pb';
import { accessOf, RATE_LIMIT_LIMIT_HEADER, RATE_LIMIT_REMAINING_HEADER } from '../core/interceptors/access.interceptor';
import { ApiError } from '../core/errors';
import { LONE_SURROGATE } from '../core/unstorable-text';
import { CSRF_HEADER } from '../core/crypto/session-tokens';
import { CLIENT_ADDRESS_HEADER } from '../core/net/client-address';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from '../core/interceptors/idempotency.interceptor';

type StaticOf<T> = T extends TSchema ? Static<T> : unknown;

/**
 * A request as its route's schema validated it: body, query string and path parameters typed by
 * their TypeBox schemas, so a route reads them without casts. (The RPC routes answer a request
 * that fails its schema before any of them runs.)
 */
export type ValidatedRequest<S extends FastifySchema> = Omit<FastifyRequest, 'body' | 'query' | 'params'> & {
  body: StaticOf<S['body']>;
  query: StaticOf<S['querystring']>;
  params: StaticOf<S['params']>;
};

export interface RpcRoute<
  I extends DescMessage = DescMessage,
  O extends DescMessage = DescMessage,
  S extends FastifySchema = FastifySchema,
> {
  method: HTTPMethods;
  url: string;
  summary: string;
  rpc: DescMethodUnary<I, O>;
  schema: S;
  toRequest(req: ValidatedRequest<S>): MessageInitShape<I>;
  /** Every body field is optional: a request without a body reads as `{}`. */
  optionalBody?: boolean;
  /** The answer shows a secret once (a webhook secret): sent with `Cache-Control: no-store`. */
  carriesSecret?: boolean;
  toData(res: MessageShape<O>): Record<string, unknown>;
}

/**
 * The refusal of input that failed its schema: 2001, except a path id that cannot be one of ours
 * (too long, empty), which is as unknown as any other id: 1005.
 */
export function inputRefusal(message: string, context: string | undefined): ApiError {
  return context === 'params' ? new ApiError(1005, `${message}; no such resource`) : new ApiError(2001, message);
}

/** Keeps the generic link between an RPC and its translators while storing routes in one array. */
export function defineRoute<I extends DescMessage, O extends DescMessage, S extends FastifySchema>(route: RpcRoute<I, O, S>): RpcRoute {
  return route as unknown as RpcRoute;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    /** Every body field is optional: an empty body reads as `{}`, whatever its Content-Type says. */
    optionalBody?: boolean;
  }
}

const FORWARDED_RESPONSE_HEADERS = [RATE_LIMIT_LIMIT_HEADER, RATE_LIMIT_REMAINING_HEADER, IDEMPOTENT_REPLAYED_HEADER];

/** Core's response headers a caller sees: its rate limit and whether a response was replayed. */
export function forwardResponseHeaders(from: Headers, reply: FastifyReply): void {
  for (const name of FORWARDED_RESPONSE_HEADERS) {
    const value = from.get(name);
    if (value !== null) void reply.header(name, value);
  }
}

/** The console's session cookie (HttpOnly: the console's script never sees the token). */
export const SESSION_COOKIE = 'vps_session';
const PRINTABLE = /^[\x20-\x7e]*$/;

/** The first cookie of that name in a Cookie header; a tiny parser, since no value is ever decoded. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Headers a gateway passes to core: the caller's credential and the request id, if printable. The
 * credential is the Authorization header when there is one (it always wins); otherwise the console's
 * session cookie, as `Session <token>`, with the CSRF token core checks on writes. The caller's
 * address is the connection's, or what a trusted proxy says (VPS_TRUSTED_PROXIES, Fastify's
 * trustProxy); a header of that name sent by the caller is never passed on.
 */
export function forwardedHeaders(req: FastifyRequest): Headers {
  const headers = new Headers({ 'x-request-id': req.id });
  if (req.ip) headers.set(CLIENT_ADDRESS_HEADER, req.ip);
  const auth = req.headers.authorization;
  const session = cookieOf(req.headers.cookie, SESSION_COOKIE);
  // A header with control or non-ASCII characters cannot be a valid key; send a placeholder
  // instead of letting the Headers constructor throw, so the caller gets 1001, not 5000.
  if (typeof auth === 'string') headers.set('authorization', PRINTABLE.test(auth) ? auth : 'invalid');
  else if (session !== undefined) headers.set('authorization', `Session ${PRINTABLE.test(session) ? session : 'invalid'}`);
  const csrf = req.headers[CSRF_HEADER];
  if (typeof csrf === 'string' && PRINTABLE.test(csrf)) headers.set(CSRF_HEADER, csrf);
  // Checked by core. A value the Headers constructor would refuse is sent as a blank, which core
  // refuses with 2001 naming the header, rather than failing here with 5000.
  const key = req.headers[IDEMPOTENCY_KEY_HEADER];
  if (typeof key === 'string') headers.set(IDEMPOTENCY_KEY_HEADER, PRINTABLE.test(key) ? key : ' ');
  return headers;
}

/**
 * Establishes the caller before a request's content is judged, so an anonymous malformed request
 * is answered 1001 rather than 2001. Costs one call on the error path only.
 */
export async function authorizeCaller(transport: Transport, req: FastifyRequest, access: Access): Promise<void> {
  await transport.unary(AuthService.method.authorize, undefined, undefined, forwardedHeaders(req), { access });
}

/**
 * Judges the caller as a write would, drawing nothing from the rate limit: for an upload that
 * stores its file before the fields naming its target arrive (the write itself draws later).
 */
export async function checkWriter(transport: Transport, req: FastifyRequest): Promise<void> {
  await transport.unary(AuthService.method.checkWriter, undefined, undefined, forwardedHeaders(req), {});
}

/**
 * Postgres text cannot hold U+0000 and its jsonb refuses a lone surrogate, and no field of ours has
 * a use for either: a request carrying one is refused naming the field, rather than failing in the
 * database with 5000.
 */
export function nulField(req: FastifyRequest): string | undefined {
  // Depth first on a stack of our own, not the call stack: a route without a body schema takes
  // any JSON, and 100k nested arrays would overflow a recursive walk (a RangeError, so 5000).
  const pending: Array<[unknown, string]> = [
    [req.body, ''],
    [req.query, ''],
    [req.params, ''],
  ];
  while (pending.length) {
    const [value, path] = pending.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return `${path || 'request'}: must not contain the NUL character`;
      if (LONE_SURROGATE.test(value)) return `${path || 'request'}: must be valid Unicode (it holds a lone surrogate)`;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push([value[i], `${path}[${i}]`]);
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) pending.push([entries[i]![1], path ? `${path}.${entries[i]![0]}` : entries[i]![0]]);
    }
  }
  return undefined;
}

/** The request stream of a server-streaming call: one message. */
export async function* single<T>(message: T): AsyncIterable<T> {
  yield message;
}

export function registerRpcRoutes(app: FastifyInstance, routes: RpcRoute[], transport: Transport): void {
  for (const route of routes) {
    const access = accessOf(route.rpc);
    if (access !== Access.READ && access !== Access.WRITE) {
      throw new Error(`${route.method} ${route.url}: ${route.rpc.name} is not a customer RPC`);
    }
    app.route({
      method: route.method,
      url: route.url,
      schema: { summary: route.summary, ...route.schema },
      config: { access, carriesSecret: route.carriesSecret === true, optionalBody: route.optionalBody === true },
      attachValidation: true,
      ...(route.optionalBody
        ? {
            preValidation: async (req: FastifyRequest) => {
              req.body ??= {};
            },
          }
        : {}),
      handler: async (req, reply) => {
        const invalid = req.validationError?.message ?? nulField(req);
        if (invalid) {
          await authorizeCaller(transport, req, access);
          throw inputRefusal(invalid, req.validationError?.validationContext);
        }
        const res = await transport.unary(
          route.rpc,
          undefined,
          undefined,
          forwardedHeaders(req),
          route.toRequest(req as ValidatedRequest<FastifySchema>),
        );
        forwardResponseHeaders(res.header, reply);
        return { code: 0, message: 'ok', data: route.toData(res.message) };
      },
    });
  }
}
