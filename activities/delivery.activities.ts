/**
 * Webhook delivery activities. drainEndpointQueue works one endpoint's queue (endpoint-drain.ts):
 * due rows claimed under a lease, signed POSTs up to the endpoint's in-flight limit over kept-alive
 * connections (webhook-push.ts), outcomes written in batches. The receiver's answer is an outcome,
 * not an activity failure: only a broken database or worker makes Temporal retry the drain, and then
 * the leases and attempt numbers keep the log free of doubles. attemptDelivery and finishDelivery
 * serve the previous release's per-delivery workflows, which now hand their delivery to the queue.
 */
import { Context } from '@temporalio/activity';
import type { SealedBox } from '../core/crypto/sealed-box';
import type { Db } from '../core/db/client';
import { Batcher } from '../core/db/batcher';
import {
  adoptLegacyDelivery,
  claimDueDeliveriesOf,
  queueFigures,
  recordOutcomes,
  type AttemptOutcome,
  type ClaimedDelivery,
  type ClaimRequest,
} from '../core/db/repositories/delivery-queue';
import { findDelivery } from '../core/db/repositories/events';
import { disableEndpoint, type WebhookEndpointRow } from '../core/db/repositories/webhook-endpoints';
import { catalogued } from '../core/events/event-types';
import type { EventRecorder } from '../core/events/recorder';
import type { DeliveryDispatcher } from '../core/temporal/delivery-dispatcher';
import { workflowIds } from '../workflows/workflow-ids';
import type { DeliveryOutcome, DrainResult, QueueFigures } from '../workflows/shared';
import type { Metrics } from '../core/observability/metrics';
import { EndpointDrain } from './endpoint-drain';
import type { DeliveryQueueSettings } from './deps';
import { createWebhookPush } from './webhook-push';

export interface DeliveryActivityDeps {
  db: Db;
  /** Opens the endpoints' signing keys. */
  sealedBox: SealedBox;
  workerIdentity: string;
  /** Local development and tests only: http and private addresses may receive pushes. */
  allowInsecureWebhookUrls: boolean;
  /** An endpoint failing every attempt for this long is disabled. */
  disableEndpointAfterMs: number;
  /** Attempts in flight to one endpoint at most. */
  maxInFlightPerEndpoint: number;
  events: EventRecorder;
  metrics: Metrics;
  dispatcher: DeliveryDispatcher;
  deliveryQueue: DeliveryQueueSettings;
}

/** Outcomes written in one statement at most. */
const MAX_OUTCOME_BATCH = 256;

/** How long an idle outcome writer waits for more outcomes before it writes (the receiver has them already). */
const OUTCOME_GATHER_MS = 5;

/** Drains' claims in one statement at most (each claims up to its endpoint's free slots). */
const MAX_CLAIM_BATCH = 64;

