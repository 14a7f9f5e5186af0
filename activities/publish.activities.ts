/**
 * The side effects of a publish: the one official submit, status refreshes, the reconciliation of
 * an unknown outcome against the account's posts, and the record's end. Every change goes through
 * core/publishing/records.ts, which also logs the status events.
 */
import { ApplicationFailure } from '@temporalio/activity';
import * as records from '../core/db/repositories/publish-records';
import type { PublishRecordRow } from '../core/db/repositories/publish-records';
import {
  applyChange,
  recordAccessToken,
  refreshFromPlatform,
  SeatUnavailableError,
  type PublishRecordDeps,
} from '../core/publishing/records';
import { categoryOfFailureClass, isTerminal } from '../core/publishing/status';
import { UpstreamError } from '../core/upstream/failures';
import { listVideos } from '../core/upstream/vplat/insights';
import { publishPhoto, publishVideo, type PhotoPublishRequest, type VideoPublishRequest } from '../core/upstream/vplat/publishing';
import { postVideo, type PostVideoBody } from '../core/upstream/shop/content';
import { releaseFileFromPublish } from '../core/db/repositories/videos';
import type { PublishEnd, PublishStep, SubmitResult } from '../workflows/shared';
import type { Logger } from '../core/logger';

export function stepOf(row: PublishRecordRow): PublishStep {
  return { status: row.status, hasPostId: row.postId !== null };
}

/** Posts created this long before the submit started still count as its result (clock skew). */
const RECONCILE_SKEW_MS = 60_000;

