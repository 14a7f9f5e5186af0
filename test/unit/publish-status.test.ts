/** Normalizing official publish statuses, the failure categories, and the caption limits. */
import type { PublishRecordRow } from '../../core/db/repositories/publish-records';
import { captionProblem, mentionCount } from '../../core/publishing/caption';
import { changeFromOfficial } from '../../core/publishing/records';
import {
  categoryOfFailureClass,
  categoryOfOfficialReason,
  failReason,
  isTerminal,
  normalizeOfficialStatus,
} from '../../core/publishing/status';

describe('normalizeOfficialStatus', () => {
  it.each([
    ['PROCESSING_DOWNLOAD', 'publish_processing'],
    ['PROCESSING_UPLOAD', 'publish_processing'],
    ['processing', 'publish_processing'],
    ['PUBLISH_COMPLETE', 'publish_complete'],
    ['Published', 'publish_complete'],
    ['SUCCESS', 'publish_complete'],
    ['FAILED', 'publish_failed'],
    ['publish_failed', 'publish_failed'],
    ['FAIL', 'publish_failed'],
    ['SEND_TO_USER_INBOX', 'publish_draft_inbox'],
    ['SOMETHING_NEW', 'publish_processing'],
  ])('%s is %s', (official, normalized) => {
    expect(normalizeOfficialStatus(official)).toBe(normalized);
  });

  it('names the terminal statuses', () => {
    expect(['publish_complete', 'publish_failed', 'publish_draft_inbox', 'service_error'].every((s) => isTerminal(s as never))).toBe(true);
    expect(isTerminal('submitted')).toBe(false);
    expect(isTerminal('publish_processing')).toBe(false);
  });
});

describe('failReason', () => {
  it('is the reason of a publish_failed record, and null for every other status', () => {
    expect(failReason({ status: 'publish_failed', reason: 'frame_rate_check_failed' })).toBe('frame_rate_check_failed');
    for (const status of ['submitted', 'publish_processing', 'publish_complete', 'publish_draft_inbox', 'service_error'] as const) {
      expect(failReason({ status, reason: 'some text' })).toBeNull();
    }
  });
});

describe('failure categories', () => {
  it.each([
    ['internal', 'retryable'],
    ['auth_removed', 'needs_reauthorization'],
    ['spam_risk_too_many_posts', 'quota'],
    ['spam_risk_text', 'content_rejected'],
    ['spam_risk_user_banned_from_posting', 'content_rejected'],
    ['video_pull_failed', 'needs_user_action'],
    ['frame_rate_check_failed', 'needs_user_action'],
  ])('a FAILED status with reason %s is %s', (reason, category) => {
    expect(categoryOfOfficialReason(reason)).toBe(category);
  });

  it('maps refused calls by their failure class', () => {
    expect(categoryOfFailureClass('transient')).toBe('retryable');
    expect(categoryOfFailureClass('auth')).toBe('needs_reauthorization');
    expect(categoryOfFailureClass('content_violation')).toBe('content_rejected');
    expect(categoryOfFailureClass('quota')).toBe('quota');
    expect(categoryOfFailureClass('bad_request')).toBe('needs_user_action');
  });
});

describe('changeFromOfficial', () => {
  const record = { status: 'publish_processing', officialStatus: 'PROCESSING_DOWNLOAD', postId: null } as PublishRecordRow;

  it('reports nothing when nothing changed', () => {
    expect(changeFromOfficial(record, { status: 'PROCESSING_DOWNLOAD' })).toBeUndefined();
  });

  it('takes the first post id with completion, and a late post id as a change of its own', () => {
    expect(changeFromOfficial(record, { status: 'PUBLISH_COMPLETE', post_ids: [] })).toMatchObject({
      status: 'publish_complete',
      postId: null,
    });
    const complete = { ...record, status: 'publish_complete', officialStatus: 'PUBLISH_COMPLETE' } as PublishRecordRow;
    expect(changeFromOfficial(complete, { status: 'PUBLISH_COMPLETE', post_ids: ['7000000000000000001'] })).toMatchObject({
      postId: '7000000000000000001',
    });
  });

  it("keeps the platform's reason of a failure, with its category", () => {
    expect(changeFromOfficial(record, { status: 'FAILED', reason: 'duration_check_failed' })).toMatchObject({
      status: 'publish_failed',
      reason: 'duration_check_failed',
      reasonCategory: 'needs_user_action',
    });
  });
});

describe('caption limits', () => {
  it('counts UTF-16 code units, so an emoji outside the BMP counts 2', () => {
    expect(captionProblem('\u{1F600}'.repeat(1100))).toBeUndefined();
    expect(captionProblem(`${'\u{1F600}'.repeat(1100)}a`)).toMatch(/2200 UTF-16 code units \(got 2201\)/);
    expect(captionProblem('a'.repeat(2200))).toBeUndefined();
  });

  it('counts mentions as @name tokens', () => {
    expect(mentionCount('@a @b.c hello@notamention @d_e')).toBe(3);
    expect(captionProblem(Array.from({ length: 31 }, (_, i) => `@u${i}`).join(' '))).toMatch(/at most 30/);
  });
});
