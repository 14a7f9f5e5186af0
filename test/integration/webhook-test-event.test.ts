/**
 * POST /v1/webhook-endpoints/{id}/test over real HTTP, with a real worker: the test event is logged,
 * pushed signed to the named endpoint only (whatever its patterns), and its delivery, with every
 * attempt, is in the delivery log; `vps webhooks test` prints the delivery once it has ended.
 */
import { once } from 'node:events';
import type { RunningWorker } from '../../worker/worker';
import { call } from '../helpers/http';
import { cleanEnv, spawnVps } from '../helpers/processes';
import { eventually, receiverPool } from '../helpers/receivers';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { verifyAsSpecSays } from '../helpers/spec-signature';
import { SseReader } from '../helpers/sse';
import { createTenant, messageEvent, startStack, startStackWorker, type Stack, type Tenant } from '../helpers/stack';

interface EventJson {
  id: string;
  platform: string;
  type: string;
  event: string;
  data: Record<string, unknown>;
}
interface DeliveryJson {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  status: string;
  reason: string;
  attempts: Array<{ attempt: number; statusCode: number | null; durationMs: number; error: string | null }>;
}
interface TestEventJson {
  event: EventJson;
  delivery: DeliveryJson;
}

/** These tests poll the API while workflows run; the rate limit has tests of its own. */
const POLLING_RATE = 1_000_000;

