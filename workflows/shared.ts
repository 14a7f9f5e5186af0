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

export type TokenRefreshOutcome = 'refreshed' | 'not_due' | 'unbound' | 'reauthorization_required';

export interface TokenRefreshStep {
  outcome: TokenRefreshOutcome;
  /** Epoch ms at which the next refresh is due; absent when the seat needs no more refreshing. */
  refreshAt?: number;
}

export interface WebhookDeliveryInput {
  deliveryId: string;
  /** Pauses between attempts; after the last pause's attempt fails, the delivery has failed. */
  retryScheduleMs: number[];
  attemptTimeoutMs: number;
}

/** delivered: a 2xx; gone: the receiver answered 410 and its endpoint was disabled; cancelled: the endpoint was deleted or disabled. */
/** busy: the endpoint's concurrency limit is reached; the attempt did not happen and is tried again shortly. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'gone' | 'cancelled' | 'failed' | 'busy';
