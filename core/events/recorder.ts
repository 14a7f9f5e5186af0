/**
 * Stores events and enqueues their deliveries in the same transaction (an outbox): one delivery
 * row per live, enabled endpoint whose patterns match. Ingestion answers the platform only after
 * that commit, and makes no Temporal call: the workers learn of the rows from a Postgres
 * notification and wake the endpoint's queue workflow (core/temporal/delivery-dispatcher.ts).
 * Events recorded while a batch is being written are written together in the next one, so a busy
 * customer's events share the lock and the round trips that order them.
 */
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client';
import { Batcher } from '../db/batcher';
import { insertEvents, type DeliveryRow, type EventRow, type NewEvent, type Outbox, type StoredEvent } from '../db/repositories/events';
import { enqueueDeliveries } from '../db/repositories/delivery-queue';
import { listLiveEndpoints, listLiveEndpointsOf, type WebhookEndpointRow } from '../db/repositories/webhook-endpoints';
import { workflowIds } from '../../workflows/workflow-ids';
import { patternMatches } from './event-types';

export interface DeliverySettings {
  taskQueue: string;
  /** Pauses between attempts; the delivery fails after the last. */
  retryScheduleMs: number[];
  attemptTimeoutMs: number;
}

/** An event to store, and whom it is for: every matching endpoint, or one endpoint (the test event). */
interface Intake {
  input: NewEvent;
  endpointId?: string;
}

type Outcome = { ok: true; stored: StoredEvent } | { ok: false; error: unknown };

/** Events in one statement at most, which bounds its size and the time its locks are held. */
const MAX_INTAKE_BATCH = 200;

export class EventRecorder {
  private readonly intake: Batcher<Intake, Outcome>;

  constructor(private readonly deps: { db: Db; temporalClient: () => Promise<Client>; delivery: DeliverySettings }) {
    // One batch in flight while the next gathers: events recorded in one process keep their order.
    this.intake = new Batcher((batch) => this.store(batch), { maxBatch: MAX_INTAKE_BATCH, maxInFlight: 1, stallMs: 5_000, gather: 'turn' });
  }

  /** The delivery settings the workers' drains follow. */
  get delivery(): DeliverySettings {
    return this.deps.delivery;
  }

  /** The Temporal client of this process, for the workers that wake endpoint queues. */
  temporalClient(): Promise<Client> {
    return this.deps.temporalClient();
  }

  /** Stores the event once (by its source key) with its deliveries; a repeated one sets off nothing. */
  async record(input: NewEvent): Promise<StoredEvent> {
    return unwrap(await this.intake.call({ input }));
  }

  /**
   * Stores an event addressed to one endpoint (the test event) with its only delivery, whatever the
   * endpoint's patterns. Undefined when the endpoint is gone: the event is then logged undelivered.
   */
  async recordFor(endpointId: string, input: NewEvent): Promise<{ event: EventRow; delivery: DeliveryRow | undefined }> {
    const { event, deliveries } = unwrap(await this.intake.call({ input, endpointId }));
    return { event, delivery: deliveries[0] };
  }

  /** Enqueues a new delivery of a stored event: to every live, enabled endpoint whose patterns match, or to one endpoint. */
  async redeliver(event: EventRow, opts: { endpointId?: string } = {}): Promise<DeliveryRow[]> {
    const targets = targetsOf(await listLiveEndpoints(this.deps.db, event.customerId), event.type, opts.endpointId);
    return enqueueDeliveries(this.deps.db, { event, ...this.outbox(targets, 'redeliver') });
  }

  /**
   * Writes a batch in one statement. Should it fail, each event is tried on its own, so one event
   * the database refuses fails alone rather than taking its batch with it.
   */
  private async store(batch: readonly Intake[]): Promise<Outcome[]> {
    const attempt = async (items: readonly Intake[]): Promise<StoredEvent[]> => {
      const endpoints = await listLiveEndpointsOf(this.deps.db, [...new Set(items.map((i) => i.input.customerId))]);
      return insertEvents(
        this.deps.db,
        items.map(({ input, endpointId }) => ({
          event: input,
          outbox: this.outbox(
            targetsOf(
              endpoints.filter((e) => e.customerId === input.customerId),
              input.type,
              endpointId,
            ),
            'initial',
          ),
        })),
      );
    };
    try {
      return (await attempt(batch)).map((stored) => ({ ok: true, stored }));
    } catch (err) {
      if (batch.length === 1) return [{ ok: false, error: err }];
      // One after another, so the events that are stored keep the order they were recorded in.
      const outcomes: Outcome[] = [];
      for (const item of batch) {
        try {
          const [stored] = await attempt([item]);
          outcomes.push({ ok: true, stored: stored! });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    }
  }

  private outbox(endpointIds: string[], reason: Outbox['reason']): Outbox {
    return { endpointIds, reason, taskQueue: this.deps.delivery.taskQueue, queueWorkflowId: workflowIds.endpointDeliveries };
  }
}

/** The endpoints an event goes to: the one named (if live), or every enabled one whose patterns match its type. */
function targetsOf(endpoints: readonly WebhookEndpointRow[], type: string, endpointId?: string): string[] {
  const chosen = endpointId
    ? endpoints.filter((e) => e.id === endpointId)
    : endpoints.filter((e) => !e.disabledAt && e.eventTypes.some((p) => patternMatches(p, type)));
  return chosen.map((e) => e.id);
}

function unwrap(outcome: Outcome): StoredEvent {
  if (!outcome.ok) throw outcome.error;
  return outcome.stored;
}
