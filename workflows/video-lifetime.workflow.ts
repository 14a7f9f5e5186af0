/**
 * One per video track record (`video-expiry-<videoId>`): a durable timer to the moment its URL
 * expires, then the record is expired and its file removed. A soft delete signals the end early;
 * the same activity then runs at once (it is idempotent, so the delete's own removal is harmless).
 */
import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { VIDEO_LIFETIME_END_SIGNAL, type VideoLifetimeInput } from './shared';

const { expireVideoFile } = proxyActivities<Activities>({
  // A status update and a file removal: quick, and safe to repeat until the database is back.
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const endLifetimeSignal = defineSignal(VIDEO_LIFETIME_END_SIGNAL);

export async function videoLifetimeWorkflow(input: VideoLifetimeInput): Promise<void> {
  let ended = false;
  setHandler(endLifetimeSignal, () => {
    ended = true;
  });
  // Workflow time is deterministic; a timer of at least 1 ms even when the moment has passed.
  await condition(() => ended, Math.max(1, input.expiresAtMs - Date.now()));
  await expireVideoFile({ videoId: input.videoId });
}
