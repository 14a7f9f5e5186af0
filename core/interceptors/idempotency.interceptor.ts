import { createHash } from 'node:crypto';
import { create, fromBinary, isMessage, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import type { Interceptor, UnaryResponse } from '@connectrpc/connect';
import { Access } from '../../gen/vps/options/v1/options_pb';
import { principalKey } from '../context';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import { claimIdempotencyKey, releaseIdempotencyKey, storeIdempotentResponse } from '../db/repositories/idempotency';
import { ApiError, invalidField } from '../errors';
import { accessOf } from './access.interceptor';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Set on a response that repeats the first response of its key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/** A sealed response opens only for the customer and key it was stored under. */
const sealedFor = (customerId: string, key: string) => `idempotency:${customerId}:${key}`;

/**
 * `Idempotency-Key` on write RPCs: the first request with a key runs and its response is kept
 * (for `ttlMs`); a repeat with the same request gets that response again without the work being
 * done twice; the same key with another request is refused (2001). A failed request frees its key.
 * Runs after authentication: keys belong to the customer. Responses are kept sealed, since some
 * carry a secret shown once (a new endpoint's): at rest they are as safe as upstream tokens.
 */
export function idempotencyInterceptor(deps: { db: Db; ttlMs: number; sealedBox: SealedBox }): Interceptor {
  return (next) => async (req) => {
    const key = req.header.get(IDEMPOTENCY_KEY_HEADER);
    if (key === null || req.stream || accessOf(req.method) !== Access.WRITE) return next(req);
    if (!VALID_KEY.test(key)) throw invalidField('Idempotency-Key', 'must be 1 to 255 visible ASCII characters');
    const principal = req.contextValues.get(principalKey);
    if (principal?.kind !== 'customer') return next(req);
    const input = isMessage(req.message, req.method.input) ? req.message : create(req.method.input as DescMessage, req.message as MessageInitShape<DescMessage>);
    const digest = createHash('sha256').update(toBinary(req.method.input as DescMessage, input)).digest('hex');
    const fingerprint = `${req.method.parent.typeName}/${req.method.name}:${digest}`;
    const claim = await claimIdempotencyKey(deps.db, { customerId: principal.customerId, key, fingerprint, ttlMs: deps.ttlMs });
    if (!claim.claimed) {
      if (claim.fingerprint !== fingerprint) throw invalidField('Idempotency-Key', 'was already used for a different request; send a new key');
      if (claim.response === null) {
        throw new ApiError(2002, 'a request with this Idempotency-Key is still in progress; retry shortly', { retryAfterSeconds: 1 });
      }
      return {
        stream: false,
        service: req.service,
        method: req.method,
        header: new Headers({ [IDEMPOTENT_REPLAYED_HEADER]: 'true' }),
        trailer: new Headers(),
        message: fromBinary(req.method.output as DescMessage, Buffer.from(deps.sealedBox.open(claim.response, sealedFor(principal.customerId, key)), 'base64')),
      } as UnaryResponse;
    }
    try {
      const res = await next(req);
      if (!res.stream) {
        const bytes = toBinary(req.method.output as DescMessage, res.message as never);
        const sealed = deps.sealedBox.seal(Buffer.from(bytes).toString('base64'), sealedFor(principal.customerId, key));
        await storeIdempotentResponse(deps.db, principal.customerId, key, sealed);
      }
      return res;
    } catch (err) {
      await releaseIdempotencyKey(deps.db, principal.customerId, key);
      throw err;
    }
  };
}
