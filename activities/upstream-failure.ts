/**
 * The one place where an upstream failure becomes a Temporal failure: retryable classes
 * (transient, rate limited, timeout, expired token) are retried by the activity's policy, with the
 * platform's Retry-After honoured; everything else is non-retryable with a stable type name that
 * workflows can branch on.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { UpstreamError } from '../core/upstream/failures';

export const UPSTREAM_FAILURE_PREFIX = 'upstream.';

export function upstreamFailureType(err: UpstreamError): string {
  return `${UPSTREAM_FAILURE_PREFIX}${err.failureClass}`;
}

export function asActivityFailure(err: unknown): unknown {
  if (!(err instanceof UpstreamError)) return err;
  const { failure } = err;
  return ApplicationFailure.create({
    message: err.message,
    type: upstreamFailureType(err),
    nonRetryable: !err.retryable,
    details: [{ code: err.code, officialCode: failure.officialCode ?? null, endpoint: failure.endpoint, platform: failure.platform }],
    ...(failure.retryAfterSeconds !== undefined ? { nextRetryDelay: failure.retryAfterSeconds * 1000 } : {}),
    cause: err,
  });
}
