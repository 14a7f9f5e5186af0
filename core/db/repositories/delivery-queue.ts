/**
 * The delivery queue's statements: enqueueing rows with the event (the outbox), claiming due rows
 * under a lease, writing a batch of attempt outcomes at once, and the figures operators read.
 * Each endpoint's queue is its pending rows in `next_attempt_at` order (index deliveries_due_idx).
 */
import { and, eq, sql } from 'drizzle-orm';
import { rowReader } from '../row-reader';
import { DELIVERIES_CHANNEL, deliveryNotice, type DeliveryNotice } from '../../events/delivery-channel';
import { newId } from '../../ids';
import { queryRows, rawQuery, type Db, type Executor } from '../client';
import { deliveries, events, type DeliveryStatus } from '../schema';
import type { DeliveryRow, EventRow } from './events';

const readEvent = rowReader(events);

export interface QueueFiguresRow {
  endpointId: string;
  backlog: number;
  due: number;
  inFlight: number;
  oldestDueAt: Date | null;
  nextDueAt: Date | null;
}

/**
 * Enqueues a new delivery of a stored event to each endpoint, due now (redeliveries: a new event's
 * deliveries are written with it, by insertEvents), and tells the workers which queues got work.
 * One transaction: the notices are sent only with the rows.
 */
export async function enqueueDeliveries(
  db: Db,
  input: {
    event: Pick<EventRow, 'id' | 'customerId'>;
    endpointIds: readonly string[];
    reason: 'initial' | 'redeliver';
    queueWorkflowId: (endpointId: string) => string;
    taskQueue: string;
  },
): Promise<DeliveryRow[]> {
  if (input.endpointIds.length === 0) return [];
  return db.transaction(async (tx) => {
    const rows = await tx
      .insert(deliveries)
      .values(
        input.endpointIds.map((endpointId) => ({
          id: newId('dlv'),
          eventId: input.event.id,
          endpointId,
          customerId: input.event.customerId,
          reason: input.reason,
          workflowId: input.queueWorkflowId(endpointId),
          taskQueue: input.taskQueue,
          nextAttemptAt: sql`now()`,
        })),
      )
      .returning();
    for (const endpointId of new Set(input.endpointIds))
      await notifyQueue(tx, { customerId: input.event.customerId, endpointId, taskQueue: input.taskQueue });
    return rows;
  });
}

/** An endpoint's signing keys as stored (sealed, or plain from before sealing), read with a claim. */
export interface StoredSigningKeys {
  current: string;
  /** The previous key while its grace lasts; null once it has expired or was dropped. */
  previous: string | null;
  /** The standard keys beside them (core/events/signing-keys.ts), null for a secret that has none. */
  currentStandard: string | null;
  previousStandard: string | null;
}

export interface ClaimedDelivery {
  id: string;
  /** Attempts made before this claim. */
  attemptsMade: number;
  event: EventRow;
  /**
   * The endpoint's keys as they stood at the claim: a rotation that expired the old key at once
   * holds for every row claimed after it, whatever a drain's copy of the endpoint still says.
   */
  signingKeys: StoredSigningKeys;
}

/** What one drain asks of a claim: up to `limit` due rows of its endpoint, leased to `owner` for `leaseMs`. */
export interface ClaimRequest {
  endpointId: string;
  limit: number;
  leaseMs: number;
  owner: string;
}

/**
 * Claims up to `limit` due rows of one endpoint, oldest due first, leasing them to `owner` for
 * `leaseMs`. SKIP LOCKED lets two drains of one endpoint (a retried activity beside one still
 * finishing) take different rows instead of waiting on each other; the lease keeps a row from being
 * claimed again while its attempt is in flight, and lapses by itself if its worker dies.
 */
export async function claimDueDeliveries(db: Db, q: ClaimRequest): Promise<ClaimedDelivery[]> {
  return (await claimDueDeliveriesOf(db, [q]))[0]!;
}

