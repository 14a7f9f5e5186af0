import { createHash, timingSafeEqual } from 'node:crypto';
import { getOption } from '@bufbuild/protobuf';
import type { DescMethod } from '@bufbuild/protobuf';
import { createContextKey, type Interceptor } from '@connectrpc/connect';
import { Access, access } from '../../gen/vps/options/v1/options_pb';
import { parseBearer, hashApiKey } from '../crypto/api-keys';
import type { Db } from '../db/client';
import { apiKeyMeter, peekKey, retryAfterSeconds, type AccessRow } from '../db/repositories/access';
import { authenticateSessionAndMeter, DEFAULT_SESSION_LIFETIME, peekSession } from '../db/repositories/console-sessions';
import { CSRF_HEADER, csrfTokenMatches, csrfTokenOf, hashSessionToken, parseSessionHeader } from '../crypto/session-tokens';
import { assertPlanActive, principalKey, type CustomerPrincipal } from '../context';
import { ApiError } from '../errors';
import type { Metrics } from '../observability/metrics';

export const RATE_LIMIT_LIMIT_HEADER = 'x-ratelimit-limit';
export const RATE_LIMIT_REMAINING_HEADER = 'x-ratelimit-remaining';

const declaredAccess = new WeakMap<DescMethod, Access>();

/**
 * The declared access class of an RPC: the one read/write flag every route inherits. Reading an
 * option decodes it each time, so the answer is kept per method.
 */
export function accessOf(method: DescMethod): Access {
  let value = declaredAccess.get(method);
  if (value === undefined) {
    value = getOption(method, access);
    declaredAccess.set(method, value);
  }
  return value;
}

