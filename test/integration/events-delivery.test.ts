/**
 * Events end to end: the emulator pushes an official webhook, the gateway's receiver stores the
 * event, a delivery workflow on a real worker pushes it, signed, to every matching endpoint, with
 * retries on a shortened schedule and every attempt in the delivery log.
 */
import { createHmac } from 'node:crypto';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import type { RunningWorker } from '../../worker/worker';
import { SANDBOX_APP } from '../../core/upstream/settings';
import { subscribeToPlatformWebhooks } from '../../core/upstream/vplat/webhooks';
import { call } from '../helpers/http';
import { eventually, receiverPool, type RecordedPush } from '../helpers/receivers';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { verifyAsSpecSays } from '../helpers/spec-signature';
import { SseReader } from '../helpers/sse';
import { createTenant, startStack, startStackWorker, type Stack, type Tenant } from '../helpers/stack';

interface EventJson {
  id: string;
  type: string;
  event: string;
  seat_id: string;
  data: Record<string, unknown>;
}
interface DeliveryJson {
  id: string;
  status: string;
  endpointId: string;
  attempts: Array<{ attempt: number; statusCode: number | null; durationMs: number; error: string | null }>;
}

/** These tests poll the API while workflows run; the rate limit has tests of its own. */
const POLLING_RATE = 1_000_000;

