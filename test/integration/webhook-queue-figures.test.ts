/**
 * Each endpoint's delivery queue as a customer reads it, over real HTTP with a real worker draining
 * the queues: GET /v1/webhook-endpoints shows the backlog, what is due, what is in flight and the
 * oldest and next due times, and `vps webhooks list` prints the same figures as JSON when piped.
 */
import { once } from 'node:events';
import type { RunningWorker } from '../../worker/worker';
import { call } from '../helpers/http';
import { cleanEnv, spawnVps } from '../helpers/processes';
import { eventually, receiverPool, type WebhookReceiver } from '../helpers/receivers';
import { createTenant, startStack, startStackWorker, type Stack, type Tenant, unreachableUpstream } from '../helpers/stack';

interface QueueJson {
  backlog: number;
  due: number;
  inFlight: number;
  oldestDueAt: string | null;
  nextDueAt: string | null;
}
interface EndpointJson {
  id: string;
  url: string;
  queue: QueueJson;
}

/** These tests poll the API while workflows run; the rate limit has tests of its own. */
const POLLING_RATE = 1_000_000;
/** A failed attempt's retry waits this long: far beyond a test, so its row stays pending, not due. */
const RETRY_AFTER_MS = 60_000;
/** How long the slow receiver takes to answer: long enough to read the queue while it waits. */
const SLOW_ANSWER_MS = 2_500;

const EMPTY_QUEUE: QueueJson = { backlog: 0, due: 0, inFlight: 0, oldestDueAt: null, nextDueAt: null };

describe('delivery queue figures of webhook endpoints', () => {
  const taskQueue = `vps-queue-figures-${process.pid}-${Date.now()}`;
  let stack: Stack;
  let worker: RunningWorker;
  const receivers = receiverPool();
  // Delivery never calls the official APIs: nothing needs to answer here.
  const upstream = unreachableUpstream();

  beforeAll(async () => {
    stack = await startStack({
      taskQueue,
      allowInsecureWebhookUrls: true,
      ratePerMinute: POLLING_RATE,
      delivery: { retryScheduleMs: [RETRY_AFTER_MS], attemptTimeoutMs: SLOW_ANSWER_MS * 2 },
      // One push at a time per endpoint, so a slow receiver leaves the rest of its queue due.
      maxInFlightPerEndpoint: 1,
    });
    worker = await startStackWorker(stack, taskQueue, upstream);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await receivers.closeAll();
    await upstream.close();
  });

  async function endpoint(tenant: Tenant, receiver: WebhookReceiver): Promise<string> {
    const res = await call<{ id: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url: receiver.url, eventTypes: ['*'] },
    });
    expect(res.body.code).toBe(0);
    return res.body.data.id;
  }
  /** A test event: one delivery, to this endpoint only, through its queue. */
  async function sendTest(tenant: Tenant, endpointId: string): Promise<void> {
    const res = await call(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${endpointId}/test`, { key: tenant.apiKey });
    expect(res.body.code).toBe(0);
  }
  async function listed(tenant: Tenant): Promise<EndpointJson[]> {
    const res = await call<{ items: EndpointJson[] }>(stack.baseUrl, 'GET', '/v1/webhook-endpoints', { key: tenant.apiKey });
    expect(res.status).toBe(200);
    return res.body.data.items;
  }
  const queueOf = async (tenant: Tenant, endpointId: string) => (await listed(tenant)).find((e) => e.id === endpointId)!.queue;

  it("shows a failing endpoint's backlog waiting for its retries, and the healthy endpoint beside it empty", async () => {
    const tenant = await createTenant(stack);
    const [failing, healthy] = await Promise.all([receivers.start(), receivers.start()]);
    failing.respondWith(500);
    const failingId = await endpoint(tenant, failing);
    const healthyId = await endpoint(tenant, healthy);
    expect((await listed(tenant)).map((e) => e.queue)).toEqual([EMPTY_QUEUE, EMPTY_QUEUE]);

    const sentAt = Date.now();
    await sendTest(tenant, failingId);
    await sendTest(tenant, failingId);
    await sendTest(tenant, healthyId);
    await Promise.all([failing.waitFor(2), healthy.waitFor(1)]);

    // Both failed once: pending, neither due nor in flight, their retry a minute after the attempt.
    const queue = await eventually(
      () => queueOf(tenant, failingId),
      (q) => q.inFlight === 0 && q.due === 0 && q.backlog === 2,
    );
    const settledAt = Date.now();
    expect(queue).toEqual({ backlog: 2, due: 0, inFlight: 0, oldestDueAt: null, nextDueAt: expect.any(String) });
    // The attempts (and so their retries' times) fell between the sends and the figures settling.
    const nextDue = new Date(queue.nextDueAt!).getTime();
    expect(nextDue).toBeGreaterThanOrEqual(sentAt + RETRY_AFTER_MS);
    expect(nextDue).toBeLessThanOrEqual(settledAt + RETRY_AFTER_MS);
    expect(
      await eventually(
        () => queueOf(tenant, healthyId),
        (q) => q.backlog === 0,
      ),
    ).toEqual(EMPTY_QUEUE);

    // `vps webhooks list`, piped, prints the same figures in its JSON.
    const child = spawnVps(['webhooks', 'list'], cleanEnv({ VPS_API_KEY: tenant.apiKey, VPS_BASE_URL: stack.baseUrl })).child;
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    const printed = JSON.parse(stdout) as { items: EndpointJson[] };
    expect(printed.items.map((e) => [e.id, e.queue])).toEqual([
      [failingId, queue],
      [healthyId, EMPTY_QUEUE],
    ]);
  });

  it('shows deliveries in flight to a slow receiver, the ones due behind them with the oldest due time, and the queue drained after', async () => {
    const tenant = await createTenant(stack);
    const slow = await receivers.start();
    slow.delayEach(SLOW_ANSWER_MS);
    const id = await endpoint(tenant, slow);

    const before = Date.now();
    await Promise.all([sendTest(tenant, id), sendTest(tenant, id), sendTest(tenant, id)]);

    // The first push waits on the receiver; the other two are due behind it (one at a time per endpoint).
    const busy = await eventually(
      () => queueOf(tenant, id),
      (q) => q.inFlight === 1 && q.due === 2,
    );
    expect(busy).toEqual({ backlog: 3, due: 2, inFlight: 1, oldestDueAt: expect.any(String), nextDueAt: busy.oldestDueAt });
    const oldestDue = new Date(busy.oldestDueAt!).getTime();
    // Database and test clocks are the same machine's; a little slack for rounding.
    expect(oldestDue).toBeGreaterThanOrEqual(before - 1_000);
    expect(oldestDue).toBeLessThanOrEqual(Date.now());

    await slow.waitFor(3, () => true, SLOW_ANSWER_MS * 3 + 10_000);
    expect(
      await eventually(
        () => queueOf(tenant, id),
        (q) => q.backlog === 0,
      ),
    ).toEqual(EMPTY_QUEUE);
  }, 60_000);
});
