/**
 * The spec's retry policy (Errors, rule 4 and the limits table) as the SDK decides it: 2002 waits
 * for Retry-After, 3002 and a transient 3001 back off exponentially, each at most 3 times, and
 * nothing a changed request must fix is ever retried.
 */
import { ERROR_CODES } from '../../core/errors';
import { DEFAULT_RETRY_POLICY, decideRetry, type RetryCounts, type RetryPolicy } from '../../sdk/retry-policy';
import { VpsApiError, VpsNetworkError } from '../../sdk/errors';

const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 10_000 };
const fresh = (): RetryCounts => ({ rateLimited: 0, transient: 0 });
const apiError = (code: number, data: Record<string, unknown> = {}, retryAfterSeconds?: number) =>
  new VpsApiError(code, `code ${code}`, 500, data, retryAfterSeconds, undefined);

/** Decides and counts, as the client does, until the policy stops: the delays it asked for. */
function delaysUntilStop(err: unknown, random = () => 1): number[] {
  const counts = fresh();
  const delays: number[] = [];
  for (let i = 0; i < 10; i++) {
    const decision = decideRetry(err, counts, policy, random);
    if (!decision.retry) return delays;
    counts[decision.kind]++;
    delays.push(decision.delayMs);
  }
  throw new Error('the policy never stopped');
}

describe('decideRetry', () => {
  it("has the spec's defaults: 3 retries of each kind", () => {
    expect(DEFAULT_RETRY_POLICY).toMatchObject({ maxRateLimitRetries: 3, maxTransientRetries: 3 });
  });

  it('waits Retry-After on 2002 and stops after 3 retries', () => {
    expect(delaysUntilStop(apiError(2002, {}, 2))).toEqual([2_000, 2_000, 2_000]);
    const decision = decideRetry(apiError(2002, {}, 2), { rateLimited: 3, transient: 0 }, policy);
    expect(decision).toMatchObject({ retry: false, why: expect.stringContaining('3 retries') });
  });

  it('does not wait for a Retry-After longer than the client is willing to', () => {
    expect(decideRetry(apiError(2002, {}, 11), fresh(), policy)).toMatchObject({
      retry: false,
      why: expect.stringContaining('Retry-After 11 s'),
    });
  });

  it.each([
    ['3002', apiError(3002)],
    ['a 3001 the service marks retryable', apiError(3001, { retryable: true, officialCode: 50000 })],
    ['a 5000 the service marks retryable (an instance stopping, the media store out)', apiError(5000, { retryable: true })],
    ['a network failure', new VpsNetworkError('cannot reach the service')],
  ])('backs off exponentially after %s, at most 3 times', (_, err) => {
    // random() = 1: the top of each jitter range, so the ceiling itself is visible.
    expect(delaysUntilStop(err)).toEqual([100, 200, 400]);
  });

  it('jitters each backoff over the upper half of its ceiling and caps it', () => {
    expect(decideRetry(apiError(3002), fresh(), policy, () => 0)).toEqual({ retry: true, kind: 'transient', delayMs: 50 });
    const late = decideRetry(apiError(3002), { rateLimited: 0, transient: 8 }, { ...policy, maxTransientRetries: 10 }, () => 1);
    expect(late).toEqual({ retry: true, kind: 'transient', delayMs: 1_000 });
  });

  it('keeps rate-limit and transient retries apart: each kind has its own 3', () => {
    expect(decideRetry(apiError(3002), { rateLimited: 3, transient: 0 }, policy)).toMatchObject({ retry: true, kind: 'transient' });
    expect(decideRetry(apiError(2002, {}, 1), { rateLimited: 0, transient: 3 }, policy)).toMatchObject({
      retry: true,
      kind: 'rateLimited',
    });
  });

  it('never retries a 3001 for the material itself (a content violation: retryable false)', () => {
    const violation = apiError(3001, { retryable: false, officialCode: 16011009, platform: 'shop' });
    expect(decideRetry(violation, fresh(), policy)).toMatchObject({ retry: false, why: expect.stringContaining('3001') });
    // A 3001 that says nothing about retrying is not retried blindly either.
    expect(decideRetry(apiError(3001), fresh(), policy).retry).toBe(false);
  });

  it('waits at least the Retry-After of a retryable 5000', () => {
    expect(decideRetry(apiError(5000, { retryable: true }, 1), fresh(), policy, () => 1)).toEqual({
      retry: true,
      kind: 'transient',
      delayMs: 1_000,
    });
  });

  it('never retries a 5000 the service does not mark retryable: a bug is not fixed by asking again', () => {
    expect(decideRetry(apiError(5000), fresh(), policy)).toMatchObject({ retry: false, why: expect.stringContaining('5000') });
    expect(decideRetry(apiError(5000, { retryable: false }, 1), fresh(), policy).retry).toBe(false);
  });

  const neverRetried = Object.keys(ERROR_CODES)
    .map(Number)
    .filter((code) => code >= 1001 && code <= 2007 && code !== 2002);

  it.each(neverRetried)('never retries %i, even marked retryable', (code) => {
    expect(decideRetry(apiError(code, { retryable: true }, 1), fresh(), policy)).toMatchObject({ retry: false });
  });

  it.each([2006, 2007])('never retries the retired code %i either', (code) => {
    expect(decideRetry(apiError(code), fresh(), policy).retry).toBe(false);
  });

  it('does not retry what is not a service failure', () => {
    expect(decideRetry(new TypeError('a programming error'), fresh(), policy)).toMatchObject({ retry: false });
  });
});
