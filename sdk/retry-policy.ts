/**
 * The spec's retry policy, as one pure function so the client, the CLI and the tests share it:
 * 2002 waits for Retry-After; 3002 and any other answer the service marks `data.retryable: true`
 * (a transient 3001, a 5000 from an instance stopping or the media store briefly out) back off
 * exponentially, no sooner than their Retry-After; each kind at most its `max…Retries` times.
 * 1001 to 2007, a 5000 not marked retryable (a bug) and a 3001 for the material itself (a content
 * violation, a bad request: `retryable: false`) are never retried. A network failure is retried like
 * a transient failure, which is safe because every write carries an Idempotency-Key.
 */
import { VpsApiError, VpsNetworkError } from './errors';

export interface RetryPolicy {
  /** Retries after 2002 (rate limit or quota), each after Retry-After. The spec: 3. */
  maxRateLimitRetries: number;
  /** Retries after 3002, an answer marked retryable or a network failure. The spec: 3. */
  maxTransientRetries: number;
  /** First backoff; doubles per retry, with full jitter over its upper half. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is thrown instead. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRateLimitRetries: 3,
  maxTransientRetries: 3,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

/** Retries already made, per kind. */
export interface RetryCounts {
  rateLimited: number;
  transient: number;
}

export type RetryDecision = { retry: false; why: string } | { retry: true; kind: keyof RetryCounts; delayMs: number };

/**
 * Whether a retry can help: 3002 always; otherwise only when the service marks the answer
 * `data.retryable: true`, and never for 1001 to 2007, which only a changed request passes.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof VpsNetworkError) return true;
  if (!(err instanceof VpsApiError)) return false;
  if (err.code === 3002) return true;
  if (err.code >= 1001 && err.code <= 2007) return false;
  return err.data.retryable === true;
}

export function decideRetry(err: unknown, counts: RetryCounts, policy: RetryPolicy, random: () => number = Math.random): RetryDecision {
  if (err instanceof VpsApiError && err.code === 2002) {
    if (counts.rateLimited >= policy.maxRateLimitRetries) return { retry: false, why: `still limited after ${counts.rateLimited} retries` };
    // Without a Retry-After (never the case for 2002 from this service) a second is a safe floor.
    const delayMs = (err.retryAfterSeconds ?? 1) * 1_000;
    if (delayMs > policy.maxRetryAfterMs)
      return { retry: false, why: `Retry-After ${err.retryAfterSeconds} s is longer than the client waits` };
    return { retry: true, kind: 'rateLimited', delayMs };
  }
  if (isTransient(err)) {
    if (counts.transient >= policy.maxTransientRetries) return { retry: false, why: `still failing after ${counts.transient} retries` };
    const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** counts.transient);
    // The service's own pause: the platform's for a throttled 3001, its own for a 5000 while it restarts.
    const hintSeconds = err instanceof VpsApiError ? err.retryAfterSeconds : undefined;
    const serverHint = (hintSeconds ?? 0) * 1_000;
    if (serverHint > policy.maxRetryAfterMs) return { retry: false, why: `Retry-After ${hintSeconds} s is longer than the client waits` };
    return { retry: true, kind: 'transient', delayMs: Math.max(serverHint, Math.round(ceiling / 2 + (random() * ceiling) / 2)) };
  }
  return {
    retry: false,
    why: err instanceof VpsApiError ? `code ${err.code} is not retried: fix the request first` : 'not a failure a retry can help',
  };
}
