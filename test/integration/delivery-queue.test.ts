/**
 * The delivery queue on the real stack (Postgres, a Temporal dev server, a worker, loopback
 * receivers): the outbox commits with its event, a dead worker's leased rows go to the next drain,
 * one endpoint failing or hanging delays no other, deliveries left by the previous release's
 * per-delivery workflows are finished once by the queue, and the queue's workflow reports its figures.
 */
import { eq, sql } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import { queryRows } from '../../core/db/client';
import { deliveries, events } from '../../core/db/schema';
import { claimDueDeliveries, claimDueDeliveriesOf } from '../../core/db/repositories/delivery-queue';
import { insertEvent } from '../../core/db/repositories/events';
import { EventRecorder } from '../../core/events/recorder';
import { sealSigningKey } from '../../core/events/signing-keys';
import { newId } from '../../core/ids';
import { connectTemporalClient } from '../../core/temporal/connection';
import type { RunningWorker } from '../../worker/worker';
import { workflowIds } from '../../workflows/workflow-ids';
import { ENDPOINT_DELIVERIES_QUERY, type QueueFigures, type WorkflowSignatures } from '../../workflows/shared';
import { call } from '../helpers/http';
import { eventually, receiverPool, type WebhookReceiver } from '../helpers/receivers';
import { within } from '../helpers/sse';
import {
  createTenant,
  messageEvent,
  requiredEnv,
  startStack,
  startStackWorker,
  TEST_DELIVERY,
  TEST_DELIVERY_QUEUE,
  unreachableUpstream,
  type Stack,
  type Tenant,
} from '../helpers/stack';

const POLLING_RATE = 1_000_000;

