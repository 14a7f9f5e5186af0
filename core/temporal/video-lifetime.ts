/**
 * Starting the workflows that keep a video track record's 7-day lifetime: the lifetime itself
 * (a durable timer to the record's expiry), started by an upload and, where that start was
 * missed, by the workers' expiry repair; and the repair, one per task queue, started by every
 * worker. Both are idempotent by workflow id: a repair racing an upload's start makes one timer.
 */
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { VIDEO_EXPIRY_REPAIR_SETTINGS_SIGNAL, type VideoExpiryRepairInput, type VideoLifetimeInput } from '../../workflows/shared';
import type { LifetimeCandidate } from '../db/repositories/videos';
import { workflowIds } from './workflow-ids';
import { workSearchAttributes } from './search-attributes';

/**
 * Starts the record's lifetime with the time it has left (a record already past its expiry is
 * expired at once), or finds the one running. A run that ended without expiring the record (an
 * operator terminated it) is started afresh: the record is still available, so it needs one.
 */
export async function startVideoLifetime(client: Client, taskQueue: string, row: LifetimeCandidate): Promise<void> {
  if (!row.expiresAt) throw new Error(`video ${row.id} has no expiry to keep`);
  const input: VideoLifetimeInput = { videoId: row.id, expiresAtMs: row.expiresAt.getTime() };
  await client.workflow.start('videoLifetimeWorkflow', {
    taskQueue,
    workflowId: workflowIds.videoLifetime(row.id),
    args: [input],
    typedSearchAttributes: workSearchAttributes({ customerId: row.customerId, seatId: row.seatId, recordId: row.id }),
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
}

/**
 * Starts the task queue's expiry repair, or hands the running one these settings (a signal, so a
 * changed interval takes effect without restarting it). Every worker calls it at start; one runs.
 */
export async function startVideoExpiryRepair(client: Client, taskQueue: string, settings: VideoExpiryRepairInput): Promise<void> {
  await client.workflow.signalWithStart('videoExpiryRepairWorkflow', {
    taskQueue,
    workflowId: workflowIds.videoExpiryRepair(taskQueue),
    args: [settings],
    signal: VIDEO_EXPIRY_REPAIR_SETTINGS_SIGNAL,
    signalArgs: [settings],
    typedSearchAttributes: workSearchAttributes({ recordId: taskQueue }),
  });
}
