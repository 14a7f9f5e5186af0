import { createHash, timingSafeEqual } from 'node:crypto';
import { getOption } from '@bufbuild/protobuf';
import type { DescMethod } from '@bufbuild/protobuf';
import type { Interceptor } from '@connectrpc/connect';
import { Access, access } from '../../gen/vps/options/v1/options_pb';
import { parseBearer, hashApiKey } from '../crypto/api-keys';
import type { Db } from '../db/client';
import { authenticateAndMeter, retryAfterSeconds } from '../db/repositories/access';
import { assertPlanActive, principalKey, type CustomerPrincipal } from '../context';
import { ApiError } from '../errors';

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

/**
 * Authenticates every call by its method's declared access class. Customer calls: key lookup by
 * hash (1001), user state (1002), rate limit (2002), plan for writes (1003), in that order, from
 * one database statement, so revocation and disabling act on the very next request everywhere.
 */
export function accessInterceptor(deps: { db: Db; adminToken: string | undefined; ratePerMinute: number }): Interceptor {
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
    if (declared !== Access.READ && declared !== Access.WRITE) {
      throw new Error(`${req.method.parent.typeName}.${req.method.name} declares no access class`);
    }
    const key = parseBearer(req.header.get('authorization'));
    if (!key) throw new ApiError(1001, 'API key missing or malformed: send the header "Authorization: Bearer <API_KEY>"');
    const row = await authenticateAndMeter(deps.db, hashApiKey(key), deps.ratePerMinute);
    if (!row) throw new ApiError(1001, 'API key invalid or revoked');
    if (row.userDisabled) throw new ApiError(1002, 'the user of this API key is disabled; contact your administrator');
    if (!row.allowed) {
      const wait = retryAfterSeconds(row.tokensLeft ?? 0, deps.ratePerMinute);
      throw new ApiError(2002, `rate limit of ${deps.ratePerMinute} requests per minute exceeded; retry after ${wait} s`, {
        retryAfterSeconds: wait,
      });
    }
    const principal: CustomerPrincipal = {
      kind: 'customer',
      customerId: row.customerId,
      userId: row.userId,
      apiKeyId: row.keyId,
      planExpiresAt: row.planExpiresAt,
      planExpired: row.planExpired,
    };
    if (declared === Access.WRITE) assertPlanActive(principal);
    req.contextValues.set(principalKey, principal);
    const res = await next(req);
    res.header.set(RATE_LIMIT_LIMIT_HEADER, String(deps.ratePerMinute));
    res.header.set(RATE_LIMIT_REMAINING_HEADER, String(Math.max(0, Math.floor(row.tokensLeft ?? 0))));
    return res;
  };
}
