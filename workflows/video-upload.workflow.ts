/**
 * One per upload that needs durable work (`upload-<videoId>`): a remote source is fetched into the
 * media store (streamed, capped, heartbeating), a shop track file is handed to the shop's upload
 * API for a file id, and a video track record becomes available with its lifetime started. Every
 * failure lands on the record (status failed, failureReason) before the workflow ends.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { workflowIds } from './workflow-ids';
import type { VideoLifetimeInput, VideoUploadInput, VideoUploadResult } from './shared';
import { videoLifetimeWorkflow } from './video-lifetime.workflow';

/**
 * Types the activities mark as final (VIDEO_REJECTED in activities/videos.activities.ts, restated:
 * workflows import activities as types only).
 */
const NON_RETRYABLE = ['video.rejected'];

/** Database steps: quick, idempotent, retried until the database is back. */
const RECORD_STEP_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: NON_RETRYABLE },
} as const;

const records = proxyActivities<Activities>(RECORD_STEP_OPTIONS);

/**
 * The quick database steps run by the worker within the workflow task that asks for them: no trip
 * through the task queue and no workflow task of their own to take up the result, which made a
 * remote upload's answer about 70 ms later (bench/README.md). Runs started before this change
 * recorded them as activities and replay so (the patch below). A retry due more than 10 s later
 * waits on a timer, so a database that stays away does not hold the workflow task (nor a worker's
 * shutdown). failVideoUpload stays an activity: it waits for the media store to come back.
 */
const localRecords = proxyLocalActivities<Activities>({ ...RECORD_STEP_OPTIONS, localRetryThreshold: '10 seconds' });

/** The patch that moved the database steps into local activities. */
const LOCAL_RECORD_STEPS = 'video-upload-local-record-steps';

const shop = proxyActivities<Activities>({
  // A 100 MB file over a slow link; the activity's own upload timeout is 10 minutes. Uploading the
  // same file twice costs only an unused file id, so a failed hand-off is simply tried again.
  startToCloseTimeout: '11 minutes',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

export async function videoUploadWorkflow(input: VideoUploadInput): Promise<VideoUploadResult> {
  const { videoId } = input;
  const fetcher = proxyActivities<Activities>({
    // The fetch has its own timeout; this bounds a stuck worker a little beyond it.
    startToCloseTimeout: input.fetchTimeoutMs + 60_000,
    // The activity heartbeats at least every 5 s (more often under a shorter timeout) whether or
    // not bytes arrive; a crashed worker's fetch resumes elsewhere once this passes. Replay compares
    // an activity's type and id, not its timeouts, and inputs without it keep 30 s: no patch needed.
    heartbeatTimeout: input.fetchHeartbeatTimeoutMs ?? '30 seconds',
    // Network errors and 5xx: a few tries, then the record fails with the last reason.
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '10 seconds',
      maximumAttempts: 3,
      nonRetryableErrorTypes: NON_RETRYABLE,
    },
  });
  const steps = patched(LOCAL_RECORD_STEPS) ? localRecords : records;
  try {
    const plan = await steps.prepareVideoUpload({ videoId });
    if (!plan.active) return { status: 'expired' };
    if (
      plan.needsFetch &&
      !(await fetcher.fetchVideoSource({ videoId, maxBytes: input.maxBytes, timeoutMs: input.fetchTimeoutMs })).stored
    ) {
      return { status: 'expired' };
    }
    if (plan.track === 'shop') {
      const { fileId } = await shop.handOffToShop({ videoId });
      return fileId ? { status: 'available' } : { status: 'expired' };
    }
    const { expiresAtMs } = await steps.makeVideoAvailable({ videoId, urlTtlMs: input.urlTtlMs });
    if (expiresAtMs === undefined) return { status: 'expired' };
    const lifetime: VideoLifetimeInput = { videoId, expiresAtMs };
    try {
      // The lifetime outlives this workflow by days: abandoned, it runs on after the upload ends.
      await startChild(videoLifetimeWorkflow, {
        workflowId: workflowIds.videoLifetime(videoId),
        args: [lifetime],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // The same customer, seat and video as this upload: an operator finds both by one query.
        typedSearchAttributes: workflowInfo().typedSearchAttributes,
      });
    } catch (err) {
      // The workers' expiry repair found the record first (this upload was slow to get here) and
      // started the same lifetime: one timer runs, which is all the upload needed. Catching emits
      // no command, so histories recorded before this catch replay unchanged.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    return { status: 'available' };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const failureReason = reasonOf(err);
    await records.failVideoUpload({ videoId, reason: failureReason });
    const failureCode = codeOf(err);
    return { status: 'failed', failureReason, ...(failureCode === undefined ? {} : { failureCode }) };
  }
}

function reasonOf(err: ActivityFailure): string {
  const cause = err.cause;
  if (cause instanceof ApplicationFailure && cause.message) return cause.message;
  return cause?.message || 'the upload failed';
}

/** The spec code the activity put in its failure's details (activities/videos.activities.ts, activities/upstream-failure.ts). */
function codeOf(err: ActivityFailure): number | undefined {
  const cause = err.cause;
  if (!(cause instanceof ApplicationFailure)) return undefined;
  const code = (cause.details?.[0] as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}
