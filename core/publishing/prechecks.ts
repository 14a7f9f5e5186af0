/**
 * The pure rules of shop pre-checks: the UTC day a pre-check counts against, when the daily quota
 * resets, and how the official result of each dimension becomes ours. Kept free of I/O so the
 * service, the activities and the unit tests share one reading.
 */
import type { PrecheckStatus } from '../db/schema';

/** One dimension's verdict: passed or failed; null while the shop is still checking it. */
export type DimensionVerdict = 'passed' | 'failed' | null;

const DAY_MS = 86_400_000;

/** The UTC day of an instant, as the quota counts days: YYYY-MM-DD. */
export function quotaDayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The next UTC midnight after an instant: when the daily quota resets. */
export function quotaResetAt(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS + DAY_MS);
}

/** Whole seconds until the quota resets, rounded up and at least 1, for Retry-After. */
export function secondsUntilQuotaReset(at: Date): number {
  return Math.max(1, Math.ceil((quotaResetAt(at).getTime() - at.getTime()) / 1000));
}

/**
 * An official check status (SUCCESS, FAIL, PROCESSING), read case-insensitively. A status the
 * documents do not name is taken as still running unless it says it failed or passed, so a new
 * in-progress value never ends a pre-check early.
 */
export function normalizeCheckStatus(official: string | undefined | null): DimensionVerdict {
  const s = (official ?? '').toUpperCase();
  if (s.includes('FAIL')) return 'failed';
  if (s === 'SUCCESS' || s === 'PASS' || s === 'PASSED') return 'passed';
  return null;
}

/**
 * The record's status from its two dimensions: failed as soon as both are known and either
 * failed, passed when both passed, processing otherwise. A dimension that failed while the other
 * is still running does not end the pre-check yet: waiting gives the caller both dimensions' issues.
 */
export function precheckStatusOf(
  violation: DimensionVerdict,
  quality: DimensionVerdict,
): Extract<PrecheckStatus, 'processing' | 'passed' | 'failed'> {
  if (violation === null || quality === null) return 'processing';
  return violation === 'failed' || quality === 'failed' ? 'failed' : 'passed';
}

export const TERMINAL_PRECHECK_STATUSES: readonly PrecheckStatus[] = ['passed', 'failed', 'service_error'];

export function isTerminalPrecheck(status: PrecheckStatus): boolean {
  return TERMINAL_PRECHECK_STATUSES.includes(status);
}

/** The official issue lists, in one flat list, each issue tagged with its dimension. */
export interface OfficialIssues {
  violation?: ReadonlyArray<Record<string, unknown>>;
  quality?: ReadonlyArray<Record<string, unknown>>;
}

export function flattenIssues(official: OfficialIssues): Record<string, unknown>[] {
  const tag = (dimension: 'violation' | 'quality', list: ReadonlyArray<Record<string, unknown>> | undefined) =>
    (list ?? []).map((issue) => ({ dimension, ...issue }));
  return [...tag('violation', official.violation), ...tag('quality', official.quality)];
}

/** The reason of a pre-check the shop judged, naming the failed dimensions. */
export function verdictReason(violation: DimensionVerdict, quality: DimensionVerdict): string | null {
  const failed = [violation === 'failed' ? 'violation' : undefined, quality === 'failed' ? 'quality' : undefined].filter(Boolean);
  if (failed.length === 0) return null;
  return `the shop's ${failed.join(' and ')} check${failed.length > 1 ? 's' : ''} failed; see issues for its suggestions`;
}