export function createDeliveryActivities(deps: DeliveryActivityDeps) {
  const push = createWebhookPush({ allowInsecure: deps.allowInsecureWebhookUrls, sealedBox: deps.sealedBox });
  // One statement in flight; outcomes that finish meanwhile share the next one, and an idle writer
  // gathers for a few ms first: the pushes of one event to its endpoints end a moment apart, and
  // each took a statement of its own.
  const outcomes = new Batcher<AttemptOutcome, void>(
    async (batch) => {
      await recordOutcomes(deps.db, batch);
      return batch.map(() => undefined);
    },
    { maxBatch: MAX_OUTCOME_BATCH, maxInFlight: 1, stallMs: 5_000, gather: { ms: OUTCOME_GATHER_MS } },
  );
  // The claims of the process's drains that are due together (one notice wakes every endpoint's
  // drain) share a statement: on embedded PGlite each statement costs about 2 ms of its one
  // thread, and a claim per endpoint per notice was the largest share of that thread's work.
  const claims = new Batcher<ClaimRequest, ClaimedDelivery[]>((batch) => claimDueDeliveriesOf(deps.db, batch), {
    maxBatch: MAX_CLAIM_BATCH,
    maxInFlight: 1,
    stallMs: 5_000,
    gather: 'turn',
  });

  /** Disables the endpoint and, the first time, logs service.endpoint.disabled for the customer. */
  const disable = async (endpoint: WebhookEndpointRow, reason: string) => {
    if (!(await disableEndpoint(deps.db, endpoint.id, reason))) return;
    await deps.events.record({
      customerId: endpoint.customerId,
      seatId: null,
      ...catalogued('service.endpoint.disabled'),
      occurredAt: new Date(),
      data: { endpoint_id: endpoint.id, url: endpoint.url, reason },
      sourceKey: `endpoint-disabled:${endpoint.id}:${Date.now()}`,
    });
  };

  /** Puts a delivery of the previous release into its endpoint's queue; undefined when it has ended meanwhile. */
  const adopt = (delivery: { id: string; endpointId: string }, attemptsMade: number) =>
    adoptLegacyDelivery(deps.db, {
      deliveryId: delivery.id,
      attemptsMade,
      queueWorkflowId: workflowIds.endpointDeliveries(delivery.endpointId),
      taskQueue: deps.events.delivery.taskQueue,
    });

  const figuresOf = async (endpointId: string): Promise<QueueFigures> => {
    const f = (await queueFigures(deps.db, [endpointId])).get(endpointId)!;
    return {
      backlog: f.backlog,
      due: f.due,
      inFlight: f.inFlight,
      oldestDueAt: f.oldestDueAt?.toISOString() ?? null,
      nextDueAt: f.nextDueAt?.toISOString() ?? null,
      measuredAt: new Date().toISOString(),
    };
  };

  return {
    /**
     * Drains the endpoint's queue until it has been idle for the linger time or the drain's time is
     * up. A deleted or disabled endpoint's pending rows are cancelled and the queue is closed.
     */
    async drainEndpointQueue(input: { endpointId: string }): Promise<DrainResult> {
      const ctx = Context.current();
      const drain = new EndpointDrain(
        {
          db: deps.db,
          dispatcher: deps.dispatcher,
          metrics: deps.metrics,
          push,
          claim: (request) => claims.call(request),
          record: (outcome) => outcomes.call(outcome),
          disable,
          retryScheduleMs: deps.events.delivery.retryScheduleMs,
          attemptTimeoutMs: deps.events.delivery.attemptTimeoutMs,
          maxInFlight: deps.maxInFlightPerEndpoint,
          disableAfterMs: deps.disableEndpointAfterMs,
          lingerMs: deps.deliveryQueue.lingerMs,
          maxDrainMs: deps.deliveryQueue.maxDrainMs,
        },
        ctx,
        input.endpointId,
        `${deps.workerIdentity}/${ctx.info.workflowExecution?.runId ?? ''}/${ctx.info.activityId}/${ctx.info.attempt}`,
      );
      const closed = await drain.run();
      return {
        attempted: drain.attempted,
        closed,
        ...(drain.noticeLeft ? { noticeLeft: true } : {}),
        figures: await figuresOf(input.endpointId),
      };
    },

    /**
     * The activity of the per-delivery workflows of the previous release. It no longer sends: it
     * hands a pending delivery to its endpoint's queue with the attempts made so far, and its
     * workflow ends; an ended delivery reports how it ended.
     */
    async attemptDelivery(input: { deliveryId: string; attempt: number; timeoutMs: number }): Promise<DeliveryOutcome> {
      const delivery = await findDelivery(deps.db, input.deliveryId);
      if (!delivery) return 'cancelled';
      if (delivery.status === 'pending') {
        if (await adopt(delivery, input.attempt - 1)) return 'queued';
      }
      const ended = (await findDelivery(deps.db, input.deliveryId))!;
      return ended.status === 'succeeded' ? 'delivered' : ended.status === 'failed' ? 'failed' : 'cancelled';
    },

    /** The previous release's workflows call this after their last attempt; the queue owns the row now. */
    async finishDelivery(input: { deliveryId: string; status?: string }): Promise<void> {
      const delivery = await findDelivery(deps.db, input.deliveryId);
      if (delivery?.status === 'pending') await adopt(delivery, delivery.attemptsMade);
    },
  };
}