describe('webhook delivery queues', () => {
  const taskQueue = `vps-queue-${process.pid}-${Date.now()}`;
  let stack: Stack;
  let worker: RunningWorker;
  let temporal: { client: Client; close(): Promise<void> };
  const receivers = receiverPool();
  const upstream = unreachableUpstream();

  beforeAll(async () => {
    stack = await startStack({
      taskQueue,
      allowInsecureWebhookUrls: true,
      ratePerMinute: POLLING_RATE,
      delivery: { retryScheduleMs: [300, 300, 30_000], attemptTimeoutMs: 1_000 },
    });
    worker = await startStackWorker(stack, taskQueue, upstream);
    temporal = await connectTemporalClient({
      address: requiredEnv('TEMPORAL_ADDRESS'),
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TLS: false,
    });
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await temporal?.close();
    await stack?.close();
    await receivers.closeAll();
    await upstream.close();
  });

  async function endpoint(tenant: Tenant, receiver: WebhookReceiver, eventTypes = ['*']): Promise<string> {
    const res = await call<{ id: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url: receiver.url, eventTypes },
    });
    expect(res.body.code).toBe(0);
    return res.body.data.id;
  }

  const message = (tenant: Tenant, n: number) => messageEvent(tenant, n, `queue-test-${tenant.customerId}-${n}`);
  /** A due row written straight to the table: no notice tells any worker. */
  async function queueSilently(
    tenant: Tenant,
    eventId: string,
    endpointId: string,
    opts: { reason?: string; taskQueue?: string | null } = {},
  ) {
    await stack.database.db.insert(deliveries).values({
      id: newId('dlv'),
      eventId,
      endpointId,
      customerId: tenant.customerId,
      reason: opts.reason ?? 'initial',
      workflowId: workflowIds.endpointDeliveries(endpointId),
      nextAttemptAt: new Date(),
      taskQueue: opts.taskQueue === undefined ? taskQueue : opts.taskQueue,
    });
  }
  const idsOf = (r: WebhookReceiver) => r.pushes.map((p) => (JSON.parse(p.body) as { id: string }).id);
  const rowsOf = (endpointId: string) => stack.database.db.select().from(deliveries).where(eq(deliveries.endpointId, endpointId));

  it('writes the deliveries in the event’s transaction, with no Temporal call: both commit, or neither', async () => {
    const tenant = await createTenant(stack);
    const r = await receivers.start();
    const endpointId = await endpoint(tenant, r);
    // A recorder whose Temporal is unreachable still stores and enqueues: intake never waits on Temporal.
    const offline = new EventRecorder({
      db: stack.database.db,
      temporalClient: () => Promise.reject(new Error('Temporal is down')),
      delivery: { taskQueue, ...TEST_DELIVERY },
    });
    const { event, deliveries: queued } = await offline.record(message(tenant, 1));
    expect(queued).toEqual([
      expect.objectContaining({ eventId: event.id, endpointId, status: 'pending', workflowId: workflowIds.endpointDeliveries(endpointId) }),
    ]);
    await r.waitFor(1);
    expect(idsOf(r)).toEqual([event.id]);

    // An outbox row that cannot be written (its endpoint does not exist) leaves no event either.
    const sourceKey = `rolled-back-${tenant.customerId}`;
    await expect(
      insertEvent(
        stack.database.db,
        { ...message(tenant, 2), sourceKey },
        {
          endpointIds: [endpointId, 'we_no_such_endpoint'],
          reason: 'initial',
          taskQueue,
          queueWorkflowId: workflowIds.endpointDeliveries,
        },
      ),
    ).rejects.toThrow();
    expect(await stack.database.db.select().from(events).where(eq(events.sourceKey, sourceKey))).toEqual([]);
    expect(await rowsOf(endpointId)).toHaveLength(1);

    // A repeated push is stored once and sets off nothing more.
    const again = await stack.events.record(message(tenant, 1));
    expect(again).toMatchObject({ created: false, deliveries: [] });
  });

  it('hands the rows of a drain that died to the next drain once their leases lapse, each sent once', async () => {
    const tenant = await createTenant(stack);
    const r = await receivers.start();
    // Created straight in the database, so no notice wakes a drain before the "dead" one claims.
    const endpointId = newId('we');
    await stack.database.db.execute(
      sql`insert into webhook_endpoints (id, customer_id, url, event_types, signing_key) values (${endpointId}, ${tenant.customerId}, ${r.url}, ${'{*}'}::text[], ${sealSigningKey(stack.sealedBox, endpointId, '0'.repeat(64))})`,
    );
    const stored = [];
    for (const n of [1, 2, 3]) {
      const { event } = await insertEvent(stack.database.db, message(tenant, n));
      // Queued without a notice, as if it was lost: only the sweep can find these rows.
      await queueSilently(tenant, event.id, endpointId);
      stored.push(event.id);
    }
    // A drain claims all three and dies before sending: its leases hold them for a while.
    const claimed = await claimDueDeliveries(stack.database.db, { endpointId, limit: 10, leaseMs: 1_500, owner: 'worker-that-died' });
    expect(claimed).toHaveLength(3);
    const claimedAt = Date.now();
    // The sweep finds them once the leases lapse, wakes the queue, and its drain sends each once.
    await r.waitFor(3, () => true, 15_000);
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(1_400);
    expect(idsOf(r).sort()).toEqual([...stored].sort());
    const rows = await eventually(
      () => rowsOf(endpointId),
      (rs) => rs.every((d) => d.status === 'succeeded'),
    );
    expect(rows.map((d) => d.attemptsMade)).toEqual([1, 1, 1]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(r.pushes).toHaveLength(3);
  });

  it('claims for several drains in one statement: each gets its endpoint’s due rows in order, and no row goes to two', async () => {
    const tenant = await createTenant(stack);
    const r = await receivers.start();
    const [a, b] = [newId('we'), newId('we')];
    for (const id of [a, b]) {
      await stack.database.db.execute(
        sql`insert into webhook_endpoints (id, customer_id, url, event_types, signing_key) values (${id}, ${tenant.customerId}, ${r.url}, ${'{*}'}::text[], ${sealSigningKey(stack.sealedBox, id, '0'.repeat(64))})`,
      );
    }
    const queued: Record<string, string[]> = { [a]: [], [b]: [] };
    for (const [n, endpointId] of [
      [1, a],
      [2, a],
      [3, a],
      [4, b],
      [5, b],
    ] as const) {
      const { event } = await insertEvent(stack.database.db, message(tenant, n));
      // On a task queue no worker serves: nothing but this test claims them.
      await queueSilently(tenant, event.id, endpointId, { taskQueue: `${taskQueue}-nobody` });
      queued[endpointId]!.push(event.id);
    }
    const lease = { leaseMs: 60_000 };
    const answers = await claimDueDeliveriesOf(stack.database.db, [
      { endpointId: a, limit: 2, owner: 'first', ...lease },
      { endpointId: b, limit: 10, owner: 'second', ...lease },
      { endpointId: a, limit: 10, owner: 'third', ...lease },
      { endpointId: a, limit: 0, owner: 'fourth', ...lease },
    ]);
    const eventIds = answers.map((claimed) => claimed.map((c) => c.event.id));
    // Oldest due first; the second request of endpoint a gets only what the first left.
    expect(eventIds).toEqual([queued[a]!.slice(0, 2), queued[b], queued[a]!.slice(2), []]);
    expect(answers.flat().every((c) => c.attemptsMade === 0)).toBe(true);
    const owners = (
      await stack.database.db
        .select()
        .from(deliveries)
        .where(sql`${deliveries.endpointId} in (${a}, ${b})`)
    ).map((d) => [d.eventId, d.leaseOwner] as const);
    expect(new Map(owners)).toEqual(
      new Map([...answers.entries()].flatMap(([i, claimed]) => claimed.map((c) => [c.event.id, ['first', 'second', 'third'][i]] as const))),
    );
    // Leased, so a claim now finds nothing.
    expect(await claimDueDeliveries(stack.database.db, { endpointId: a, limit: 10, owner: 'late', ...lease })).toEqual([]);
  });

  it('keeps one endpoint’s deliveries on time while another answers 500 and a third hangs past its timeout', async () => {
    const tenant = await createTenant(stack);
    const healthy = await receivers.start();
    const failing = await receivers.start();
    failing.respondWith(500);
    const hanging = await receivers.start();
    hanging.delayEach(2_500);
    await endpoint(tenant, healthy);
    await endpoint(tenant, failing);
    await endpoint(tenant, hanging);
    const recordedAt = new Map<string, number>();
    for (let n = 1; n <= 20; n++) {
      const { event } = await stack.events.record(message(tenant, n));
      recordedAt.set(event.id, Date.now());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await healthy.waitFor(20, () => true, 10_000);
    const arrivals = await Promise.all(healthy.pushes.map(async (p) => (JSON.parse(p.body) as { id: string }).id));
    // Every healthy delivery arrived, while the hanging receiver held attempts open until their timeout.
    expect(new Set(arrivals).size).toBe(20);
    expect(hanging.maxConcurrent).toBeGreaterThan(0);
    expect(failing.pushes.length).toBeGreaterThanOrEqual(20);
    expect(healthy.maxConcurrent).toBeLessThanOrEqual(10);
  });

  it('finishes, once, a delivery left pending by a per-delivery workflow of the previous release', async () => {
    const tenant = await createTenant(stack);
    const r = await receivers.start();
    const endpointId = await endpoint(tenant, r, ['vplat.comment.created']);
    // The event matches nothing the endpoint subscribes to: only the rows written below deliver it.
    const { event } = await stack.events.record(message(tenant, 1));
    const legacyId = newId('dlv');
    const legacyWorkflowId = `deliver-${event.id}-${endpointId}`;
    // As the previous release left it: pending, one failed attempt made, no place in any queue.
    await stack.database.db.insert(deliveries).values({
      id: legacyId,
      eventId: event.id,
      endpointId,
      customerId: tenant.customerId,
      reason: 'initial',
      workflowId: legacyWorkflowId,
    });
    await stack.database.db.execute(
      sql`insert into delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, succeeded) values (${legacyId}, 1, now(), 5, 500, 'HTTP 500', false)`,
    );
    // Its old workflow wakes from its retry wait and calls the old activity, which hands the row over.
    const legacy = await temporal.client.workflow.start<WorkflowSignatures['webhookDeliveryWorkflow']>('webhookDeliveryWorkflow', {
      taskQueue,
      workflowId: legacyWorkflowId,
      args: [{ deliveryId: legacyId, retryScheduleMs: [60_000], attemptTimeoutMs: 1_000 }],
    });
    expect(await legacy.result()).toBe('queued');
    await r.waitFor(1);
    const done = await eventually(
      async () => (await rowsOf(endpointId)).find((d) => d.id === legacyId),
      (d) => d?.status === 'succeeded',
    );
    expect(done).toMatchObject({ attemptsMade: 2, workflowId: workflowIds.endpointDeliveries(endpointId) });

    // A row the migration moved (due, in no running queue, no notice) is found by the sweep.
    await queueSilently(tenant, event.id, endpointId, { reason: 'redeliver', taskQueue: null });
    await r.waitFor(2, () => true, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(idsOf(r)).toEqual([event.id, event.id]);
    const log = await call<{ items: Array<{ id: string; status: string; attempts: Array<{ attempt: number; statusCode: number }> }> }>(
      stack.baseUrl,
      'GET',
      `/v1/events/${event.id}/deliveries`,
      {
        key: tenant.apiKey,
      },
    );
    const legacyLog = log.body.data.items.find((d) => d.id === legacyId)!;
    expect(legacyLog.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);
  });

  it('answers the queue query with the backlog, and ends the queue when its endpoint is deleted', async () => {
    const tenant = await createTenant(stack);
    const failing = await receivers.start();
    failing.respondWith(500);
    const endpointId = await endpoint(tenant, failing);
    await stack.events.record(message(tenant, 1));
    await stack.events.record(message(tenant, 2));
    // Three attempts each, then a 30 s wait before the fourth.
    await failing.waitFor(6);
    const handle = temporal.client.workflow.getHandle(workflowIds.endpointDeliveries(endpointId));
    const figures = await eventually(
      () => handle.query<QueueFigures | null>(ENDPOINT_DELIVERIES_QUERY),
      (f) => f !== null && f.backlog === 2,
      15_000,
    );
    expect(figures).toMatchObject({ backlog: 2, inFlight: 0 });
    expect(figures!.nextDueAt).not.toBeNull();

    const deleted = await call(stack.baseUrl, 'DELETE', `/v1/webhook-endpoints/${endpointId}`, { key: tenant.apiKey });
    expect(deleted.body.code).toBe(0);
    expect(await handle.result()).toBe('closed');
    expect((await rowsOf(endpointId)).map((d) => d.status)).toEqual(['cancelled', 'cancelled']);
    // The queue stays ended: closing it wakes nothing that would start it again. Several of the
    // dispatcher's wake-up windows pass first, any of which a stray notice would use.
    await new Promise((resolve) => setTimeout(resolve, 10 * TEST_DELIVERY_QUEUE.wakeCoalesceMs));
    const runs = [];
    for await (const run of temporal.client.workflow.list({ query: `WorkflowId = '${workflowIds.endpointDeliveries(endpointId)}'` }))
      runs.push(run.status.name);
    expect(runs).toEqual(['COMPLETED']);
  });

  it('works a queue of 100,000 rows in bounded batches and history, and cancels it all when the endpoint is deleted', async () => {
    const tenant = await createTenant(stack);
    const r = await receivers.start();
    const endpointId = await endpoint(tenant, r, ['vplat.comment.created']);
    const { event } = await stack.events.record(message(tenant, 1));
    // 100,000 redeliveries of one event, due now, written in one statement.
    await stack.database.db
      .execute(sql`insert into deliveries (id, event_id, endpoint_id, customer_id, reason, workflow_id, next_attempt_at, task_queue)
      select 'dlv_bulk_' || ${endpointId} || '_' || n, ${event.id}, ${endpointId}, ${tenant.customerId}, 'redeliver', ${workflowIds.endpointDeliveries(endpointId)}, now(), ${taskQueue}
      from generate_series(1, 100000) as n`);
    await stack.events.redeliver(event, { endpointId });
    await r.waitFor(200, () => true, 20_000);
    // The per-endpoint limit holds however long the queue (the stack's default is 10).
    expect(r.maxConcurrent).toBeLessThanOrEqual(10);
    const handle = temporal.client.workflow.getHandle(workflowIds.endpointDeliveries(endpointId));
    const figures = await eventually(
      () => handle.query<QueueFigures | null>(ENDPOINT_DELIVERIES_QUERY),
      (f) => f !== null,
      15_000,
    );
    expect(figures!.backlog).toBeGreaterThan(90_000);
    // A handful of history events per drain, not per delivery.
    const { historyLength } = await handle.describe();
    expect(historyLength).toBeLessThan(60);

    // Each wait named, so a slow machine's failure says which step it was.
    const deleted = await within(
      60_000,
      'the deletion of an endpoint with 100,000 queued rows',
      call(stack.baseUrl, 'DELETE', `/v1/webhook-endpoints/${endpointId}`, { key: tenant.apiKey }),
    );
    expect(deleted.body.code).toBe(0);
    expect(await within(60_000, 'the queue workflow to end after the deletion', handle.result())).toBe('closed');
    const left = await queryRows<{ n: number }>(
      stack.database.db,
      sql`select count(*)::int as n from deliveries where endpoint_id = ${endpointId} and status = 'pending'`,
    );
    expect(left).toEqual([{ n: 0 }]);
  }, 150_000);

  it('keeps a drain alive through an attempt that outlasts its heartbeat timeout: the slow receiver gets the push once', async () => {
    // Attempts may take 12 s here, longer than the drain's 10 s heartbeat timeout.
    const queue = `${taskQueue}-slow`;
    const slowStack = await startStack({
      taskQueue: queue,
      allowInsecureWebhookUrls: true,
      ratePerMinute: POLLING_RATE,
      delivery: { retryScheduleMs: [60_000], attemptTimeoutMs: 12_000 },
    });
    const slowWorker = await startStackWorker(slowStack, queue, upstream);
    try {
      const tenant = await createTenant(slowStack);
      const slow = await receivers.start();
      slow.delayEach(11_000);
      const res = await call<{ id: string }>(slowStack.baseUrl, 'POST', '/v1/webhook-endpoints', {
        key: tenant.apiKey,
        json: { url: slow.url, eventTypes: ['*'] },
      });
      await slowStack.events.record(message(tenant, 1));
      await slow.waitFor(1, () => true, 20_000);
      const rows = await eventually(
        () => rowsOf(res.body.data.id),
        (rs) => rs[0]?.status === 'succeeded',
        5_000,
      );
      expect(rows[0]!.attemptsMade).toBe(1);
      // Nothing sends it again: no second drain took the row over.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(slow.maxConcurrent).toBe(1);
      expect(slow.pushes).toHaveLength(1);
    } finally {
      await slowWorker.stop();
      await slowStack.close();
    }
  }, 60_000);
});
