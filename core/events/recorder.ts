/**
 * Stores events and enqueues their deliveries in the same transaction (an outbox): one delivery
 * row per live, enabled endpoint whose patterns match. Ingestion answers the platform only after
 * that commit, and makes no Temporal call: the workers learn of the rows from a Postgres
 * notification and wake the endpoint's queue workflow (core/temporal/delivery-dispatcher.ts).
 * Events recorded while a batch is being written are written together in the next one, so a busy
 * customer's events share the lock and the round trips that order them. The endpoints each event
 * goes to come from memory, checked by the insert itself (see event-routes.ts).
 */
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client';
import { Batcher } from '../db/batcher';
import { insertEvents, type DeliveryRow, type EventRow, type NewEvent, type Outbox, type StoredEvent } from '../db/repositories/events';
import { enqueueDeliveries } from '../db/repositories/delivery-queue';
import { listLiveEndpoints, type EndpointRoute } from '../db/repositories/webhook-endpoints';
import { workflowIds } from '../../workflows/workflow-ids';
import { EventRoutes } from './event-routes';
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
  seatAccount?: string;
}

/**
 * The event's seat no longer holds the account it was routed by (unbound, or bound to another
 * account, since the caller looked it up): nothing was stored; look the account up afresh.
 */
export class SeatMovedError extends Error {
  constructor(
    readonly seatId: string,
    readonly accountId: string,
  ) {
    super(`seat ${seatId} no longer holds account ${accountId}`);
    this.name = 'SeatMovedError';
  }
}

type Outcome = { ok: true; stored: StoredEvent } | { ok: false; error: unknown };

/** Events in one statement at most, which bounds its size and the time its locks are held. */
const MAX_INTAKE_BATCH = 200;

/**
 * Writes of a batch whose routes are checked; should every one find something changed (endpoints
 * edited without pause), one more is made with routes read just before it and nothing checked, as
 * before routes were kept: a batch is never refused for being unlucky.
 */
const CHECKED_TRIES = 3;

export class EventRecorder {
  private readonly intake: Batcher<Intake, Outcome>;
  private readonly routes: EventRoutes;

  constructor(private readonly deps: { db: Db; temporalClient: () => Promise<Client>; delivery: DeliverySettings }) {
    this.routes = new EventRoutes(deps.db);
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

  /**
   * Stores the event once (by its source key) with its deliveries; a repeated one sets off nothing.
   * `seatAccount`, the account the caller found the event's seat to hold: stored only while the seat
   * still holds it, or else SeatMovedError.
   */
  async record(input: NewEvent, opts: { seatAccount?: string } = {}): Promise<StoredEvent> {
    return unwrap(await this.intake.call({ input, ...opts }));
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
    try {
      return await this.write(batch);
    } catch (err) {
      if (batch.length === 1) return [{ ok: false, error: err }];
      // One after another, so the events that are stored keep the order they were recorded in.
      const outcomes: Outcome[] = [];
      for (const item of batch) {
        try {
          outcomes.push(...(await this.write([item])));
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    }
  }

  /**
   * Routes the events by the endpoints kept in memory and writes them. A write that finds a
   * customer's routes changed writes nothing: those routes are read again and the batch written
   * again. An event whose seat moved leaves the batch with SeatMovedError.
   */
  private async write(batch: readonly Intake[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = new Array<Outcome>(batch.length);
    let pending = batch.map((item, at) => ({ item, at }));
    for (let tries = 1; pending.length > 0; tries++) {
      const checked = tries <= CHECKED_TRIES;
      const routes = await this.routes.of(pending.map(({ item }) => item.input.customerId));
      const outcome = await insertEvents(
        this.deps.db,
        pending.map(({ item: { input, endpointId, seatAccount } }) => ({
          event: input,
          outbox: this.outbox(targetsOf(routes.get(input.customerId)?.endpoints ?? [], input.type, endpointId), 'initial'),
          ...(checked && seatAccount !== undefined ? { seatAccount } : {}),
        })),
        checked ? new Map([...routes].map(([customerId, r]) => [customerId, r.version])) : new Map(),
      );
      if ('stored' in outcome) {
        outcome.stored.forEach((stored, k) => (outcomes[pending[k]!.at] = { ok: true, stored }));
        break;
      }
      this.routes.forget(outcome.stale.customers);
      const moved = new Set(outcome.stale.movedSeats);
      for (const k of moved) {
        const { item, at } = pending[k]!;
        outcomes[at] = { ok: false, error: new SeatMovedError(item.input.seatId ?? '', item.seatAccount ?? '') };
      }
      pending = pending.filter((_, k) => !moved.has(k));
    }
    return outcomes;
  }

  private outbox(endpointIds: string[], reason: Outbox['reason']): Outbox {
    return { endpointIds, reason, taskQueue: this.deps.delivery.taskQueue, queueWorkflowId: workflowIds.endpointDeliveries };
  }
}

/** The endpoints an event goes to: the one named (if live), or every enabled one whose patterns match its type. */
function targetsOf(endpoints: readonly EndpointRoute[], type: string, endpointId?: string): string[] {
  const chosen = endpointId
    ? endpoints.filter((e) => e.id === endpointId)
    : endpoints.filter((e) => !e.disabledAt && e.eventTypes.some((p) => patternMatches(p, type)));
  return chosen.map((e) => e.id);
}

function unwrap(outcome: Outcome): StoredEvent {
  if (!outcome.ok) throw outcome.error;
  return outcome.stored;
}