// $1: the requests, as JSON (ord, endpoint_id, lim, lease_ms, owner).
const CLAIM_DUE = `
  with asked as (
    select * from jsonb_to_recordset($1::jsonb) as a(ord int, endpoint_id text, lim int, lease_ms int, owner text)
  ), due as (
    select distinct on (pick.id) asked.ord, asked.lease_ms, asked.owner, pick.id
    from asked cross join lateral (
      select id from deliveries
      where endpoint_id = asked.endpoint_id and status = 'pending' and next_attempt_at <= now()
        and (lease_until is null or lease_until <= now())
      order by next_attempt_at, id
      limit asked.lim
      for no key update skip locked
    ) pick
    order by pick.id, asked.ord
  ), claimed as (
    update deliveries d set lease_until = now() + due.lease_ms * interval '1 millisecond', lease_owner = due.owner
    from due
    where d.id = due.id
    returning due.ord, d.id, d.event_id, d.attempts_made, d.next_attempt_at
  )
  select claimed.ord, claimed.id, claimed.attempts_made, row_to_json(e) as event, w.signing_key, w.standard_key,
    case when w.previous_key_expires_at > now() then w.previous_signing_key end as previous_signing_key,
    case when w.previous_key_expires_at > now() then w.previous_standard_key end as previous_standard_key
  from claimed
    join events e on e.id = claimed.event_id
    join asked on asked.ord = claimed.ord
    join webhook_endpoints w on w.id = asked.endpoint_id
  order by claimed.ord, claimed.next_attempt_at, claimed.id`;

/**
 * The claims of several drains (of any endpoints) in one statement, answered in the order asked:
 * the process's drains share it, as they share the outcome writes. Each request takes its rows as
 * claimDueDeliveries would; a row two requests of one endpoint both reach goes to one of them.
 */
export async function claimDueDeliveriesOf(db: Db, requests: readonly ClaimRequest[]): Promise<ClaimedDelivery[][]> {
  const answers: ClaimedDelivery[][] = requests.map(() => []);
  const asked = requests.flatMap((q, ord) =>
    q.limit > 0 ? [{ ord, endpoint_id: q.endpointId, lim: q.limit, lease_ms: q.leaseMs, owner: q.owner }] : [],
  );
  if (asked.length === 0) return answers;
  const rows = await rawQuery<{
    ord: number;
    id: string;
    attempts_made: number;
    event: Record<string, unknown>;
    signing_key: string;
    previous_signing_key: string | null;
    standard_key: string | null;
    previous_standard_key: string | null;
  }>(db, CLAIM_DUE, [JSON.stringify(asked)]);
  for (const r of rows) {
    answers[r.ord]!.push({
      id: r.id,
      attemptsMade: r.attempts_made,
      event: readEvent(r.event),
      signingKeys: {
        current: r.signing_key,
        previous: r.previous_signing_key,
        currentStandard: r.standard_key,
        previousStandard: r.previous_standard_key,
      },
    });
  }
  return answers;
}

