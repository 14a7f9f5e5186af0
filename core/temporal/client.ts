/**
 * Every start and signal of a workflow from outside workflow code. Each helper owns what makes the
 * start right: the task queue, the workflow id (workflows/workflow-ids.ts, the idempotency key),
 * the search attributes an operator finds the work by, and the conflict and reuse policies. The
 * arguments are typed by WorkflowSignatures (workflows/shared.ts), which workflows/index.ts checks
 * every registered workflow against, so no workflow is started by a bare name anywhere else.
 */
import {
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  ENDPOINT_DELIVERIES_WAKE_SIGNAL,
  VIDEO_EXPIRY_REPAIR_SETTINGS_SIGNAL,
  VIDEO_LIFETIME_END_SIGNAL,
  type HealthCheckInput,
  type PrecheckInput,
  type PublishInput,
  type TokenRefreshInput,
  type VideoExpiryRepairInput,
  type VideoLifetimeInput,
  type VideoUploadInput,
  type WorkflowSignatures,
} from '../../workflows/shared';
import { workflowIds } from '../../workflows/workflow-ids';
import { workSearchAttributes } from './search-attributes';

type Signature<K extends keyof WorkflowSignatures> = WorkflowSignatures[K];

/** The record a workflow works on, as operators search for it: its customer, seat and id. */
interface WorkOf {
  id: string;
  customerId: string;
  seatId: string | null;
}

const attributesOf = (work: WorkOf) => workSearchAttributes({ customerId: work.customerId, seatId: work.seatId, recordId: work.id });

/** A health check is its own run (a fresh id); one that no worker picks up within `timeoutMs` ends. */
export function startHealthCheck(client: Client, taskQueue: string, run: { nonce: string; timeoutMs: number; input: HealthCheckInput }) {
  return client.workflow.start<Signature<'healthCheckWorkflow'>>('healthCheckWorkflow', {
    taskQueue,
    workflowId: workflowIds.healthCheck(run.nonce),
    args: [run.input],
    // No worker within this time means the worker role is down: the run ends instead of waiting.
    workflowExecutionTimeout: run.timeoutMs,
  });
}

/** A seat's refresh: a running one is kept, a finished one (unbound, or needing re-authorization) is started afresh. */
export async function startTokenRefresh(client: Client, taskQueue: string, input: TokenRefreshInput): Promise<void> {
  await client.workflow.start<Signature<'tokenRefreshWorkflow'>>('tokenRefreshWorkflow', {
    taskQueue,
    workflowId: workflowIds.tokenRefresh(input.seatId),
    args: [input],
    typedSearchAttributes: workSearchAttributes({ seatId: input.seatId, recordId: input.seatId }),
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
}

/** Wakes an endpoint's delivery queue, starting its workflow when it has ended (the next rows start it again). */
export async function wakeEndpointDeliveries(
  client: Client,
  taskQueue: string,
  queue: { customerId: string; endpointId: string },
): Promise<void> {
  await client.workflow.signalWithStart<Signature<'endpointDeliveriesWorkflow'>, []>('endpointDeliveriesWorkflow', {
    taskQueue,
    workflowId: workflowIds.endpointDeliveries(queue.endpointId),
    args: [{ endpointId: queue.endpointId, customerId: queue.customerId }],
    signal: ENDPOINT_DELIVERIES_WAKE_SIGNAL,
    signalArgs: [],
    typedSearchAttributes: workSearchAttributes({ customerId: queue.customerId, recordId: queue.endpointId }),
  });
}

/** The durable part of an upload (a fetch, a shop hand-off): a retried call finds the running upload rather than starting a second one. */
export function startVideoUpload(
  client: Client,
  taskQueue: string,
  video: WorkOf,
  input: VideoUploadInput,
): Promise<WorkflowHandle<Signature<'videoUploadWorkflow'>>> {
  return client.workflow.start<Signature<'videoUploadWorkflow'>>('videoUploadWorkflow', {
    taskQueue,
    workflowId: workflowIds.videoUpload(video.id),
    args: [input],
    typedSearchAttributes: attributesOf(video),
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
}

/**
 * Starts the record's lifetime with the time it has left (a record already past its expiry is
 * expired at once), or finds the one running. A run that ended without expiring the record (an
 * operator terminated it) is started afresh: the record is still available, so it needs one.
 */
export async function startVideoLifetime(client: Client, taskQueue: string, video: WorkOf & { expiresAt: Date | null }): Promise<void> {
  if (!video.expiresAt) throw new Error(`video ${video.id} has no expiry to keep`);
  const input: VideoLifetimeInput = { videoId: video.id, expiresAtMs: video.expiresAt.getTime() };
  await client.workflow.start<Signature<'videoLifetimeWorkflow'>>('videoLifetimeWorkflow', {
    taskQueue,
    workflowId: workflowIds.videoLifetime(video.id),
    args: [input],
    typedSearchAttributes: attributesOf(video),
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
}

/** Ends a video's lifetime early (the record was deleted); one that already ended, or never started, needs nothing. */
export async function endVideoLifetime(client: Client, videoId: string): Promise<void> {
  try {
    await client.workflow
      .getHandle<Signature<'videoLifetimeWorkflow'>>(workflowIds.videoLifetime(videoId))
      .signal(VIDEO_LIFETIME_END_SIGNAL);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/**
 * Starts the task queue's expiry repair, or hands the running one these settings (a signal, so a
 * changed interval takes effect without restarting it). Every worker calls it at start; one runs.
 */
export async function startVideoExpiryRepair(client: Client, taskQueue: string, settings: VideoExpiryRepairInput): Promise<void> {
  await client.workflow.signalWithStart<Signature<'videoExpiryRepairWorkflow'>, [VideoExpiryRepairInput]>('videoExpiryRepairWorkflow', {
    taskQueue,
    workflowId: workflowIds.videoExpiryRepair(taskQueue),
    args: [settings],
    signal: VIDEO_EXPIRY_REPAIR_SETTINGS_SIGNAL,
    signalArgs: [settings],
    typedSearchAttributes: workSearchAttributes({ recordId: taskQueue }),
  });
}

/**
 * A publish record's workflow, under the id stored on the record. A running one is kept; one that
 * ran to its end is never started again (the caller sees WorkflowExecutionAlreadyStartedError).
 */
export async function startPublish(
  client: Client,
  taskQueue: string,
  record: WorkOf & { workflowId: string },
  input: PublishInput,
): Promise<void> {
  await client.workflow.start<Signature<'publishWorkflow'>>('publishWorkflow', {
    taskQueue,
    workflowId: record.workflowId,
    args: [input],
    typedSearchAttributes: attributesOf(record),
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

/** A pre-check record's workflow, under the id stored on the record; a retried call finds the running one. */
export async function startPrecheck(
  client: Client,
  taskQueue: string,
  precheck: WorkOf & { workflowId: string },
  input: PrecheckInput,
): Promise<void> {
  await client.workflow.start<Signature<'precheckWorkflow'>>('precheckWorkflow', {
    taskQueue,
    workflowId: precheck.workflowId,
    args: [input],
    typedSearchAttributes: attributesOf(precheck),
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
}