export function createPublishActivities(deps: PublishRecordDeps & { logger: Logger }) {
  const load = async (recordId: string): Promise<PublishRecordRow> => {
    const row = await records.findPublishRecord(deps.db, recordId);
    // A workflow without its record is a wiring bug; retrying cannot create the row.
    if (!row) throw ApplicationFailure.nonRetryable(`publish record ${recordId} does not exist`, 'publish.record_missing');
    return row;
  };

  /** The seat cannot act for the record's account any more: the publish ends here, with the reason. */
  const seatGone = (row: PublishRecordRow, err: SeatUnavailableError) =>
    applyChange(deps, row, {
      status: 'publish_failed',
      reason: `${err.message}; connect the account again, then publish again`,
      reasonCategory: 'needs_reauthorization',
    });

  /** The one official call that creates the post; its handle is the record's shareId. */
  const sendOnce = async (row: PublishRecordRow, accessToken: string): Promise<string> => {
    if (row.track === 'shop') return (await postVideo(deps.upstream.shop, accessToken, row.request as unknown as PostVideoBody)).video.id;
    const sent =
      row.kind === 'video'
        ? await publishVideo(deps.upstream.vplat, accessToken, row.request as unknown as VideoPublishRequest)
        : await publishPhoto(deps.upstream.vplat, accessToken, row.request as unknown as PhotoPublishRequest);
    return sent.share_id;
  };

  const releaseFile = async (row: PublishRecordRow): Promise<void> => {
    if (row.track === 'shop' && row.videoId) await releaseFileFromPublish(deps.db, row.videoId, row.id);
  };

  return {
    async submitPublish(input: { recordId: string }): Promise<SubmitResult> {
      const row = await load(input.recordId);
      if (row.shareId || isTerminal(row.status)) return { step: stepOf(row), outcomeUnknown: false };
      // Claimed before sending: a retry after a worker died mid-call finds the claim and reconciles.
      if (!(await records.claimSubmit(deps.db, row.id))) return { step: stepOf(row), outcomeUnknown: true };
      let accessToken: string;
      try {
        accessToken = await recordAccessToken(deps, row);
      } catch (err) {
        if (err instanceof SeatUnavailableError) return { step: stepOf(await seatGone(row, err)), outcomeUnknown: false };
        throw err;
      }
      let shareId: string;
      try {
        shareId = await sendOnce(row, accessToken);
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        // No answer in time: the platform may have accepted it. Sending again could post twice.
        if (err.failureClass === 'timeout') {
          deps.logger.warn({ recordId: row.id }, 'publish submit timed out: its outcome is unknown, so it is reconciled, never resent');
          return { step: stepOf(row), outcomeUnknown: true };
        }
        if (err.retryable) {
          // The platform answered with a refusal, so nothing was created: the next try may send.
          await records.releaseSubmit(deps.db, row.id);
          throw err;
        }
        const failed = await applyChange(deps, row, {
          status: 'publish_failed',
          reason: err.message,
          reasonCategory: categoryOfFailureClass(err.failureClass),
        });
        // Refused outright, the post did not consume the shop's file id: a corrected post may use it.
        await releaseFile(row);
        return { step: stepOf(failed), outcomeUnknown: false };
      }
      const submitted = await applyChange(deps, row, { shareId, submittedAt: new Date() });
      return { step: stepOf(submitted), outcomeUnknown: false };
    },

    async refreshPublish(input: { recordId: string }): Promise<PublishStep> {
      const row = await load(input.recordId);
      try {
        return stepOf(await refreshFromPlatform(deps, row));
      } catch (err) {
        if (err instanceof SeatUnavailableError) return stepOf(await seatGone(row, err));
        throw err;
      }
    },

    /**
     * Looks for the post among the account's latest posts: created after the submit started, with
     * the same caption and media type. Found, the publish is complete with that post id.
     */
    async reconcilePublish(input: { recordId: string }): Promise<PublishStep> {
      const row = await load(input.recordId);
      if (isTerminal(row.status)) return stepOf(row);
      let accessToken: string;
      try {
        accessToken = await recordAccessToken(deps, row);
      } catch (err) {
        if (err instanceof SeatUnavailableError) return stepOf(await seatGone(row, err));
        throw err;
      }
      const since = (row.submitStartedAt ?? row.createdAt).getTime() - RECONCILE_SKEW_MS;
      const postInfo = (row.request.post_info ?? {}) as { caption?: string };
      const caption = postInfo.caption ?? '';
      const page = await listVideos(deps.upstream.vplat, accessToken, {
        business_id: row.accountId,
        fields: ['item_id', 'caption', 'create_time', 'media_type'],
        max_count: 20,
      });
      const found = page.videos.find(
        (v) =>
          Number(v.create_time ?? 0) * 1000 >= since &&
          (v.caption ?? '') === caption &&
          (v.media_type ?? 'VIDEO') === (row.kind === 'photo' ? 'PHOTO' : 'VIDEO'),
      )?.item_id;
      if (!found) return stepOf(row);
      const complete = await applyChange(deps, row, {
        status: 'publish_complete',
        postId: found,
        reason: "confirmed from the account's posts; the platform gave no share id",
        reasonCategory: null,
      });
      return stepOf(complete);
    },

    /** Ends a publish the workflow could not take further: service_error, or unconfirmed at its last known status. */
    async endPublish(input: { recordId: string; status: PublishEnd; reason: string }): Promise<PublishStep> {
      const row = await load(input.recordId);
      if (isTerminal(row.status) || row.unconfirmedAt) return stepOf(row);
      // A submit claim still stands when a try failed after it was made and before its outcome was
      // written (the database went away for every retry, say): that try may have reached the
      // platform, so the publish cannot be called a service error, which tells the client to send
      // it again. It ends unconfirmed instead, and keeps its file id.
      const claimStands = !!row.submitStartedAt && !row.shareId;
      const failed = input.status === 'service_error' && !claimStands;
      const ended = await applyChange(
        deps,
        row,
        failed
          ? { status: 'service_error', reason: input.reason, reasonCategory: 'retryable' }
          : {
              unconfirmedAt: new Date(),
              reason:
                input.status === 'service_error'
                  ? `${input.reason}; an earlier try may have reached the platform: check the account before publishing again`
                  : input.reason,
              reasonCategory: 'unconfirmed',
            },
      );
      // Every try was refused with an answer (no claim is left standing): the file id is unused.
      if (failed && !row.shareId) await releaseFile(row);
      return stepOf(ended);
    },
  };
}
