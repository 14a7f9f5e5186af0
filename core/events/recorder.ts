/**
 * Stores events and enqueues their deliveries in the same transaction (an outbox): one delivery
 * row per live, enabled endpoint whose patterns match. Ingestion answers the platform only after
 * that commit, and makes no Temporal call: the workers learn of the rows from a Postgres
 * notification and wake the endpoint's queue workflow (core/temporal/delivery-dispatcher.ts).
 */
import type { Client } from '@temporalio/client';
import type { Db, Executor } from '../db/client';
import { insertEvent, type DeliveryRow, type EventRow, type NewEvent } from '../db/repositories/events';
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
    const { event, created, also } = await insertEvent(this.deps.db, input, (tx, row) => this.enqueue(tx, row, { reason: 'initial' }));
    return { event, created, deliveries: also ?? [] };
  }

  /**
   * Stores an event addressed to one endpoint (the test event) with its only delivery, whatever the
   * endpoint's patterns. Undefined when the endpoint is gone: the event is then logged undelivered.
   */
  async recordFor(endpointId: string, input: NewEvent): Promise<{ event: EventRow; delivery: DeliveryRow | undefined }> {
    const { event, also } = await insertEvent(this.deps.db, input, (tx, row) => this.enqueue(tx, row, { reason: 'initial', endpointId }));
    return { event, delivery: also?.[0] };
  }

  /** Enqueues a new delivery of a stored event: to every live, enabled endpoint whose patterns match, or to one endpoint. */
  async redeliver(event: EventRow, opts: { endpointId?: string } = {}): Promise<DeliveryRow[]> {
    return this.enqueue(this.deps.db, event, { reason: 'redeliver', ...opts });
  }

  private async enqueue(tx: Executor, event: EventRow, opts: { reason: 'initial' | 'redeliver'; endpointId?: string }): Promise<DeliveryRow[]> {
    const endpoints = (await listLiveEndpoints(tx, event.customerId)).filter((e) =>
      opts.endpointId ? e.id === opts.endpointId : !e.disabledAt && e.eventTypes.some((p) => patternMatches(p, event.type)),
    );
    return enqueueDeliveries(tx, {
      event,
      endpointIds: endpoints.map((e) => e.id),
      reason: opts.reason,
      queueWorkflowId: workflowIds.endpointDeliveries,
      taskQueue: this.deps.delivery.taskQueue,
    });
  }
}
