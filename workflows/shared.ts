/**
 * Inputs, outputs and names shared by workflows, activities and the code that starts them.
 * Types and constants only: importing runtime code here would pull it into the workflow bundle.
 */

/** Default task queue; TEMPORAL_TASK_QUEUE overrides it for a deployment. */
export const DEFAULT_TASK_QUEUE = 'vps';

export interface HealthCheckInput {
  /** Who asked, for the operator reading the workflow in the UI. */
  requestedBy: string;
}

export interface HealthCheckResult {
  workerIdentity: string;
  /** ISO time read from the worker's own database connection. */
  databaseTime: string;
}

export interface TokenRefreshInput {
  seatId: string;
  /** Refresh this long before the access token expires. */
  marginSeconds: number;
  /** Never check more often than this, whatever the token's expiry says. */
  minIntervalMs: number;
}

/** `retry_later`: the platform refused the refresh for a reason a retry may outlive; `refreshAt` says when. */
export type TokenRefreshOutcome = 'refreshed' | 'not_due' | 'retry_later' | 'unbound' | 'reauthorization_required';

export interface TokenRefreshStep {
  outcome: TokenRefreshOutcome;
  /** Epoch ms at which the next refresh is due; absent when the seat needs no more refreshing. */
  refreshAt?: number;
}

/** The input of the per-delivery workflows that ran before the endpoint queues; kept so they can finish. */
export interface WebhookDeliveryInput {
  deliveryId: string;
  /** Pauses between attempts; after the last pause's attempt fails, the delivery has failed. */
  retryScheduleMs: number[];
  attemptTimeoutMs: number;
}

/** delivered: a 2xx; gone: the receiver answered 410 and its endpoint was disabled; cancelled: the endpoint was deleted or disabled. */
/** busy: the endpoint's concurrency limit is reached; the attempt did not happen and is tried again shortly. */
/** queued: the delivery was handed to its endpoint's queue, which makes its remaining attempts. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'gone' | 'cancelled' | 'failed' | 'busy' | 'queued';

/** One long-running workflow per webhook endpoint drains that endpoint's delivery queue. */
export interface EndpointDeliveriesInput {
  endpointId: string;
  customerId: string;
  /** The queue's figures when the previous run continued as new; absent on a first start. */
  figures?: QueueFigures;
  /** Overrides of the workflow's own limits, for tests; production starts leave them out. */
  limits?: { idleEndMs?: number; maxHistoryEvents?: number };
}

/** Signal: rows became due (coalesced: one signal may stand for any number of rows). */
export const ENDPOINT_DELIVERIES_WAKE_SIGNAL = 'wake';
/** Query: the queue's figures as of the last drain. */
export const ENDPOINT_DELIVERIES_QUERY = 'queue';

/** An endpoint queue's figures, as the console, the CLI and the workflow query show them. */
export interface QueueFigures {
  /** Pending deliveries (due now, waiting for a retry, or in flight). */
  backlog: number;
  /** Pending deliveries due now or earlier, not in flight. */
  due: number;
  /** Deliveries being sent right now. */
  inFlight: number;
  /** ISO time of the oldest due row still waiting; null when none is due. */
  oldestDueAt: string | null;
  /** ISO time of the next row that becomes due; null when nothing is pending. */
  nextDueAt: string | null;
  /** ISO time these figures were measured. */
  measuredAt: string;
}

/** What one drain activity did, and what the queue looks like at its end. */
export interface DrainResult {
  /** Attempts made in this drain. */
  attempted: number;
  /** The endpoint was deleted or disabled: its pending rows are cancelled and the queue ends. */
  closed: boolean;
  /**
   * A notice reached the drain after it last looked (it was ending: its time was up, the worker
   * stopping): the workflow drains again instead of sleeping, or the notice, a deletion's among
   * them, would be lost. Absent in results of earlier releases.
   */
  noticeLeft?: boolean;
  figures: QueueFigures;
}

export interface VideoUploadInput {
  videoId: string;
  /** Largest file accepted, in bytes. */
  maxBytes: number;
  /** Time allowed to fetch a remote source. */
  fetchTimeoutMs: number;
  /**
   * How long the fetch's heartbeats may stop before its attempt counts as dead and a retry resumes
   * it; 30 s when absent (inputs of older starts).
   */
  fetchHeartbeatTimeoutMs?: number;
  /** Validity of a video track URL from the moment the record becomes available. */
  urlTtlMs: number;
}

/** How an upload ended; the record holds the details. */
export interface VideoUploadResult {
  status: 'available' | 'failed' | 'expired';
  failureReason?: string;
  /**
   * Of a failure: the spec's error code a caller still waiting for the upload is answered with
   * (2001 a source the service will not take, 3001/3002 a source or official API in trouble), as
   * the activity that failed classified it; absent when it did not (a timeout of our own).
   */
  failureCode?: number;
}