function sameSecret(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

/** The console session behind a call authenticated by one (for the console's own methods). */
export interface ConsoleSessionContext {
  sessionId: string;
  csrfToken: string;
}

export const consoleSessionKey = createContextKey<ConsoleSessionContext | undefined>(undefined, {
  description: "the caller's console session",
});

const SESSION_GONE = 'console session expired or signed out; sign in again';
const SESSION_ONLY = new Set([Access.SESSION_READ, Access.SESSION_WRITE]);
/** Writes authenticated by the session cookie, which a browser attaches on its own, need the CSRF token. */
const CSRF_GUARDED = new Set([Access.WRITE, Access.SESSION_WRITE, Access.WRITE_PREFLIGHT]);
/** Judged as writes: refused with 1003 once the plan has expired. */
const PLAN_GUARDED = new Set([Access.WRITE, Access.WRITE_PREFLIGHT]);

interface Authenticated {
  row: Omit<AccessRow, 'keyId'>;
  apiKeyId: string;
  session?: ConsoleSessionContext;
}

/**
 * Authenticates every call by its method's declared access class. Customer calls: credential
 * lookup by hash (1001), user state (1002), rate limit (2002), plan for writes (1003), in that
 * order, from one database statement, so revocation, sign-out and disabling act on the very next
 * request everywhere. A write's preflight is judged the same way, but only looks for a token in
 * the bucket, leaving it there for the write. The credential is an API key or a console session
 * (`Session <token>`, which the gateway makes from the session cookie); console methods accept
 * only the session.
 */
export function accessInterceptor(deps: {
  db: Db;
  adminToken: string | undefined;
  ratePerMinute: number;
  sessionTtlMs?: number;
  metrics?: Metrics;
}): Interceptor {
  const sessionTtlMs = deps.sessionTtlMs ?? DEFAULT_SESSION_LIFETIME.ttlMs;
  const meterKey = apiKeyMeter(deps.db, deps.ratePerMinute);
  // `draws`: whether the call spends a token; a preflight only checks that one is there.
  const authenticateKey = async (header: string | null, draws: boolean): Promise<Authenticated> => {
    const key = parseBearer(header);
    if (!key) throw new ApiError(1001, 'API key missing or malformed: send the header "Authorization: Bearer <API_KEY>"');
    const row = draws ? await meterKey(hashApiKey(key)) : await peekKey(deps.db, hashApiKey(key), deps.ratePerMinute);
    if (!row) throw new ApiError(1001, 'API key invalid or revoked');
    return { row, apiKeyId: row.keyId };
  };
  const authenticateSession = async (token: string, csrfToken: string | null, guarded: boolean, draws: boolean): Promise<Authenticated> => {
    // Checked first: a forged cross-site request does not even draw from the user's bucket.
    if (guarded && !csrfTokenMatches(token, csrfToken)) {
      throw new ApiError(
        1001,
        "X-CSRF-Token header missing or wrong: a write signed in with the console session cookie must carry the session's csrfToken",
      );
    }
    const hash = hashSessionToken(token);
    const row = draws
      ? await authenticateSessionAndMeter(deps.db, hash, deps.ratePerMinute, sessionTtlMs)
      : await peekSession(deps.db, hash, deps.ratePerMinute);
    if (!row) throw new ApiError(1001, SESSION_GONE);
    return { row, apiKeyId: '', session: { sessionId: row.sessionId, csrfToken: csrfTokenOf(token) } };
  };

  return (next) => async (req) => {
    const declared = accessOf(req.method);
    if (declared === Access.ADMIN) {
      const header = req.header.get('authorization') ?? '';
      const token = /^Bearer (\S+)$/i.exec(header)?.[1];
      if (!deps.adminToken || !token || !sameSecret(token, deps.adminToken)) {
        throw new ApiError(1001, 'admin token missing or invalid');
      }
      req.contextValues.set(principalKey, { kind: 'admin' });
      return next(req);
    }
    // The method verifies the platform's signature itself; there is no caller credential to check.
    if (declared === Access.UPSTREAM_SIGNED) return next(req);
    // The method checks the signed token it was given (an upload ticket, a media URL).
    if (declared === Access.SIGNED_TOKEN) return next(req);
    // The method establishes the credential itself (the console's sign-in).
    if (declared === Access.PUBLIC) return next(req);
    if (declared !== Access.READ && declared !== Access.WRITE && declared !== Access.WRITE_PREFLIGHT && !SESSION_ONLY.has(declared)) {
      throw new Error(`${req.method.parent.typeName}.${req.method.name} declares no access class`);
    }
    const header = req.header.get('authorization');
    const sessionToken = parseSessionHeader(header);
    // A cookie that is not a token we issue (tampered, or from an older scheme) is a dead session.
    if (!sessionToken && /^Session /i.test(header ?? '')) throw new ApiError(1001, SESSION_GONE);
    if (SESSION_ONLY.has(declared) && !sessionToken) {
      throw new ApiError(1001, 'console session missing: sign in to the console; API keys cannot manage keys or sessions');
    }
    const draws = declared !== Access.WRITE_PREFLIGHT;
    const { row, apiKeyId, session } = sessionToken
      ? await authenticateSession(sessionToken, req.header.get(CSRF_HEADER), CSRF_GUARDED.has(declared), draws)
      : await authenticateKey(header, draws);
    const principal: CustomerPrincipal = {
      kind: 'customer',
      customerId: row.customerId,
      userId: row.userId,
      apiKeyId,
      planExpiresAt: row.planExpiresAt,
      planExpired: row.planExpired,
    };
    // Known before the checks below, so that the log line of a refused call names the customer too.
    req.contextValues.set(principalKey, principal);
    if (row.userDisabled)
      throw new ApiError(1002, `the user of this ${session ? 'console session' : 'API key'} is disabled; contact your administrator`);
    if (!row.allowed) {
      deps.metrics?.rateLimitRejections.inc({ credential: session ? 'console_session' : 'api_key' });
      const wait = retryAfterSeconds(row.tokensLeft ?? 0, deps.ratePerMinute);
      throw new ApiError(2002, `rate limit of ${deps.ratePerMinute} requests per minute exceeded; retry after ${wait} s`, {
        retryAfterSeconds: wait,
      });
    }
    if (PLAN_GUARDED.has(declared)) assertPlanActive(principal);
    if (session) req.contextValues.set(consoleSessionKey, session);
    const res = await next(req);
    // A preflight drew nothing: the budget is told by the write that follows.
    if (!draws) return res;
    res.header.set(RATE_LIMIT_LIMIT_HEADER, String(deps.ratePerMinute));
    res.header.set(RATE_LIMIT_REMAINING_HEADER, String(Math.max(0, Math.floor(row.tokensLeft ?? 0))));
    return res;
  };
}
