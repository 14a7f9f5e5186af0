/**
 * The official publish statuses, mixed case and partly undocumented, reduced to the spec's
 * normalized values; and the failure categories a record's reason carries, so a caller can decide
 * what to do without parsing the platform's text. One table each.
 */
import type { PublishStatus } from '../db/schema';
import type { FailureClass } from '../upstream/failures';
import { TERMINAL_PUBLISH_STATUSES } from '../../workflows/shared';

/** Official status → normalized status. Anything not named here is still in progress. */
const OFFICIAL_STATUSES: ReadonlyArray<readonly [RegExp, PublishStatus]> = [
  [/^(PUBLISH_COMPLETE|PUBLISHED|SUCCESS)$/i, 'publish_complete'],
  [/^SEND_TO_USER_INBOX$/i, 'publish_draft_inbox'],
  [/FAIL/i, 'publish_failed'],
  [/^(PROCESSING.*|.*_PROCESSING|PENDING|IN_PROGRESS)$/i, 'publish_processing'],
];

export function normalizeOfficialStatus(official: string): PublishStatus {
  return OFFICIAL_STATUSES.find(([pattern]) => pattern.test(official.trim()))?.[1] ?? 'publish_processing';
}

const TERMINAL: ReadonlySet<PublishStatus> = new Set(TERMINAL_PUBLISH_STATUSES);

export function isTerminal(status: PublishStatus): boolean {
  return TERMINAL.has(status);
}

/**
 * The spec's failReason: why a publish_failed record failed, in the platform's words where it gave
 * any (its FAILED status reason, or its refusal of the submit); null for every other status.
 */
export function failReason(record: { status: PublishStatus; reason: string | null }): string | null {
  return record.status === 'publish_failed' ? record.reason : null;
}

export const REASON_CATEGORIES = [
  'retryable',
  'needs_reauthorization',
  'needs_user_action',
  'quota',
  'content_rejected',
  'unconfirmed',
] as const;
export type ReasonCategory = (typeof REASON_CATEGORIES)[number];

/** The category of a refused call, from the upstream client's failure class. */
const CLASS_CATEGORIES: Record<FailureClass, ReasonCategory> = {
  transient: 'retryable',
  rate_limited: 'retryable',
  timeout: 'retryable',
  token_expired: 'needs_reauthorization',
  auth: 'needs_reauthorization',
  permission: 'needs_user_action',
  bad_request: 'needs_user_action',
  not_found: 'needs_user_action',
  content_violation: 'content_rejected',
  quota: 'quota',
};

export function categoryOfFailureClass(failureClass: FailureClass): ReasonCategory {
  return CLASS_CATEGORIES[failureClass];
}

/**
 * The category of a FAILED status's reason (the platform's documented reasons: file checks, pull
 * failures, spam risk, a removed authorization, `internal`). Unknown reasons need a person's look.
 */
const REASON_PATTERNS: ReadonlyArray<readonly [RegExp, ReasonCategory]> = [
  [/^internal$/i, 'retryable'],
  [/auth_removed/i, 'needs_reauthorization'],
  [/too_many_posts|frequency|quota|limit/i, 'quota'],
  [/spam|banned|violation|risk/i, 'content_rejected'],
];

export function categoryOfOfficialReason(reason: string): ReasonCategory {
  return REASON_PATTERNS.find(([pattern]) => pattern.test(reason))?.[1] ?? 'needs_user_action';
}