describe('events: ingestion, log, signed push with retries, redeliver', () => {
  const taskQueue = `vps-events-${process.pid}-${Date.now()}`;
  let stack: Stack;
  let sb: TestSandbox;
  let worker: RunningWorker;
  const receivers = receiverPool();

  beforeAll(async () => {
    sb = await startTestSandbox();
    stack = await startStack({ taskQueue, allowInsecureWebhookUrls: true, ratePerMinute: POLLING_RATE });
    worker = await startStackWorker(stack, taskQueue, sb.upstream);
    await subscribeToPlatformWebhooks(sb.upstream.vplat, `${stack.baseUrl}/webhooks/vplat`);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await sb?.close();
    await receivers.closeAll();
  });

  const receiver = () => receivers.start();

  /** A tenant with a video seat bound to a fresh emulator account. */
  async function boundTenant(): Promise<{ tenant: Tenant; openId: string; seatId: string }> {
    const tenant = await createTenant(stack);
    const account = await sb.account('business');
    const { seat } = await stack.admin.createSeat({ customerId: tenant.customerId, track: Track.VIDEO, name: 'events' });
    await stack.admin.bindSeat({
      seatId: seat!.id,
      accountId: account.openId,
      credentials: { accessToken: account.tokens.access_token, refreshToken: account.tokens.refresh_token },
    });
    return { tenant, openId: account.openId, seatId: seat!.id };
  }

  async function endpoint(tenant: Tenant, url: string, eventTypes: string[]): Promise<{ id: string; secret: string }> {
    const res = await call<{ id: string; secret: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url, eventTypes },
    });
    expect(res.body.code).toBe(0);
    return res.body.data;
  }

  const comment = (openId: string, text: string) =>
    sb.control<{ commentId: string }>('POST', `/_sandbox/accounts/${openId}/comments`, { text });
  const events = async (tenant: Tenant, query = '') =>
    (await call<{ items: EventJson[] }>(stack.baseUrl, 'GET', `/v1/events${query}`, { key: tenant.apiKey })).body.data.items;
  const deliveriesOf = async (tenant: Tenant, eventId: string) =>
    (await call<{ items: DeliveryJson[] }>(stack.baseUrl, 'GET', `/v1/events/${eventId}/deliveries`, { key: tenant.apiKey })).body.data
      .items;
  const bodyOf = (push: RecordedPush) => JSON.parse(push.body) as EventJson;

  it('stores an injected comment once, streams it, and pushes it, signed as the spec says, to a subscribed endpoint', async () => {
    const { tenant, openId, seatId } = await boundTenant();
    const r = await receiver();
    const ep = await endpoint(tenant, r.url, ['*']);
    const stream = await SseReader.open(`${stack.baseUrl}/v1/events/stream`, { authorization: `Bearer ${tenant.apiKey}` });
    expect(stream.res.headers.get('content-type')).toContain('text/event-stream');
    const { commentId } = await comment(openId, 'Great video!');
    const streamed = await stream.nextEvent(10_000);
    await stream.cancel();

    const [push] = await r.waitFor(1);
    const header = push!.headers['x-service-signature'] as string;
    expect(push!.headers['content-type']).toBe('application/json');
    expect(verifyAsSpecSays(header, push!.body, ep.secret, Math.floor(Date.now() / 1000))).toBe(true);
    const pushed = bodyOf(push!);
    expect(pushed).toMatchObject({ platform: 'vplat', type: 'vplat.comment.created', event: 'comment.update', seat_id: seatId });
    expect(pushed.data).toMatchObject({ comment_id: commentId, comment_action: 'insert', parent_comment_id: 0, text: 'Great video!' });
    expect(Object.keys(pushed).sort()).toEqual(['data', 'event', 'id', 'occurred_at', 'platform', 'received_at', 'seat_id', 'type']);

    const logged = await events(tenant);
    expect(logged).toEqual([pushed]);
    expect(streamed.id).toBe(pushed.id);
    expect(JSON.parse(streamed.data!)).toEqual(pushed);
    const deliveries = await eventually(
      () => deliveriesOf(tenant, pushed.id),
      (d) => d[0]?.status === 'succeeded',
    );
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ endpointId: ep.id, attempts: [{ attempt: 1, statusCode: 200, error: null }] });
  });

  it('streams, on a second gateway and core, an event ingested through the first', async () => {
    const { tenant, openId } = await boundTenant();
    const second = await startStack({ taskQueue, allowInsecureWebhookUrls: true, transport: 'http', ratePerMinute: POLLING_RATE });
    try {
      const stream = await SseReader.open(`${second.baseUrl}/v1/events/stream`, { authorization: `Bearer ${tenant.apiKey}` });
      await comment(openId, 'seen everywhere');
      const block = await stream.nextEvent(10_000);
      await stream.cancel();
      expect(JSON.parse(block.data!)).toMatchObject({ type: 'vplat.comment.created', data: { text: 'seen everywhere' } });
    } finally {
      await second.close();
    }
  });

  it('pushes only to endpoints whose patterns match', async () => {
    const { tenant, openId } = await boundTenant();
    const [all, platform, exact, other] = await Promise.all([receiver(), receiver(), receiver(), receiver()]);
    await endpoint(tenant, all.url, ['*']);
    await endpoint(tenant, platform.url, ['vplat.*']);
    await endpoint(tenant, exact.url, ['vplat.comment.created']);
    await endpoint(tenant, other.url, ['vplat.message.received', 'vplat.comment.deleted']);
    await comment(openId, 'pattern check');
    await Promise.all([all.waitFor(1), platform.waitFor(1), exact.waitFor(1)]);
    const [event] = await events(tenant);
    await eventually(
      () => deliveriesOf(tenant, event!.id),
      (d) => d.length === 3 && d.every((x) => x.status === 'succeeded'),
    );
    expect(other.pushes).toHaveLength(0);
  });

  it('retries a failing receiver on the schedule and logs every attempt', async () => {
    const { tenant, openId } = await boundTenant();
    const r = await receiver();
    r.respondWith([500, 500, 200]);
    await endpoint(tenant, r.url, ['vplat.comment.created']);
    await comment(openId, 'third time lucky');
    await r.waitFor(3);
    const [event] = await events(tenant);
    const [delivery] = await eventually(
      () => deliveriesOf(tenant, event!.id),
      (d) => d[0]?.status === 'succeeded',
    );
    expect(delivery!.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    expect(delivery!.attempts[0]!.error).toBe('HTTP 500');
    expect(delivery!.attempts.every((a) => a.durationMs >= 0)).toBe(true);
    // The same event id every time: receivers deduplicate by it.
    expect(new Set(r.pushes.map((p) => bodyOf(p).id)).size).toBe(1);
  });

  it('fails a delivery after the last scheduled attempt', async () => {
    const { tenant, openId } = await boundTenant();
    const r = await receiver();
    r.respondWith(503);
    await endpoint(tenant, r.url, ['*']);
    await comment(openId, 'never delivered');
    const [event] = await eventually(
      () => events(tenant),
      (e) => e.length === 1,
    );
    const [delivery] = await eventually(
      () => deliveriesOf(tenant, event!.id),
      (d) => d[0]?.status === 'failed',
      15_000,
    );
    // One first attempt and one after each of the three pauses of the test schedule.
    expect(delivery!.attempts).toHaveLength(4);
  });

  it('follows an account moved to another customer’s seat between two pushes, and that customer’s new endpoint', async () => {
    const { tenant: first, openId, seatId } = await boundTenant();
    const a = await receiver();
    await endpoint(first, a.url, ['*']);
    await comment(openId, 'before the move');
    await a.waitFor(1);
    // Moved through the admin API: the receiver, which keeps the account's seat in memory, is told nothing.
    const second = await createTenant(stack);
    const { seat } = await stack.admin.createSeat({ customerId: second.customerId, track: Track.VIDEO, name: 'moved here' });
    await stack.admin.unbindSeat({ seatId });
    await stack.admin.bindSeat({ seatId: seat!.id, accountId: openId, credentials: { accessToken: 'at-moved', refreshToken: 'rt-moved' } });
    const b = await receiver();
    await endpoint(second, b.url, ['vplat.comment.created']);
    await comment(openId, 'after the move');
    const [push] = await b.waitFor(1);
    expect(bodyOf(push!)).toMatchObject({ seat_id: seat!.id, data: { text: 'after the move' } });
    expect((await events(first)).map((e) => e.data.text)).toEqual(['before the move']);
    expect(a.pushes).toHaveLength(1);
  });

  it('stores a repeated official push once, and refuses a bad official signature', async () => {
    const { tenant, openId } = await boundTenant();
    const body = JSON.stringify({
      client_key: SANDBOX_APP.vplatAppId,
      event: 'im_receive_msg',
      create_time: Math.floor(Date.now() / 1000),
      user_openid: openId,
      content: JSON.stringify({ message_id: 'm-dup-1', conversation_id: 'c1', type: 'text', text: { body: 'hi' }, timestamp: Date.now() }),
    });
    const t = Math.floor(Date.now() / 1000);
    const signature = `t=${t},s=${createHmac('sha256', SANDBOX_APP.vplatAppSecret).update(`${t}.${body}`).digest('hex')}`;
    const send = (sig: string) =>
      call<{ outcome: string; eventId: string }>(stack.baseUrl, 'POST', '/webhooks/vplat', {
        body,
        headers: { 'content-type': 'application/json', 'tiktok-signature': sig },
      });
    const first = await send(signature);
    const second = await send(signature);
    expect(first.body.data.outcome).toBe('stored');
    expect(second.body.data).toEqual({ outcome: 'duplicate', eventId: first.body.data.eventId });
    expect((await events(tenant)).map((e) => e.type)).toEqual(['vplat.message.received']);

    const forged = await send(signature.replace(/s=./, (m) => (m.endsWith('0') ? 's=1' : 's=0')));
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe(1001);
  });

  it('redelivers to one endpoint, or to every matching endpoint', async () => {
    const { tenant, openId } = await boundTenant();
    const [a, b] = await Promise.all([receiver(), receiver()]);
    const epA = await endpoint(tenant, a.url, ['*']);
    await endpoint(tenant, b.url, ['*']);
    await comment(openId, 'redeliver me');
    await Promise.all([a.waitFor(1), b.waitFor(1)]);
    const [event] = await events(tenant);

    const one = await call<{ items: DeliveryJson[] }>(stack.baseUrl, 'POST', `/v1/events/${event!.id}/redeliver`, {
      key: tenant.apiKey,
      json: { endpointId: epA.id },
    });
    expect(one.body.data.items).toHaveLength(1);
    await a.waitFor(2);
    const both = await call<{ items: DeliveryJson[] }>(stack.baseUrl, 'POST', `/v1/events/${event!.id}/redeliver`, { key: tenant.apiKey });
    expect(both.body).toMatchObject({ code: 0 });
    expect(both.body.data.items).toHaveLength(2);
    await Promise.all([a.waitFor(3), b.waitFor(2)]);
    expect(new Set([...a.pushes, ...b.pushes].map((p) => bodyOf(p).id))).toEqual(new Set([event!.id]));

    const unknown = await call(stack.baseUrl, 'POST', `/v1/events/${event!.id}/redeliver`, {
      key: tenant.apiKey,
      json: { endpointId: 'we_missing' },
    });
    expect(unknown.body.code).toBe(1005);
  });

  it('lists the deliveries of every endpoint of the caller, newest first, with the same filters and paging', async () => {
    const [tenant, other] = await Promise.all([createTenant(stack), createTenant(stack)]);
    const [a, b, c] = await Promise.all([receiver(), receiver(), receiver()]);
    const epA = await endpoint(tenant, a.url, ['*']);
    const epB = await endpoint(tenant, b.url, ['vplat.message.received']);
    const epOther = await endpoint(other, c.url, ['*']);
    const record = (t: Tenant, type: string) =>
      stack.events.record({
        customerId: t.customerId,
        seatId: null,
        platform: 'vplat',
        type,
        event: 'test',
        occurredAt: new Date(),
        data: {},
        sourceKey: null,
      });
    await record(tenant, 'vplat.message.received');
    await record(tenant, 'vplat.comment.created');
    await record(other, 'vplat.comment.created');
    type Page = { items: Array<DeliveryJson & { eventType: string }>; nextCursor: string | null };
    const log = async (q = '') => (await call<Page>(stack.baseUrl, 'GET', `/v1/deliveries${q}`, { key: tenant.apiKey })).body.data;

    const all = await eventually(log, (p) => p.items.length >= 3 && p.items.every((d) => d.status === 'succeeded'));
    await c.waitFor(1);
    // The other customer's delivery is in its own log only.
    expect(all.items.map((d) => d.endpointId)).not.toContain(epOther.id);
    expect(all.items).toHaveLength(3);
    // Newest first: the comment's delivery, then the message's two, written together in no set order.
    expect([all.items[0]!.eventType, all.items[0]!.endpointId]).toEqual(['vplat.comment.created', epA.id]);
    expect(new Set(all.items.slice(1).map((d) => `${d.eventType} ${d.endpointId}`))).toEqual(
      new Set([`vplat.message.received ${epA.id}`, `vplat.message.received ${epB.id}`]),
    );
    expect(all.nextCursor).toBeNull();

    expect((await log('?types=vplat.comment.created')).items.map((d) => d.endpointId)).toEqual([epA.id]);
    expect((await log('?status=failed')).items).toEqual([]);
    const first = await log('?limit=2');
    expect(first.items).toHaveLength(2);
    const rest = await log(`?limit=2&cursor=${first.nextCursor}`);
    expect([...first.items, ...rest.items].map((d) => d.id)).toEqual(all.items.map((d) => d.id));
  });

  it('stops retrying once the endpoint is deleted, and disables an endpoint whose receiver answers 410', async () => {
    const { tenant, openId } = await boundTenant();
    const failing = await receiver();
    failing.respondWith(500);
    const gone = await receiver();
    gone.respondWith(410);
    const epFailing = await endpoint(tenant, failing.url, ['*']);
    await endpoint(tenant, gone.url, ['*']);
    await comment(openId, 'stop here');
    await failing.waitFor(1);
    await call(stack.baseUrl, 'DELETE', `/v1/webhook-endpoints/${epFailing.id}`, { key: tenant.apiKey });
    const [event] = await events(tenant);
    const settled = await eventually(
      () => deliveriesOf(tenant, event!.id),
      (d) => d.every((x) => x.status !== 'pending'),
      15_000,
    );
    expect(settled.map((d) => d.status).sort()).toEqual(['cancelled', 'failed']);
    expect(gone.pushes).toHaveLength(1);

    // The disabled endpoint receives nothing more.
    await comment(openId, 'after 410');
    // The log also holds service.endpoint.disabled, written whenever the 410's outcome is: wait for the comment itself.
    await eventually(
      () => events(tenant),
      (e) => e.some((x) => x.data.text === 'after 410'),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(gone.pushes).toHaveLength(1);
  });

  it('completes a delivery whose worker was stopped during a retry wait, exactly once', async () => {
    const { tenant, openId } = await boundTenant();
    const r = await receiver();
    // Subscribed to nothing the comment matches: only the explicit redelivery below reaches it.
    const ep = await endpoint(tenant, r.url, ['vplat.message.sent']);
    // A stack and worker of their own, with a pause long enough to stop the worker inside it.
    const slowQueue = `${taskQueue}-slow`;
    const slowStack = await startStack({
      taskQueue: slowQueue,
      allowInsecureWebhookUrls: true,
      ratePerMinute: POLLING_RATE,
      delivery: { retryScheduleMs: [3_000], attemptTimeoutMs: 2_000 },
      // Its worker signs pushes to an endpoint the first stack sealed the key of.
      encryptionKey: stack.encryptionKey,
    });
    let slowWorker = await startStackWorker(slowStack, slowQueue, sb.upstream);
    try {
      await comment(openId, 'survive a restart');
      const [event] = await eventually(
        () => events(tenant),
        (e) => e.length === 1,
      );
      r.respondWith([500, 200]);
      const started = await call<{ items: DeliveryJson[] }>(slowStack.baseUrl, 'POST', `/v1/events/${event!.id}/redeliver`, {
        key: tenant.apiKey,
        json: { endpointId: ep.id },
      });
      const deliveryId = started.body.data.items[0]!.id;
      const attemptsOf = async () => (await deliveriesOf(tenant, event!.id)).find((x) => x.id === deliveryId);
      await eventually(attemptsOf, (d) => d?.attempts.length === 1);
      await slowWorker.stop();
      // The retry timer fires while no worker polls; the next worker picks the delivery up.
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      slowWorker = await startStackWorker(slowStack, slowQueue, sb.upstream);
      const done = await eventually(attemptsOf, (d) => d?.status === 'succeeded', 20_000);
      expect(done!.attempts.map((a) => a.statusCode)).toEqual([500, 200]);
      expect(r.pushes).toHaveLength(2);
    } finally {
      await slowWorker.stop();
      await slowStack.close();
    }
  });

  it('refuses endpoint URLs that resolve to private or metadata addresses', async () => {
    const strict = await startStack({ taskQueue });
    try {
      const tenant = await createTenant(strict);
      for (const url of ['https://127.0.0.1/hook', 'https://169.254.169.254/latest', 'https://10.0.0.8/x', 'https://[::1]/x']) {
        const res = await call(strict.baseUrl, 'POST', '/v1/webhook-endpoints', { key: tenant.apiKey, json: { url, eventTypes: ['*'] } });
        expect([url, res.body.code]).toEqual([url, 2001]);
      }
    } finally {
      await strict.close();
    }
  });

  it('pages the event log with a cursor and filters it by type pattern, seat and time', async () => {
    const { tenant, seatId } = await boundTenant();
    const record = (type: string, occurredAt: Date, seat: string | null = seatId) =>
      stack.events.record({
        customerId: tenant.customerId,
        seatId: seat,
        platform: 'vplat',
        type,
        event: 'test',
        occurredAt,
        data: { type },
        sourceKey: null,
      });
    const t0 = Date.now() - 60_000;
    await record('vplat.message.received', new Date(t0));
    await record('vplat.comment.created', new Date(t0 + 10_000));
    await record('vplat.message.sent', new Date(t0 + 20_000), null);
    await record('vplat.comment.deleted', new Date(t0 + 30_000));

    const page = (q: string) =>
      call<{ items: EventJson[]; nextCursor: string; hasMore: boolean }>(stack.baseUrl, 'GET', `/v1/events${q}`, { key: tenant.apiKey });
    const first = await page('?limit=3');
    expect(first.body.data.items.map((e) => e.type)).toEqual(['vplat.message.received', 'vplat.comment.created', 'vplat.message.sent']);
    expect(first.body.data.hasMore).toBe(true);
    const rest = await page(`?limit=3&cursor=${first.body.data.nextCursor}`);
    expect(rest.body.data.items.map((e) => e.type)).toEqual(['vplat.comment.deleted']);
    expect(rest.body.data.hasMore).toBe(false);
    // The last page's cursor reads what is stored later, and nothing before it.
    await record('vplat.comment.created', new Date());
    expect((await page(`?cursor=${rest.body.data.nextCursor}`)).body.data.items).toHaveLength(1);

    expect((await page('?types=vplat.comment.created,vplat.comment.deleted')).body.data.items).toHaveLength(3);
    expect((await page(`?seatId=${seatId}&types=vplat.message.sent`)).body.data.items).toHaveLength(0);
    expect((await page(`?seatId=${seatId}`)).body.data.items).toHaveLength(4);
    const since = new Date(t0 + 10_000).toISOString();
    const until = new Date(t0 + 30_000).toISOString();
    expect((await page(`?since=${since}&until=${until}`)).body.data.items.map((e) => e.type)).toEqual([
      'vplat.comment.created',
      'vplat.message.sent',
    ]);
    expect((await page('?cursor=bm9wZQ')).body.code).toBe(2001);
  });

  it('names a bad filter in the event log', async () => {
    const { tenant } = await boundTenant();
    const res = await call(stack.baseUrl, 'GET', '/v1/events?types=vplat.nope', { key: tenant.apiKey });
    expect(res.body).toMatchObject({ code: 2001, message: expect.stringContaining('types[0]') });
  });

  describe('endpoint care beyond the spec', () => {
    it('rotates a secret: during the grace period pushes carry both signatures', async () => {
      const { tenant, openId } = await boundTenant();
      const r = await receiver();
      const ep = await endpoint(tenant, r.url, ['*']);
      const rotated = await call<{ secret: string; previousSecretExpiresAt: string }>(
        stack.baseUrl,
        'POST',
        `/v1/webhook-endpoints/${ep.id}/rotate-secret`,
        { key: tenant.apiKey },
      );
      expect(rotated.body.code).toBe(0);
      expect(rotated.body.data.secret).not.toBe(ep.secret);
      expect(new Date(rotated.body.data.previousSecretExpiresAt).getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
      await comment(openId, 'rotation');
      const [push] = await r.waitFor(1);
      const header = push!.headers['x-service-signature'] as string;
      expect(header.split(',').filter((p) => p.startsWith('v1='))).toHaveLength(2);
      const now = Math.floor(Date.now() / 1000);
      expect(verifyAsSpecSays(header, push!.body, rotated.body.data.secret, now)).toBe(true);
      expect(verifyAsSpecSays(header, push!.body, ep.secret, now)).toBe(true);
    });

    it('recovers every event an endpoint missed since a time, and enables a disabled endpoint', async () => {
      const { tenant, openId } = await boundTenant();
      const r = await receiver();
      r.respondWith(410);
      const ep = await endpoint(tenant, r.url, ['vplat.comment.created']);
      const since = new Date(Date.now() - 1_000).toISOString();
      await comment(openId, 'missed one');
      await r.waitFor(1);
      const disabled = await eventually(
        async () =>
          (
            await call<{ items: Array<{ id: string; disabledAt: string | null; disabledReason: string | null }> }>(
              stack.baseUrl,
              'GET',
              '/v1/webhook-endpoints',
              { key: tenant.apiKey },
            )
          ).body.data.items,
        (items) => items.find((e) => e.id === ep.id)?.disabledAt != null,
      );
      expect(disabled.find((e) => e.id === ep.id)!.disabledReason).toContain('410');
      await comment(openId, 'missed two');
      // The disabled endpoint's disabling is itself in the log.
      await eventually(
        () => events(tenant),
        (e) => e.filter((x) => x.type === 'vplat.comment.created').length === 2 && e.some((x) => x.type === 'service.endpoint.disabled'),
      );

      const refused = await call(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${ep.id}/recover`, { key: tenant.apiKey, json: { since } });
      expect(refused.body.code).toBe(2001);
      r.respondWith(200);
      expect((await call(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${ep.id}/enable`, { key: tenant.apiKey })).body).toMatchObject({
        code: 0,
        data: { disabledAt: null },
      });
      const recovered = await call<{ redelivered: number }>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${ep.id}/recover`, {
        key: tenant.apiKey,
        json: { since },
      });
      expect(recovered.body.data).toEqual({ redelivered: 2, truncated: false });
      const pushes = await r.waitFor(3);
      expect(new Set(pushes.slice(1).map((p) => (JSON.parse(p.body) as { data: { text: string } }).data.text))).toEqual(
        new Set(['missed one', 'missed two']),
      );
      // Nothing is left to recover.
      const again = await eventually(
        async () =>
          (
            await call<{ redelivered: number }>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${ep.id}/recover`, {
              key: tenant.apiKey,
              json: { since },
            })
          ).body.data,
        (d) => d.redelivered === 0,
      );
      expect(again.redelivered).toBe(0);
    });

    it('disables an endpoint that fails every attempt for the configured time, and says so in the log', async () => {
      const queue = `${taskQueue}-disable`;
      const strict = await startStack({
        taskQueue: queue,
        allowInsecureWebhookUrls: true,
        ratePerMinute: POLLING_RATE,
        disableEndpointAfterMs: 300,
        delivery: { retryScheduleMs: [200, 200, 200, 200], attemptTimeoutMs: 2_000 },
      });
      const strictWorker = await startStackWorker(strict, queue, sb.upstream);
      try {
        const tenant = await createTenant(strict);
        const failing = await receiver();
        failing.respondWith(500);
        const watcher = await receiver();
        const res = await call<{ id: string }>(strict.baseUrl, 'POST', '/v1/webhook-endpoints', {
          key: tenant.apiKey,
          json: { url: failing.url, eventTypes: ['*'] },
        });
        await call(strict.baseUrl, 'POST', '/v1/webhook-endpoints', {
          key: tenant.apiKey,
          json: { url: watcher.url, eventTypes: ['service.endpoint.disabled'] },
        });
        await strict.events.record({
          customerId: tenant.customerId,
          seatId: null,
          platform: 'vplat',
          type: 'vplat.message.received',
          event: 'im_receive_msg',
          occurredAt: new Date(),
          data: {},
          sourceKey: null,
        });
        const [notice] = await watcher.waitFor(1, () => true, 15_000);
        expect(JSON.parse(notice!.body)).toMatchObject({
          type: 'service.endpoint.disabled',
          platform: 'service',
          data: { endpoint_id: res.body.data.id },
        });
        expect(failing.pushes.length).toBeGreaterThanOrEqual(2);
      } finally {
        await strictWorker.stop();
        await strict.close();
      }
    });

    it('keeps at most the configured number of attempts in flight to one endpoint', async () => {
      const queue = `${taskQueue}-limit`;
      const limited = await startStack({
        taskQueue: queue,
        allowInsecureWebhookUrls: true,
        ratePerMinute: POLLING_RATE,
        maxInFlightPerEndpoint: 1,
      });
      const limitedWorker = await startStackWorker(limited, queue, sb.upstream);
      try {
        const tenant = await createTenant(limited);
        const slow = await receiver();
        slow.delayEach(300);
        await call(limited.baseUrl, 'POST', '/v1/webhook-endpoints', { key: tenant.apiKey, json: { url: slow.url, eventTypes: ['*'] } });
        await Promise.all(
          [1, 2, 3, 4].map((n) =>
            limited.events.record({
              customerId: tenant.customerId,
              seatId: null,
              platform: 'vplat',
              type: 'vplat.message.received',
              event: 'im_receive_msg',
              occurredAt: new Date(),
              data: { n },
              sourceKey: null,
            }),
          ),
        );
        await slow.waitFor(4, () => true, 20_000);
        expect(slow.maxConcurrent).toBe(1);
      } finally {
        await limitedWorker.stop();
        await limited.close();
      }
    });
  });
});
