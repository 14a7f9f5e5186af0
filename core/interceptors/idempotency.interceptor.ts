import { createHash } from 'node:crypto';
import { create, fromBinary, isMessage, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import { createContextKey, type HandlerContext, type Interceptor } from '@connectrpc/connect';
import { Access } from '../../gen/vps/options/v1/options_pb';
import { principalKey } from '../context';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import { claimIdempotencyKey, releaseIdempotencyKey, storeIdempotentResponse } from '../db/repositories/idempotency';
import { ApiError, invalidField } from '../errors';
import { accessOf } from './access.interceptor';
import type { Logger } from '../logger';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Set on a response that repeats the first response of its key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/** The stored response of a repeated request, for replayable() to answer with. */
const replayKey = createContextKey<unknown>(undefined, { description: 'the stored response an Idempotency-Key repeat answers with' });

/**
 * Wraps a service so that a repeat the interceptor recognised is answered with the stored message
 * instead of running the method. The answer still goes through the protocol's own response
 * headers and trailers (content type, gRPC status), which an interceptor cannot produce itself.
 */
export function replayable<T extends object>(service: T): T {
  return new Proxy(service, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (req: unknown, ctx: HandlerContext) => {
        const replay = ctx.values.get(replayKey);
        if (replay === undefined) return (value as (r: unknown, c: HandlerContext) => unknown).call(target, req, ctx);
        ctx.responseHeader.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
        return replay;
      };
    },
  });
}

/** A sealed response opens only for the customer and key it was stored under. */
const sealedFor = (customerId: string, key: string) => `idempotency:${customerId}:${key}`;

/**
 * `Idempotency-Key` on write RPCs: the first request with a key runs and its response is kept
 * (for `ttlMs`); a repeat with the same request gets that response again without the work being
 * done twice; the same key with another request is refused (2001). A failed request frees its key.
 * Runs after authentication: keys belong to the customer. Responses are kept sealed, since some
 * carry a secret shown once (a new endpoint's): at rest they are as safe as upstream tokens.
 */
export function idempotencyInterceptor(deps: { db: Db; ttlMs: number; sealedBox: SealedBox; logger: Logger }): Interceptor {
  return (next) => async (req) => {
    const key = req.header.get(IDEMPOTENCY_KEY_HEADER);
    if (key === null || req.stream || accessOf(req.method) !== Access.WRITE) return next(req);
    if (!VALID_KEY.test(key)) throw invalidField('Idempotency-Key', 'must be 1 to 255 visible ASCII characters');
    const principal = req.contextValues.get(principalKey);
    if (principal?.kind !== 'customer') return next(req);
    const input = isMessage(req.message, req.method.input)
      ? req.message
      : create(req.method.input as DescMessage, req.message as MessageInitShape<DescMessage>);
    const digest = createHash('sha256')
      .update(toBinary(req.method.input as DescMessage, input))
      .digest('hex');
    const fingerprint = `${req.method.parent.typeName}/${req.method.name}:${digest}`;
    const claim = await claimIdempotencyKey(deps.db, { customerId: principal.customerId, key, fingerprint, ttlMs: deps.ttlMs });
    if (!claim.claimed) {
      if (claim.fingerprint !== fingerprint)
        throw invalidField('Idempotency-Key', 'was already used for a different request; send a new key');
      if (claim.response === null) {
        throw new ApiError(2002, 'a request with this Idempotency-Key is still in progress; retry shortly', { retryAfterSeconds: 1 });
      }
      req.contextValues.set(
        replayKey,
        fromBinary(
          req.method.output as DescMessage,
          Buffer.from(deps.sealedBox.open(claim.response, sealedFor(principal.customerId, key)), 'base64'),
        ),
      );
      return next(req);
    }
    let res;
    try {
      res = await next(req);
    } catch (err) {
      await freeKey(
        () => releaseIdempotencyKey(deps.db, principal.customerId, key),
        RELEASE_RETRY_DELAYS_MS,
        (releaseErr) =>
          deps.logger.error(
            { err: releaseErr, customerId: principal.customerId },
            'could not free the Idempotency-Key of a failed request; repeats answer 2002 until it is abandoned',
          ),
      );
      throw err;
    }
    if (!res.stream) {
      const bytes = toBinary(req.method.output as DescMessage, res.message as never);
      const sealed = deps.sealedBox.seal(Buffer.from(bytes).toString('base64'), sealedFor(principal.customerId, key));
      // The work is done: failing to keep its answer must not tell the caller it failed, nor free
      // the key, or a retry would do the work again. Repeats then hear "in progress" until the
      // key expires, and the caller finds the result by reading it (e.g. the publish records).
      await storeIdempotentResponse(deps.db, principal.customerId, key, sealed).catch((err: unknown) =>
        deps.logger.error(
          { err, customerId: principal.customerId },
          'could not store the response of an Idempotency-Key; repeats answer 2002 until the key expires',
        ),
      );
    }
    return res;
  };
}

/**
 * After a failed first try, about a minute of further tries to free a key: long enough for a
 * database restart (the usual reason both the request and the first try failed).
 */
export const RELEASE_RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

/**
 * Frees the key of a request that failed, so that a repeat runs it again. Until the key is free,
 * repeats hear "in progress", and only after ABANDONED_AFTER_MS may one take the key over: so when
 * the database cannot be reached, the freeing goes on in the background, on `retryDelaysMs`, while
 * the request answers with its own error at once. `onGiveUp` hears the last failure.
 */
export async function freeKey(
  release: () => Promise<void>,
  retryDelaysMs: readonly number[],
  onGiveUp: (err: unknown) => void,
): Promise<void> {
  try {
    await release();
  } catch (err) {
    const retry = (attempt: number, lastErr: unknown) => {
      const delay = retryDelaysMs[attempt];
      if (delay === undefined) return onGiveUp(lastErr);
      setTimeout(() => release().catch((next: unknown) => retry(attempt + 1, next)), delay).unref();
    };
    retry(0, err);
  }
}
