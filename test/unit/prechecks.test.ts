/** The pure rules of shop pre-checks: the quota day and its reset, and the result's normalization. */
import {
  flattenIssues,
  isTerminalPrecheck,
  normalizeCheckStatus,
  precheckStatusOf,
  quotaDayOf,
  quotaResetAt,
  secondsUntilQuotaReset,
  verdictReason,
} from '../../core/publishing/prechecks';

describe('the daily quota clock (UTC)', () => {
  it('counts a pre-check against the UTC day, whatever the local time zone', () => {
    expect(quotaDayOf(new Date('2026-11-22T23:59:59.999Z'))).toBe('2026-11-22');
    expect(quotaDayOf(new Date('2026-11-23T00:00:00.000Z'))).toBe('2026-11-23');
  });

  it('resets at the next UTC midnight', () => {
    expect(quotaResetAt(new Date('2026-11-22T13:45:10.250Z')).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(quotaResetAt(new Date('2026-11-22T00:00:00.000Z')).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(quotaResetAt(new Date('2026-12-31T23:00:00.000Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('answers Retry-After in whole seconds rounded up, at least 1', () => {
    expect(secondsUntilQuotaReset(new Date('2026-11-22T23:00:00.000Z'))).toBe(3600);
    expect(secondsUntilQuotaReset(new Date('2026-11-22T23:59:58.500Z'))).toBe(2);
    expect(secondsUntilQuotaReset(new Date('2026-11-22T23:59:59.999Z'))).toBe(1);
    expect(secondsUntilQuotaReset(new Date('2026-11-22T00:00:00.000Z'))).toBe(86_400);
  });
});

describe('normalizeCheckStatus', () => {
  it.each([
    ['SUCCESS', 'passed'],
    ['success', 'passed'],
    ['FAIL', 'failed'],
    ['FAILED', 'failed'],
    ['PROCESSING', null],
    ['QUEUED', null],
    ['', null],
    [undefined, null],
  ])('%s is %s', (official, verdict) => {
    expect(normalizeCheckStatus(official)).toBe(verdict);
  });
});

describe('precheckStatusOf', () => {
  it('passes only when both dimensions passed', () => {
    expect(precheckStatusOf('passed', 'passed')).toBe('passed');
  });
  it('fails when either failed, once both are known', () => {
    expect(precheckStatusOf('failed', 'passed')).toBe('failed');
    expect(precheckStatusOf('passed', 'failed')).toBe('failed');
    expect(precheckStatusOf('failed', 'failed')).toBe('failed');
  });
  it('keeps processing while either is still being checked', () => {
    expect(precheckStatusOf(null, null)).toBe('processing');
    expect(precheckStatusOf('failed', null)).toBe('processing');
    expect(precheckStatusOf(null, 'passed')).toBe('processing');
  });
  it('names the terminal statuses', () => {
    expect(['passed', 'failed', 'service_error'].every((s) => isTerminalPrecheck(s as never))).toBe(true);
    expect(isTerminalPrecheck('submitted')).toBe(false);
    expect(isTerminalPrecheck('processing')).toBe(false);
  });
});

describe('issues and reasons', () => {
  it('flattens both dimensions into one list, each issue tagged', () => {
    expect(
      flattenIssues({
        violation: [{ risk: 'Misleading Content', suggestions: 'Show it as it is' }],
        quality: [{ code: 'LOW_RESOLUTION', suggestions: '720p' }],
      }),
    ).toEqual([
      { dimension: 'violation', risk: 'Misleading Content', suggestions: 'Show it as it is' },
      { dimension: 'quality', code: 'LOW_RESOLUTION', suggestions: '720p' },
    ]);
    expect(flattenIssues({})).toEqual([]);
  });
  it('names the failed dimensions', () => {
    expect(verdictReason('passed', 'passed')).toBeNull();
    expect(verdictReason('failed', 'passed')).toMatch(/violation check failed/);
    expect(verdictReason('passed', 'failed')).toMatch(/quality check failed/);
    expect(verdictReason('failed', 'failed')).toMatch(/violation and quality checks failed/);
  });
});
