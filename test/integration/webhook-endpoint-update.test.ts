/**
 * GET and PATCH /v1/webhook-endpoints/{id} over real HTTP, with a real worker delivering: an update
 * changes what it names and keeps the rest, the secret above all (a push to the new URL verifies
 * with the secret given at creation); its URL is refused as creation refuses it; `enabled: false`
 * stops pushes and `true` resumes them. And the actions without parameters take the empty body
 * with `Content-Type: application/json` that generic fetch helpers send.
 */
import type { RunningWorker } from '../../worker/worker';
import type { Upstream } from '../../core/upstream';
import { verifyWebhookSignature } from '../../sdk';
import { call } from '../helpers/http';
import { eventually, receiverPool } from '../helpers/receivers';
import { createTenant, startStack, startStackWorker, unreachableUpstream, type Stack, type Tenant } from '../helpers/stack';

interface EndpointJson {
  id: string;
  url: string;
  eventTypes: string[];
  description: string | null;
  disabledAt: string | null;
  disabledReason: string | null;
  queue: { backlog: number };
  secret?: string;
}
interface DeliveryJson {
  id: string;
  status: string;
}

/** These tests poll the delivery log while workflows run; the rate limit has tests of its own. */
const POLLING_RATE = 1_000_000;

describe('GET and PATCH /v1/webhook-endpoints/{id}', () => {
  const taskQueue = `vps-endpoint-update-${process.pid}-${Date.now()}`;
  let stack: Stack;
  let upstream: Upstream;
  let worker: RunningWorker;
  let tenant: Tenant;
  const receivers = receiverPool();

  beforeAll(async () => {
    stack = await startStack({ taskQueue, allowInsecureWebhookUrls: true, ratePerMinute: POLLING_RATE });
    upstream = unreachableUpstream();
    worker = await startStackWorker(stack, taskQueue, upstream);
    tenant = await createTenant(stack);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
    await upstream?.close();
    await receivers.closeAll();
  });

  const api = <T = EndpointJson>(method: string, path: string, json?: unknown, key = tenant.apiKey) =>
    call<T>(stack.baseUrl, method, path, json === undefined ? { key } : { key, json });
  const patch = (id: string, json: unknown) => api('PATCH', `/v1/webhook-endpoints/${id}`, json);

  async function create(url: string, extra: Record<string, unknown> = {}): Promise<EndpointJson & { secret: string }> {
    const res = await api<EndpointJson & { secret: string }>('POST', '/v1/webhook-endpoints', { url, eventTypes: ['*'], ...extra });
    expect(res.body.code).toBe(0);
    return res.body.data;
  }

  /** Sends a test event and waits for its delivery to end; returns its final status. */
  async function testDelivery(id: string): Promise<{ status: string; eventId: string }> {
    const sent = await api<{ event: { id: string }; delivery: DeliveryJson }>('POST', `/v1/webhook-endpoints/${id}/test`);
    expect(sent.body.code).toBe(0);
    const log = await eventually(
      () => api<{ items: DeliveryJson[] }>('GET', `/v1/webhook-endpoints/${id}/deliveries`),
      (r) => r.body.data.items.some((d) => d.id === sent.body.data.delivery.id && d.status !== 'pending'),
      20_000,
    );
    return { status: log.body.data.items.find((d) => d.id === sent.body.data.delivery.id)!.status, eventId: sent.body.data.event.id };
  }

  it('reads one endpoint with its description and queue, and answers 1005 for another customer’s or an unknown one', async () => {
    const created = await create('https://93.184.215.14/hook', { description: 'Orders service' });
    expect(created.description).toBe('Orders service');

    const got = await api('GET', `/v1/webhook-endpoints/${created.id}`);
    expect([got.status, got.body.code]).toEqual([200, 0]);
    expect(got.body.data).toMatchObject({
      id: created.id,
      url: 'https://93.184.215.14/hook',
      eventTypes: ['*'],
      description: 'Orders service',
    });
    expect(got.body.data.queue).toMatchObject({ backlog: 0 });
    expect(got.body.data).not.toHaveProperty('secret');

    const stranger = await createTenant(stack);
    expect((await api('GET', `/v1/webhook-endpoints/${created.id}`, undefined, stranger.apiKey)).body.code).toBe(1005);
    expect((await api('PATCH', `/v1/webhook-endpoints/${created.id}`, { description: 'x' }, stranger.apiKey)).body.code).toBe(1005);
    expect((await api('GET', '/v1/webhook-endpoints/we_unknown')).body.code).toBe(1005);
    expect((await patch('we_unknown', { enabled: true })).body.code).toBe(1005);
  });

  it('changes the url, types and description it is given, keeps the rest, and keeps the secret', async () => {
    const [first, second] = await Promise.all([receivers.start(), receivers.start()]);
    const created = await create(first.url, { description: 'first' });
    // Stored as parsed, as at creation.
    const secondUrl = new URL(second.url).href;

    const moved = await patch(created.id, { url: secondUrl, eventTypes: ['vplat.*', 'vplat.*'] });
    expect(moved.body.code).toBe(0);
    expect(moved.body.data).toMatchObject({ id: created.id, url: secondUrl, eventTypes: ['vplat.*'], description: 'first' });
    expect(moved.body.data).not.toHaveProperty('secret');

    // The push goes to the new URL, signed with the secret given at creation.
    const { status, eventId } = await testDelivery(created.id);
    expect(status).toBe('succeeded');
    const push = second.pushes.find((p) => p.body.includes(eventId))!;
    expect(push).toBeDefined();
    expect(() => verifyWebhookSignature(push.body, push.headers, created.secret)).not.toThrow();
    expect(first.pushes.some((p) => p.body.includes(eventId))).toBe(false);

    const described = await patch(created.id, { description: 'Second receiver' });
    expect(described.body.data).toMatchObject({ url: secondUrl, eventTypes: ['vplat.*'], description: 'Second receiver' });
    expect((await patch(created.id, { description: null })).body.data.description).toBeNull();
    expect((await api('GET', `/v1/webhook-endpoints/${created.id}`)).body.data).toMatchObject({
      url: secondUrl,
      eventTypes: ['vplat.*'],
      description: null,
    });
  });

  it('refuses a URL as creation does, and bad types, descriptions and fields, with 2001 naming the field', async () => {
    const created = await create('https://93.184.215.14/hook');
    for (const [json, message] of [
      [{ url: 'https://169.254.169.254/latest' }, /^url: /],
      [{ url: 'https://10.0.0.7/hook' }, /^url: /],
      [{ url: 'ftp://example.com/hook' }, /^url: /],
      [{ url: '' }, /^url: /],
      [{ eventTypes: [] }, /^eventTypes: /],
      [{ eventTypes: ['vplat.nothing.like_this'] }, /^eventTypes: unknown event type or pattern/],
      [{ description: 'd'.repeat(501) }, /^description: must NOT have more than 500 characters/],
      [{ description: 'two\nlines' }, /^description: must be one line/],
      [{ enabled: 'yes' }, /^enabled: /],
      [{ secret: 'whsec_mine' }, /secret/],
    ] as const) {
      const refused = await patch(created.id, json);
      expect([json, refused.body.code]).toEqual([json, 2001]);
      expect(refused.body.message).toMatch(message);
    }
    // Nothing changed; an empty update changes nothing either, and answers the endpoint as it is.
    expect((await patch(created.id, {})).body).toMatchObject({ code: 0, data: { id: created.id, url: 'https://93.184.215.14/hook' } });
    expect((await api('GET', `/v1/webhook-endpoints/${created.id}`)).body.data).toMatchObject({
      url: 'https://93.184.215.14/hook',
      eventTypes: ['*'],
    });
    // A description of 500 characters (code points, an emoji being one) is accepted.
    const longest = '😀'.repeat(500);
    expect((await patch(created.id, { description: longest })).body.data.description).toBe(longest);
  });

  it('stops pushes with enabled false, without the automatic disable’s event, and resumes them with enabled true', async () => {
    const target = await receivers.start();
    const created = await create(target.url);

    const disabled = await patch(created.id, { enabled: false });
    expect(disabled.body.data).toMatchObject({ disabledAt: expect.any(String), disabledReason: 'disabled by request' });
    const refused = await api('POST', `/v1/webhook-endpoints/${created.id}/test`);
    expect(refused.body.code).toBe(2001);
    expect(refused.body.message).toContain('disabled by request');
    // Disabling again keeps the time it was first disabled.
    expect((await patch(created.id, { enabled: false })).body.data.disabledAt).toBe(disabled.body.data.disabledAt);
    const events = await api<{ items: Array<{ type: string; data: { endpoint_id?: string } }> }>('GET', '/v1/events');
    expect(events.body.data.items.some((e) => e.type === 'service.endpoint.disabled' && e.data.endpoint_id === created.id)).toBe(false);

    const enabled = await patch(created.id, { enabled: true });
    expect(enabled.body.data).toMatchObject({ disabledAt: null, disabledReason: null });
    expect((await testDelivery(created.id)).status).toBe('succeeded');
  });

  it('takes an empty body with Content-Type: application/json on test and enable, as generic fetch helpers send it', async () => {
    const target = await receivers.start();
    const created = await create(target.url);
    const empty = (action: string) =>
      call<{ event?: { type: string } }>(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${created.id}/${action}`, {
        key: tenant.apiKey,
        body: '',
        headers: { 'content-type': 'application/json' },
      });

    const tested = await empty('test');
    expect([tested.status, tested.body.code]).toEqual([200, 0]);
    expect(tested.body.data.event?.type).toBe('service.endpoint.test');
    expect((await empty('enable')).body.code).toBe(0);
    // A route whose body is required still says it is empty.
    const recover = await call(stack.baseUrl, 'POST', `/v1/webhook-endpoints/${created.id}/recover`, {
      key: tenant.apiKey,
      body: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(recover.body.code).toBe(2001);
  });
});
