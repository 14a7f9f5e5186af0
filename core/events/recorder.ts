/**
 * Stores events and hands each to its deliveries: one delivery workflow per (event, endpoint)
 * whose patterns match, started idempotently by workflow id. Ingestion calls it before answering
 * the platform, so a failure to start deliveries makes the platform push again, and a repeated
 * push finds the event stored and starts whatever had not started: nothing is lost on the way.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy, type Client } from '@temporalio/client';
import type { Db } from '../db/client';
import { insertDelivery, insertEvent, type DeliveryRow, type EventRow, type NewEvent } from '../db/repositories/events';
import { listLiveEndpoints } from '../db/repositories/webhook-endpoints';
import { newId } from '../ids';
import { workflowIds } from '../temporal/workflow-ids';
import type { WebhookDeliveryInput } from '../../workflows/shared';
import { patternMatches } from './event-types';
import { workSearchAttributes } from '../temporal/search-attributes';

export interface DeliverySettings {
  taskQueue: string;
  /** Pauses between attempts; the delivery fails after the last. */
  retryScheduleMs: number[];
  attemptTimeoutMs: number;
}

export class EventRecorder {
  constructor(private readonly deps: { db: Db; temporalClient: () => Promise<Client>; delivery: DeliverySettings }) {}

  /** Stores the event once (by its source key) and makes sure its deliveries are under way. */
  async record(input: NewEvent): Promise<{ event: EventRow; created: boolean; deliveries: DeliveryRow[] }> {
    const { event, created } = await insertEvent(this.deps.db, input);
    const deliveries = await this.fanOut(event, { reason: 'initial' });
    return { event, created, deliveries };
  }

  /**
   * Stores an event addressed to one endpoint (the test event) and starts its only delivery, whatever
   * the endpoint's patterns. Undefined when the endpoint is gone: the event is then logged undelivered.
   */
  async recordFor(endpointId: string, input: NewEvent): Promise<{ event: EventRow; delivery: DeliveryRow | undefined }> {
    const { event } = await insertEvent(this.deps.db, input);
    const [delivery] = await this.fanOut(event, { reason: 'initial', endpointId });
    return { event, delivery };
  }

  /**
   * Starts deliveries of a stored event: to every live, enabled endpoint whose patterns match, or
   * to one endpoint. Initial deliveries have fixed ids (starting them again is a no-op); each
   * redelivery is new.
   */
  async fanOut(event: EventRow, opts: { reason: 'initial' | 'redeliver'; endpointId?: string }): Promise<DeliveryRow[]> {
    const endpoints = (await listLiveEndpoints(this.deps.db, event.customerId)).filter((e) =>
      opts.endpointId ? e.id === opts.endpointId : !e.disabledAt && e.eventTypes.some((p) => patternMatches(p, event.type)),
    );
    // In parallel: the platform waits for our answer, and each start is a round trip to Temporal.
    return Promise.all(
      endpoints.map(async (endpoint) => {
        const id = newId('dlv');
        const workflowId = opts.reason === 'initial' ? workflowIds.delivery(event.id, endpoint.id) : workflowIds.redelivery(event.id, endpoint.id, id);
        const delivery = await insertDelivery(this.deps.db, { id, eventId: event.id, endpointId: endpoint.id, customerId: event.customerId, reason: opts.reason, workflowId });
        await this.start(delivery);
        return delivery;
      }),
    );
  }

  private async start(delivery: DeliveryRow): Promise<void> {
    const input: WebhookDeliveryInput = {
      deliveryId: delivery.id,
      retryScheduleMs: this.deps.delivery.retryScheduleMs,
      attemptTimeoutMs: this.deps.delivery.attemptTimeoutMs,
    };
    try {
      await (await this.deps.temporalClient()).workflow.start('webhookDeliveryWorkflow', {
        taskQueue: this.deps.delivery.taskQueue,
        workflowId: delivery.workflowId,
        args: [input],
        typedSearchAttributes: workSearchAttributes({ customerId: delivery.customerId, recordId: delivery.id }),
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      });
    } catch (err) {
      // Already ran to its end: the delivery happened (or failed) and is not repeated by a retried push.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}