export interface VideoLifetimeInput {
  videoId: string;
  /** Epoch ms at which the record expires and its file is removed. */
  expiresAtMs: number;
}

/** Sent by a soft delete: the lifetime ends now. */
export const VIDEO_LIFETIME_END_SIGNAL = 'end';

/** How the expiry repair paces itself; configuration, passed in so tests can shorten it. */
export interface VideoExpiryRepairInput {
  /** Pause between two rounds. */
  intervalMs: number;
  /** A record available this long with no confirmed timer, or this long past its expiry, is repaired. */
  graceMs: number;
}

/** Signal, sent by every worker start: the settings it was configured with replace the running ones. */
export const VIDEO_EXPIRY_REPAIR_SETTINGS_SIGNAL = 'settings';

/** What one repair round did. */
export interface VideoExpiryRepairRound {
  /** Records whose lifetime workflow was started, or found running, and is now confirmed. */
  confirmed: number;
  /** Records Temporal did not take a start for this round; the next round tries again. */
  failed: number;
  /** The batch of records without a lifetime was full and every start went through: more wait, and the next round follows at once. */
  more: boolean;
}

/** How a publish workflow paces itself; configuration, passed in so tests can shorten it. */
export interface PublishTimings {
  /** Pause between status polls, and how many polls at that pace. */
  pollIntervalMs: number;
  pollAttempts: number;
  /** The slower polls after those; after the last the outcome is unconfirmed. */
  slowPollScheduleMs: number[];
  /** After publish_complete, how long to wait for the post id. */
  postIdWaitMs: number;
  /**
   * Bounds one activity around an official call: the submit, a status refresh, a reconcile (a
   * little over the upstream client's own timeout).
   */
  submitTimeoutMs: number;
  /** First pause before a submit refused by a transient failure is tried again (5 tries in all). */
  submitRetryInitialMs: number;
}

export interface PublishInput extends PublishTimings {
  recordId: string;
  /** The shop has no list of a creator's posts to reconcile with, and no post id to wait for. */
  track: 'video' | 'shop';
}

/** The normalized statuses (core/db/schema/media.ts), restated as a type the workflow bundle can hold. */
export type PublishStatusValue =
  'submitted' | 'publish_processing' | 'publish_complete' | 'publish_failed' | 'publish_draft_inbox' | 'service_error';

/** Statuses no poll can change: a workflow stops following the record there. */
export const TERMINAL_PUBLISH_STATUSES: readonly PublishStatusValue[] = [
  'publish_complete',
  'publish_failed',
  'publish_draft_inbox',
  'service_error',
];

/**
 * How a workflow ends a publish it cannot take further: service_error (nothing reached the
 * platform), or publish_unconfirmed, which marks the record unconfirmed and leaves its status as
 * last known (the name predates the spec's six statuses and stays for workflows already running).
 */
export type PublishEnd = 'service_error' | 'publish_unconfirmed';

/** What one activity step learned of a publish. */
export interface PublishStep {
  status: PublishStatusValue;
  /** Whether the post id is known (publish_complete only). */
  hasPostId: boolean;
}

export interface SubmitResult {
  step: PublishStep;
  /** The submit may or may not have reached the platform (a timeout, or an earlier try that died): never send again, reconcile. */
  outcomeUnknown: boolean;
}

export interface PrecheckInput {
  precheckId: string;
  /** Pause between polls of the result, and how many before the pre-check ends as service_error. */
  pollIntervalMs: number;
  pollAttempts: number;
}

export type PrecheckOutcome = 'passed' | 'failed' | 'service_error';

/**
 * Every workflow the service starts, by the name the worker registers it under, with its one
 * input and its result. core/temporal/client.ts starts them through this map, so their arguments
 * are type-checked without core importing workflow code; workflows/index.ts checks each exported
 * workflow against it.
 */
export interface WorkflowSignatures {
  healthCheckWorkflow(input: HealthCheckInput): Promise<HealthCheckResult>;
  tokenRefreshWorkflow(input: TokenRefreshInput): Promise<TokenRefreshStep>;
  endpointDeliveriesWorkflow(input: EndpointDeliveriesInput): Promise<'closed' | 'idle'>;
  webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<DeliveryOutcome>;
  videoUploadWorkflow(input: VideoUploadInput): Promise<VideoUploadResult>;
  videoLifetimeWorkflow(input: VideoLifetimeInput): Promise<void>;
  videoExpiryRepairWorkflow(input: VideoExpiryRepairInput): Promise<never>;
  publishWorkflow(input: PublishInput): Promise<PublishStep>;
  precheckWorkflow(input: PrecheckInput): Promise<PrecheckOutcome>;
}