describe('POST /v1/webhook-endpoints/{id}/test', () => {
  const taskQueue = `vps-webhook-test-${process.pid}-${Date.now()}`;
  let stack: Stack;
  let sb: TestSandbox;
  let worker: RunningWorker;
  const receivers = receiverPool();

  beforeAll(async () => {
    sb = await startTestSandbox();
    stack = await startStack({ taskQueue, allowInsecureWebhookUrls: true, ratePerMinute: POLLING_RATE });
    worker = await startStackWorker(stack, taskQueue, sb.upstream);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await sb?.close();
    await receivers.closeAll();
  });

  const receiver = () => receivers.start();

  async function endpoint(tenant: Tenant, url: string, eventTypes: string[]): Promise<{ id: string; secret: string }> {
    const res = await call<{ id: string; secret: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url, eventTypes },
    });
    expect(res.body.code).toBe(0);
    return res.body.data;
  }

  const sendTest = (key: string | undefined, endpointId: string) =>
    call<TestEventJson>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${endpointId}/test`, { key });
  const endpointLog = async (tenant: Tenant, endpointId: string) =>
    (await call<{ items: DeliveryJson[] }>(stack.baseUrl, 'GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, { key: tenant.apiKey }))
      .body.data.items;
  const events = async (tenant: Tenant, query = '') =>
    (await call<{ items: EventJson[] }>(stack.baseUrl, 'GET', `/v1/events${query}`, { key: tenant.apiKey })).body.data.items;

  it('pushes a signed test event to the named endpoint only, logs it, and shows the delivery in the endpoint log', async () => {
    const tenant = await createTenant(stack);
    const [named, other] = await Promise.all([receiver(), receiver()]);
    // Subscribed to one platform type only: a test reaches the endpoint whatever its patterns.
    const ep = await endpoint(tenant, named.url, ['vplat.message.received']);
    const everything = await endpoint(tenant, other.url, ['*']);

    const res = await sendTest(tenant.apiKey, ep.id);
    expect(res.status).toBe(200);
    expect(res.body.code).toBe(0);
    const { event, delivery } = res.body.data;
    // The service makes it, so it has no official original: its event is its type.
    expect(event).toMatchObject({
      platform: 'service',
      type: 'service.endpoint.test',
      event: 'service.endpoint.test',
      data: { endpoint_id: ep.id },
    });
    expect(delivery).toMatchObject({ eventId: event.id, eventType: 'service.endpoint.test', endpointId: ep.id, reason: 'initial' });

    const [push] = await named.waitFor(1);
    expect(verifyAsSpecSays(push!.headers['x-service-signature'] as string, push!.body, ep.secret, Math.floor(Date.now() / 1000))).toBe(
      true,
    );
    expect(JSON.parse(push!.body)).toEqual(event);

    const log = await eventually(
      () => endpointLog(tenant, ep.id),
      (d) => d[0]?.status === 'succeeded',
    );
    expect(log).toEqual([
      expect.objectContaining({ id: delivery.id, attempts: [expect.objectContaining({ attempt: 1, statusCode: 200, error: null })] }),
    ]);
    // It is in the customer's log, shown to a reader who asks for test events.
    expect(await events(tenant, '?includeTest=true')).toEqual([event]);

    // Neither the "*" endpoint, a redelivery "to every matching endpoint" nor a recovery ever pushes it elsewhere.
    const redelivered = await call<{ items: DeliveryJson[] }>(stack.baseUrl, 'POST', `/v1/events/${event.id}/redeliver`, {
      key: tenant.apiKey,
    });
    expect(redelivered.body.data.items).toEqual([]);
    const recovered = await call<{ redelivered: number }>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${everything.id}/recover`, {
      key: tenant.apiKey,
      json: { since: new Date(Date.now() - 3_600_000).toISOString() },
    });
    expect(recovered.body.data).toEqual({ redelivered: 0, truncated: false });
    expect(await endpointLog(tenant, everything.id)).toEqual([]);
    expect(other.pushes).toHaveLength(0);
  });

  it('keeps test events out of GET /v1/events and the stream unless the reader asks for them', async () => {
    const tenant = await createTenant(stack);
    const r = await receiver();
    const ep = await endpoint(tenant, r.url, ['*']);
    const { event: test } = (await sendTest(tenant.apiKey, ep.id)).body.data;
    const real = await stack.events.record(messageEvent(tenant, 1, null, 'after the test'));

    const ids = (items: EventJson[]) => items.map((e) => e.id);
    expect(ids(await events(tenant))).toEqual([real.event.id]);
    expect(ids(await events(tenant, '?types=*'))).toEqual([real.event.id]);
    expect(ids(await events(tenant, '?includeTest=false'))).toEqual([real.event.id]);
    expect(ids(await events(tenant, '?includeTest=true'))).toEqual([test.id, real.event.id]);
    // Naming the test type is asking for it.
    expect(ids(await events(tenant, '?types=service.endpoint.test'))).toEqual([test.id]);
    expect((await call(stack.baseUrl, 'GET', '/v1/events?includeTest=maybe', { key: tenant.apiKey })).body).toMatchObject({
      code: 2001,
      message: expect.stringContaining('includeTest'),
    });

    // The stream, replaying the whole log from its start: the first event it sends is the first the reader asked for.
    const firstStreamed = async (query: string) => {
      const sse = await SseReader.open(`${stack.baseUrl}/v1/events/stream${query}`, {
        authorization: `Bearer ${tenant.apiKey}`,
        'last-event-id': 'start',
      });
      try {
        expect(sse.res.status).toBe(200);
        return (JSON.parse((await sse.nextEvent()).data!) as EventJson).id;
      } finally {
        await sse.cancel();
      }
    };
    expect(await firstStreamed('')).toBe(real.event.id);
    expect(await firstStreamed('?includeTest=true')).toBe(test.id);
  });

  it('shows every failed attempt of a failing receiver, and the delivery as failed', async () => {
    const tenant = await createTenant(stack);
    const r = await receiver();
    r.respondWith(500);
    const ep = await endpoint(tenant, r.url, ['*']);
    const { delivery } = (await sendTest(tenant.apiKey, ep.id)).body.data;
    // TEST_DELIVERY's schedule: three pauses, so four attempts.
    const [failed] = await eventually(
      () => endpointLog(tenant, ep.id),
      (d) => d[0]?.status === 'failed',
    );
    expect(failed!.id).toBe(delivery.id);
    expect(failed!.attempts).toHaveLength(4);
    expect(failed!.attempts.every((a) => a.statusCode === 500 && a.error?.startsWith('HTTP 500'))).toBe(true);

    // The delivery log filters by the event's type on the server, with subscription patterns.
    const filtered = (types: string) =>
      call<{ items: DeliveryJson[] }>(
        stack.baseUrl,
        'GET',
        `/v1/webhook-endpoints/${ep.id}/deliveries?types=${encodeURIComponent(types)}`,
        { key: tenant.apiKey },
      );
    expect((await filtered('service.endpoint.test')).body.data.items.map((d) => d.id)).toEqual([delivery.id]);
    expect((await filtered('vplat.*,vplat.comment.created')).body.data.items).toEqual([]);
    expect((await filtered('vplat.nope')).body).toMatchObject({ code: 2001, message: expect.stringMatching(/^types/) });
  });

  it('refuses a disabled endpoint with 2001 until it is enabled', async () => {
    const tenant = await createTenant(stack);
    const r = await receiver();
    r.respondWith([410, 200]);
    const ep = await endpoint(tenant, r.url, ['*']);
    await sendTest(tenant.apiKey, ep.id);
    await eventually(
      () => endpointLog(tenant, ep.id),
      (d) => d[0]?.status === 'failed',
    );

    const refused = await sendTest(tenant.apiKey, ep.id);
    expect(refused.body).toMatchObject({ code: 2001, data: { field: 'id' } });
    expect(refused.body.message).toContain('enable it first');

    expect((await call(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${ep.id}/enable`, { key: tenant.apiKey })).body.code).toBe(0);
    const { delivery } = (await sendTest(tenant.apiKey, ep.id)).body.data;
    await eventually(
      () => endpointLog(tenant, ep.id),
      (d) => d.find((x) => x.id === delivery.id)?.status === 'succeeded',
    );
  });

  it("answers 1005 for another customer's endpoint, 1001 without a key and 1003 on an expired plan", async () => {
    const owner = await createTenant(stack);
    const r = await receiver();
    const ep = await endpoint(owner, r.url, ['*']);
    const stranger = await createTenant(stack);
    const expired = await createTenant(stack, { planExpiresAt: new Date(Date.now() - 60_000) });

    const foreign = await sendTest(stranger.apiKey, ep.id);
    expect([foreign.status, foreign.body.code]).toEqual([404, 1005]);
    const anonymous = await sendTest(undefined, ep.id);
    expect([anonymous.status, anonymous.body.code]).toEqual([401, 1001]);
    const lapsed = await sendTest(expired.apiKey, ep.id);
    expect([lapsed.status, lapsed.body.code]).toEqual([403, 1003]);

    expect(await endpointLog(owner, ep.id)).toEqual([]);
    expect(await events(stranger)).toEqual([]);
    expect(r.pushes).toHaveLength(0);
  });

  it('`vps webhooks test <id>` prints the delivery once it has ended', async () => {
    const tenant = await createTenant(stack);
    const r = await receiver();
    const ep = await endpoint(tenant, r.url, ['vplat.*']);
    const child = spawnVps(['webhooks', 'test', ep.id], cleanEnv({ VPS_API_KEY: tenant.apiKey, VPS_BASE_URL: stack.baseUrl })).child;
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    const printed = JSON.parse(stdout) as DeliveryJson;
    expect(printed).toMatchObject({
      endpointId: ep.id,
      eventType: 'service.endpoint.test',
      status: 'succeeded',
      attempts: [{ attempt: 1, statusCode: 200 }],
    });
    expect(r.pushes).toHaveLength(1);
  });
});
