/**
 * Stores events and enqueues their deliveries in the same transaction (an outbox): one delivery
 * row per live, enabled endpoint whose patterns match. Ingestion answers the platform only after
 * that commit, and makes no Temporal call: the workers learn of the rows from a Postgres
 * notification and wake the endpoint's queue workflow (core/temporal/delivery-dispatcher.ts).
 */
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client';
import { insertEvent, type DeliveryRow, type EventRow, type NewEvent, type Outbox } from '../db/repositories/events';
import { enqueueDeliveries } from '../db/repositories/delivery-queue';
import { listLiveEndpoints } from '../db/repositories/webhook-endpoints';
import { workflowIds } from '../temporal/workflow-ids';
import { patternMatches } from './event-types';

export interface DeliverySettings {
  taskQueue: string;
  /** Pauses between attempts; the delivery fails after the last. */
  retryScheduleMs: number[];
  attemptTimeoutMs: number;
}

export class EventRecorder {
  constructor(private readonly deps: { db: Db; temporalClient: () => Promise<Client>; delivery: DeliverySettings }) {}

  /** The delivery settings the workers' drains follow. */
  get delivery(): DeliverySettings {
    return this.deps.delivery;
  }

  /** The Temporal client of this process, for the workers that wake endpoint queues. */
  temporalClient(): Promise<Client> {
    return this.deps.temporalClient();
  }

  /** Stores the event once (by its source key) with its deliveries; a repeated one sets off nothing. */
  async record(input: NewEvent): Promise<{ event: EventRow; created: boolean; deliveries: DeliveryRow[] }> {
    const endpoints = (await listLiveEndpoints(this.deps.db, input.customerId)).filter((e) => !e.disabledAt && e.eventTypes.some((p) => patternMatches(p, input.type)));
    return insertEvent(this.deps.db, input, this.outbox(endpoints.map((e) => e.id), 'initial'));
  }

  /**
   * Stores an event addressed to one endpoint (the test event) with its only delivery, whatever the
   * endpoint's patterns. Undefined when the endpoint is gone: the event is then logged undelivered.
   */
  async recordFor(endpointId: string, input: NewEvent): Promise<{ event: EventRow; delivery: DeliveryRow | undefined }> {
    const live = (await listLiveEndpoints(this.deps.db, input.customerId)).some((e) => e.id === endpointId);
    const { event, deliveries } = await insertEvent(this.deps.db, input, this.outbox(live ? [endpointId] : [], 'initial'));
    return { event, delivery: deliveries[0] };
  }

  /** Enqueues a new delivery of a stored event: to every live, enabled endpoint whose patterns match, or to one endpoint. */
  async redeliver(event: EventRow, opts: { endpointId?: string } = {}): Promise<DeliveryRow[]> {
    const endpoints = (await listLiveEndpoints(this.deps.db, event.customerId)).filter((e) =>
      opts.endpointId ? e.id === opts.endpointId : !e.disabledAt && e.eventTypes.some((p) => patternMatches(p, event.type)),
    );
    const { endpointIds, reason, taskQueue, queueWorkflowId } = this.outbox(
      endpoints.map((e) => e.id),
      'redeliver',
    );
    return enqueueDeliveries(this.deps.db, { event, endpointIds, reason, taskQueue, queueWorkflowId });
  }

  private outbox(endpointIds: string[], reason: Outbox['reason']): Outbox {
    return { endpointIds, reason, taskQueue: this.deps.delivery.taskQueue, queueWorkflowId: workflowIds.endpointDeliveries };
  }
}