/** The outcome of one attempt, written with others in one batch. */
export interface AttemptOutcome {
  deliveryId: string;
  /** The lease the attempt ran under: an outcome whose lease was taken over writes its attempt only. */
  owner: string;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  succeeded: boolean;
  /** pending with a due time (a retry), or the delivery's end. */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

// $1…$10: the outcomes' columns, one array each, in the order of the unnest below.
const RECORD_OUTCOMES = `
  with v as (
    -- Booleans and times travel as text: the drivers write a bool[] or a timestamptz[] parameter
    -- wrongly (postgres.js's boolean array, drizzle's pass-through of time arrays).
    select delivery_id, owner, attempt, started_at::timestamptz as started_at, duration_ms, status_code, error,
      succeeded::bool as succeeded, status, next_attempt_at::timestamptz as next_attempt_at
    from unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::int4[], $6::int4[], $7::text[], $8::text[],
        $9::text[], $10::text[])
      as v(delivery_id, owner, attempt, started_at, duration_ms, status_code, error, succeeded, status, next_attempt_at)
  ), attempts as (
    insert into delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, succeeded)
    select delivery_id, attempt, started_at, duration_ms, status_code, error, succeeded from v
    on conflict do nothing
  ), owned as materialized (
    -- Each row is looked up by its key and locked in id order, as cancelPendingDeliveries locks
    -- them: two statements that lock the same rows in different orders deadlock, and deleting an
    -- endpoint mid-drain did. A lookup per row is a plan that cannot go wrong; joined as a set, the
    -- planner read the whole table whenever its statistics lagged behind a fast-growing one.
    select d.ctid as tid, d.status as current, v.status, v.attempt, v.next_attempt_at
    from (select * from v order by delivery_id) v
      cross join lateral (select ctid, status from deliveries where id = v.delivery_id and lease_owner = v.owner for no key update) d
  )
  -- By the locked row's address, which keeps the plan a lookup whatever the statistics say. A row
  -- another statement changed after this one began is not visible there and is left alone: right
  -- when its lease was taken over or its delivery cancelled. In the rare case where the change kept
  -- the lease ours (this drain claimed the row again after its lease lapsed), the outcome is not
  -- applied either: the lease lapses and the row is sent again, at least once as always.
  update deliveries d set
    status = owned.status, attempts_made = greatest(d.attempts_made, owned.attempt), next_attempt_at = owned.next_attempt_at,
    completed_at = case when owned.status = 'pending' then null else now() end, lease_until = null, lease_owner = null
  from owned
  where d.ctid = owned.tid and owned.current = 'pending'`;

/**
 * Writes a batch of outcomes in one statement: the attempts (each once, however often a batch is
 * retried) and the rows' new state, which also gives up their leases. Arrays rather than a JSON
 * document: planned generically for about ten rows, as unnest of a parameter is, the update finds
 * its rows by address instead of scanning the table.
 */
export async function recordOutcomes(db: Db, outcomes: readonly AttemptOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const column = <T>(of: (o: AttemptOutcome) => T) => outcomes.map(of);
  await rawQuery(db, RECORD_OUTCOMES, [
    column((o) => o.deliveryId),
    column((o) => o.owner),
    column((o) => o.attempt),
    column((o) => o.startedAt.toISOString()),
    column((o) => o.durationMs),
    column((o) => o.statusCode),
    column((o) => o.error),
    column((o) => String(o.succeeded)),
    column((o) => o.status),
    column((o) => o.nextAttemptAt?.toISOString() ?? null),
  ]);
}

/**
 * Ends every pending delivery of an endpoint that was deleted or disabled. Returns how many, and
 * whether the endpoint ever had a delivery: one that never had any never had a queue workflow
 * either (only rows start one), so there is nothing to wake.
 */
export async function cancelPendingDeliveries(db: Executor, endpointId: string): Promise<{ cancelled: number; everQueued: boolean }> {
  // Locks in id order (see recordOutcomes), and counts instead of returning every id: a queue may
  // hold 100,000 rows.
  const [row] = await queryRows<{ n: number; ever: boolean }>(
    db,
    sql`with locked as (
          select id from deliveries where endpoint_id = ${endpointId} and status = 'pending' order by id for update
        ), cancelled as (
          update deliveries d set status = 'cancelled', completed_at = now(), next_attempt_at = null, lease_until = null, lease_owner = null
          from locked where d.id = locked.id and d.status = 'pending'
          returning 1
        )
        select (select count(*)::int from cancelled) as n,
               exists (select 1 from deliveries where endpoint_id = ${endpointId}) as ever`,
  );
  return { cancelled: row?.n ?? 0, everQueued: row?.ever ?? false };
}

/** When the endpoint's next row not in flight becomes due; null when none is pending. */
export async function nextDueAt(db: Db, endpointId: string): Promise<Date | null> {
  const [row] = await rawQuery<{ at: string | Date | null }>(db, NEXT_DUE, [endpointId]);
  return row?.at ? new Date(row.at) : null;
}

const NEXT_DUE = `
  select min(next_attempt_at) as at from deliveries
  where endpoint_id = $1 and status = 'pending' and (lease_until is null or lease_until <= now())`;

/** Backlog, due, in-flight and the oldest and next due times of each endpoint named. */
export async function queueFigures(db: Executor, endpointIds: readonly string[]): Promise<Map<string, QueueFiguresRow>> {
  const out = new Map<string, QueueFiguresRow>();
  for (const id of endpointIds) out.set(id, { endpointId: id, backlog: 0, due: 0, inFlight: 0, oldestDueAt: null, nextDueAt: null });
  if (endpointIds.length === 0) return out;
  const rows = await queryRows<{
    endpoint_id: string;
    backlog: number;
    due: number;
    in_flight: number;
    oldest_due_at: string | Date | null;
    next_due_at: string | Date | null;
  }>(
    db,
    sql`select endpoint_id,
          count(*)::int as backlog,
          count(*) filter (where leased is false and next_attempt_at <= now())::int as due,
          count(*) filter (where leased)::int as in_flight,
          min(next_attempt_at) filter (where leased is false and next_attempt_at <= now()) as oldest_due_at,
          min(next_attempt_at) filter (where leased is false) as next_due_at
        from (
          select endpoint_id, next_attempt_at, coalesce(lease_until > now(), false) as leased
          from deliveries
          where status = 'pending' and endpoint_id in ${endpointIds}
        ) pending
        group by endpoint_id`,
  );
  const date = (v: string | Date | null) => (v ? new Date(v) : null);
  for (const r of rows) {
    out.set(r.endpoint_id, {
      endpointId: r.endpoint_id,
      backlog: r.backlog,
      due: r.due,
      inFlight: r.in_flight,
      oldestDueAt: date(r.oldest_due_at),
      nextDueAt: date(r.next_due_at),
    });
  }
  return out;
}

/**
 * Endpoints with rows due for longer than `graceMs` that no drain holds: their wake-up was missed
 * (a notification lost while Postgres restarted, a worker gone between the notice and the signal).
 */
export async function overdueQueues(
  db: Executor,
  q: { taskQueue: string; graceMs: number; limit: number },
): Promise<Array<{ endpointId: string; customerId: string }>> {
  const rows = await queryRows<{ endpoint_id: string; customer_id: string }>(
    db,
    sql`select distinct endpoint_id, customer_id from deliveries
        where status = 'pending' and next_attempt_at <= now() - ${q.graceMs} * interval '1 millisecond'
          and (lease_until is null or lease_until <= now())
          and (task_queue = ${q.taskQueue} or task_queue is null)
        limit ${q.limit}`,
  );
  return rows.map((r) => ({ endpointId: r.endpoint_id, customerId: r.customer_id }));
}

/**
 * Puts a delivery left by a per-delivery workflow of the previous release into its endpoint's
 * queue, keeping the attempts it made. Returns the row when it is still pending.
 */
export async function adoptLegacyDelivery(
  db: Executor,
  q: { deliveryId: string; attemptsMade: number; queueWorkflowId: string; taskQueue: string },
): Promise<DeliveryRow | undefined> {
  const [row] = await db
    .update(deliveries)
    .set({
      nextAttemptAt: sql`coalesce(${deliveries.nextAttemptAt}, now())`,
      // The attempts its workflow counted, or those it logged if more (one logged as it was stopped).
      attemptsMade: sql`greatest(${deliveries.attemptsMade}, ${q.attemptsMade}, (select count(*)::int from delivery_attempts a where a.delivery_id = ${deliveries.id}))`,
      workflowId: q.queueWorkflowId,
    })
    .where(and(eq(deliveries.id, q.deliveryId), eq(deliveries.status, 'pending')))
    .returning();
  if (row) await notifyQueue(db, { customerId: row.customerId, endpointId: row.endpointId, taskQueue: q.taskQueue });
  return row;
}

/**
 * Cancels an endpoint's pending deliveries and wakes its queue workflow so that it ends too. An
 * endpoint that never had a delivery sends no notice: a notice is a commit-time lock shared by
 * every notifying transaction of the database, and creating and deleting endpoints that never
 * received anything (a customer's set-up scripts, the load benchmark) paid it on every delete.
 */
export async function cancelQueue(tx: Executor, endpoint: { id: string; customerId: string }, taskQueue: string): Promise<number> {
  const { cancelled, everQueued } = await cancelPendingDeliveries(tx, endpoint.id);
  if (everQueued) await notifyQueue(tx, { customerId: endpoint.customerId, endpointId: endpoint.id, taskQueue });
  return cancelled;
}

/** Tells the workers the endpoint's queue changed; sent at commit when inside a transaction. */
async function notifyQueue(db: Executor, notice: DeliveryNotice): Promise<void> {
  await db.execute(sql`select pg_notify(${DELIVERIES_CHANNEL}, ${deliveryNotice(notice)})`);
}
