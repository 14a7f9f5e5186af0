/**
 * `vps listen` as a user runs it: a child process reading GET /v1/events/stream of the running
 * service, with the emulator behind it pushing the official webhooks that become events. The last
 * test restarts the gateway process that serves the stream while events keep arriving, and checks
 * that the listener prints the log exactly: every event once, in order.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import type { EventJson } from '../../sdk/api-types';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { subscribeToPlatformWebhooks } from '../../core/upstream/vplat/webhooks';
import { streamEvents, type StreamState } from '../../sdk/event-stream';
import { VpsApiError, VpsNetworkError } from '../../sdk/errors';
import { constructWebhookEvent, SignatureMismatchError, verifyWebhookSignature } from '../../sdk/webhook-signature';
import { call } from '../helpers/http';
import { cleanEnv, spawnVps, type ChildHandle } from '../helpers/processes';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers';
import { createTenant, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type WorkingStack } from '../helpers/working-stack';

type EventObject = EventJson;

/** Reconnects in a test's time: the default waits follow the service's `retry:` of 3 s. */
const FAST_RECONNECT = ['--reconnect-initial-ms', '100', '--reconnect-max-ms', '400'];

interface Listener {
  handle: ChildHandle;
  /** stdout alone: what a pipe into jq would get. */
  stdout(): string;
  /** Resolves once the event is on stdout. */
  printed(id: string): Promise<unknown>;
}

function exitCode(handle: ChildHandle): Promise<number | null> {
  if (handle.child.exitCode !== null) return Promise.resolve(handle.child.exitCode);
  return once(handle.child, 'exit').then(([code]) => code as number | null);
}

function lines(stdout: string): EventObject[] {
  expect(stdout.endsWith('\n')).toBe(true);
  return stdout
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as EventObject);
}

describe('vps listen', () => {
  let env: WorkingStack;
  const children: ChildHandle[] = [];
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    env = await startWorkingStack('cli-listen');
    await subscribeToPlatformWebhooks(env.sb.upstream.vplat, `${env.stack.baseUrl}/webhooks/vplat`);
  }, 120_000);
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.stop()));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await env?.close();
  });

  /** A tenant of its own with a video seat bound to a fresh emulator account: its log starts empty. */
  async function boundTenant(): Promise<{ tenant: Tenant; openId: string }> {
    const tenant = await createTenant(env.stack);
    const { account } = await bindSandboxSeat(env, tenant, 'business');
    return { tenant, openId: account.openId };
  }

  function listen(key: string, args: string[] = [], baseUrl = env.stack.baseUrl): Listener {
    const handle = spawnVps(['listen', ...args], cleanEnv({ VPS_API_KEY: key, VPS_BASE_URL: baseUrl }));
    children.push(handle);
    let stdout = '';
    handle.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    return { handle, stdout: () => stdout, printed: (id) => handle.waitFor(new RegExp(`"id":"${id}"`), 20_000) };
  }

  const comment = (openId: string, text: string) => env.sb.control('POST', `/_sandbox/accounts/${openId}/comments`, { text });
  const message = (openId: string, text: string) => env.sb.control('POST', `/_sandbox/accounts/${openId}/messages`, { text });
  /** The tenant's log, oldest first, read through the stack's own gateway. */
  /** The whole log, every page of it: a slow restart can leave more than one page of events. */
  const logged = async (tenant: Tenant) => {
    const items: EventObject[] = [];
    for (let cursor = ''; ;) {
      const page = (
        await call<{ items: EventObject[]; nextCursor: string; hasMore: boolean }>(
          env.stack.baseUrl,
          'GET',
          `/v1/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
          { key: tenant.apiKey },
        )
      ).body.data;
      items.push(...page.items);
      if (!page.hasMore) return items;
      cursor = page.nextCursor;
    }
  };
  const loggedAtLeast = (tenant: Tenant, count: number) =>
    eventually(
      () => logged(tenant),
      (items) => items.length >= count,
    );

  it("prints each event injected in the emulator as one JSON line on stdout, the log's shape and order, and exits 0 on Ctrl-C", async () => {
    const { tenant, openId } = await boundTenant();
    const listener = listen(tenant.apiKey);
    await listener.handle.waitFor(/^connected to /m);
    await comment(openId, 'Great video!');
    await message(openId, 'hello there');
    const log = await loggedAtLeast(tenant, 2);
    await listener.printed(log[1]!.id);

    expect(lines(listener.stdout())).toEqual(log);
    expect(log.map((e) => e.type).sort()).toEqual(['vplat.comment.created', 'vplat.message.received']);
    expect(await listener.handle.stop('SIGINT')).toBe(0);
  });

  it('prints only the types asked for with --events', async () => {
    const { tenant, openId } = await boundTenant();
    const listener = listen(tenant.apiKey, ['--events', 'vplat.message.received']);
    await listener.handle.waitFor(/^connected to /m);
    await comment(openId, 'not for this listener');
    await loggedAtLeast(tenant, 1);
    await message(openId, 'for this listener');
    const log = await loggedAtLeast(tenant, 2);
    await listener.printed(log[1]!.id);

    // The stream keeps the log's order, so the comment before the message would have come first.
    expect(lines(listener.stdout())).toEqual([log[1]]);
    expect(log[1]!.type).toBe('vplat.message.received');
    expect(await listener.handle.stop('SIGTERM')).toBe(0);
  });

  it("forwards each event, unsigned and in order, to --forward-to and reports the handler's status on stderr", async () => {
    const { tenant, openId } = await boundTenant();
    const handler = await startWebhookReceiver();
    receivers.push(handler);
    handler.respondWith([200, 500]);
    const listener = listen(tenant.apiKey, ['--forward-to', `${handler.url}/hook`]);
    await listener.handle.waitFor(/^connected to /m);
    await comment(openId, 'one');
    await loggedAtLeast(tenant, 1);
    await comment(openId, 'two');
    const log = await loggedAtLeast(tenant, 2);

    const pushes = await handler.waitFor(2);
    expect(pushes.map((p) => JSON.parse(p.body) as EventObject)).toEqual(log);
    for (const push of pushes) {
      expect(push.headers['content-type']).toBe('application/json');
      expect(push.headers['x-service-signature']).toBeUndefined();
    }
    await listener.handle.waitFor(new RegExp(`^forwarded ${log[1]!.id} -> 500 \\(\\d+ ms\\)$`, 'm'));
    expect(listener.handle.output()).toMatch(new RegExp(`^forwarded ${log[0]!.id} -> 200 \\(\\d+ ms\\)$`, 'm'));
    // stdout is only the events, whatever stderr says.
    expect(lines(listener.stdout())).toEqual(log);
    expect(await listener.handle.stop('SIGINT')).toBe(0);
  });

  it('signs each forward with --sign as a push is signed, with the secret it prints, so the SDK, Stripe and Standard Webhooks verify it', async () => {
    const { tenant, openId } = await boundTenant();
    const handler = await startWebhookReceiver();
    receivers.push(handler);
    const listener = listen(tenant.apiKey, ['--forward-to', `${handler.url}/hook`, '--sign']);
    const [, secret] = (await listener.handle.waitFor(/^signing forwards with secret (\S+)$/m)) as unknown as [string, string];
    // The form new endpoint secrets take: whsec_ and the standard base64 of 32 random bytes.
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    await listener.handle.waitFor(/^connected to /m);
    await comment(openId, 'check my signature');
    const [event] = await loggedAtLeast(tenant, 1);
    const [push] = await handler.waitFor(1);

    const header = push!.headers['x-service-signature'];
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(push!.headers['x-service-event-id']).toBe(event!.id);
    expect(constructWebhookEvent(push!.body, header, secret)).toEqual(event);
    const stripe = new Stripe('sk_test_not_used_for_any_request');
    const derived = createHash('sha256').update(secret).digest('hex');
    expect(stripe.webhooks.constructEvent(push!.body, header as string, derived)).toEqual(event);
    // The Standard Webhooks headers too, with the secret exactly as printed.
    expect(push!.headers['webhook-id']).toBe(event!.id);
    expect(new StandardWebhook(secret).verify(push!.body, push!.headers as Record<string, string>)).toEqual(event);
    expect(() => verifyWebhookSignature(push!.body, header, 'whsec_someone_else')).toThrow(SignatureMismatchError);
    expect(lines(listener.stdout())).toEqual([event]);
    expect(await listener.handle.stop('SIGINT')).toBe(0);

    // A secret kept from that run signs the next one's forwards too, so the handler's setting holds.
    const again = listen(tenant.apiKey, ['--forward-to', `${handler.url}/hook`, '--forward-secret', secret]);
    await again.handle.waitFor(/^connected to /m);
    await message(openId, 'signed with the kept secret');
    const [, second] = await loggedAtLeast(tenant, 2);
    const [, next] = await handler.waitFor(2);
    expect(constructWebhookEvent(next!.body, next!.headers['x-service-signature'], secret)).toEqual(second);
    expect(again.handle.output()).not.toContain(secret);
    expect(await again.handle.stop('SIGINT')).toBe(0);
  });

  it('exits 1 with the error on stderr when the key or a pattern is refused, and 2 on a usage error, without retrying', async () => {
    const { tenant } = await boundTenant();
    const badKey = listen('vps_not-a-key');
    const badPattern = listen(tenant.apiKey, ['--events', 'vplat.nope']);
    const badUrl = listen(tenant.apiKey, ['--forward-to', 'ftp://example.com/']);
    const signNothing = listen(tenant.apiKey, ['--sign']);
    expect(await Promise.all([badKey, badPattern, badUrl, signNothing].map((l) => exitCode(l.handle)))).toEqual([1, 1, 2, 2]);
    expect(signNothing.handle.output()).toMatch(/--sign: signs forwards, so it needs --forward-to/);
    expect(JSON.parse(badKey.handle.output())).toMatchObject({ code: 1001 });
    expect(JSON.parse(badPattern.handle.output())).toMatchObject({ code: 2001, message: expect.stringContaining('vplat.nope') });
    expect(badUrl.handle.output()).toMatch(/--forward-to: ftp:\/\/example.com\/ is not an http\(s\) URL/);
    expect([badKey, badPattern, badUrl, signNothing].map((l) => l.stdout())).toEqual(['', '', '', '']);
  });

  describe('across a restart of the gateway serving the stream', () => {
    let dataDir: string;
    beforeAll(() => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-listen-'));
    });
    afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

    it('reconnects with Last-Event-ID and prints every event exactly once, in order, while events keep arriving', async () => {
      const { tenant, openId } = await boundTenant();
      const port = await freePort();
      const startGateway = async () => {
        // The gateway role alone, on a fixed port so the listener reconnects to the same address,
        // reaching the test stack's core (and so its database and event hub) over HTTP.
        const gateway = spawnVps(
          ['serve', '--role', 'gateway'],
          cleanEnv({ CORE_URL: env.stack.coreUrl, PORT: String(port), VPS_DATA_DIR: dataDir }),
        );
        children.push(gateway);
        await gateway.waitFor(/vps is running/);
        return gateway;
      };
      const gateway = await startGateway();
      const listener = listen(tenant.apiKey, FAST_RECONNECT, `http://127.0.0.1:${port}`);
      await listener.handle.waitFor(/^connected to /m);

      // Events keep arriving through the stack's own gateway, one after another, until told to stop.
      let keepInjecting = true;
      let injected = 0;
      const injector = (async () => {
        while (keepInjecting) {
          await comment(openId, `comment ${++injected}`);
          await loggedAtLeast(tenant, injected);
        }
      })();
      try {
        // Seen by the listener, so the restart falls in the middle of its stream.
        await listener.printed((await loggedAtLeast(tenant, 3))[2]!.id);
        expect(await gateway.stop('SIGTERM')).toBe(0);
        await listener.handle.waitFor(/^disconnected: /m);
        const whileDown = (await logged(tenant)).length;
        await loggedAtLeast(tenant, whileDown + 3);
        await startGateway();
        await listener.handle.waitFor(/^connected to .*, resuming after evt_/m);
        const afterRestart = (await logged(tenant)).length;
        await loggedAtLeast(tenant, afterRestart + 3);
      } finally {
        keepInjecting = false;
        await injector;
      }

      const log = await logged(tenant);
      await listener.printed(log[log.length - 1]!.id);
      expect(lines(listener.stdout()).map((e) => e.id)).toEqual(log.map((e) => e.id));
      expect(await listener.handle.stop('SIGINT')).toBe(0);
    }, 120_000);
  });
});

/**
 * The SDK's stream under `vps listen`, against a loopback server scripted per connection: the
 * answers a real gateway gives only in rare moments (rate limits, 5xx, a silent connection).
 */
describe('streamEvents against a scripted server', () => {
  type Script = (req: http.IncomingMessage, res: http.ServerResponse) => void;
  let server: http.Server;
  let baseUrl: string;
  let scripts: Script[];
  let requests: http.IncomingMessage[];

  beforeEach(async () => {
    scripts = [];
    requests = [];
    server = http.createServer((req, res) => {
      requests.push(req);
      const script = scripts.shift();
      if (script) script(req, res);
      else res.writeHead(500).end('no script left');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  const event = (id: string) => ({
    id,
    platform: 'vplat',
    type: 'vplat.comment.created',
    event: 'comment.update',
    occurred_at: '',
    received_at: '',
    seat_id: null,
    data: {},
  });
  const frame = (id: string) => `id: ${id}\ndata: ${JSON.stringify(event(id))}\n\n`;
  const stream =
    (body: string, end = true): Script =>
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      res.write(`retry: 3000\n\n${body}`);
      if (end) res.end();
    };
  const refuse =
    (status: number, code: number, headers: Record<string, string> = {}): Script =>
    (_req, res) => {
      res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(JSON.stringify({ code, message: `refused with ${code}`, data: {} }));
    };

  /** The first `count` events' ids, and every state reported meanwhile. */
  async function take(
    count: number,
    options: Partial<Parameters<typeof streamEvents>[0]> = {},
  ): Promise<{ ids: string[]; states: StreamState[] }> {
    const states: StreamState[] = [];
    const ids: string[] = [];
    const events = streamEvents({
      baseUrl,
      apiKey: 'vps_test',
      backoff: { initialMs: 20, maxMs: 80 },
      onState: (s) => states.push(s),
      ...options,
    });
    for await (const e of events) {
      ids.push(e.id);
      if (ids.length === count) break;
    }
    return { ids, states };
  }

  it('resumes after the last event with Last-Event-ID when a stream ends, and sends the types', async () => {
    scripts.push(stream(frame('evt_1') + frame('evt_2')), stream(frame('evt_3')));
    const { ids, states } = await take(3, { types: ['vplat.comment.created', 'vplat.message.received'], lastEventId: 'evt_0' });
    expect(ids).toEqual(['evt_1', 'evt_2', 'evt_3']);
    expect(requests.map((r) => [r.url, r.headers['last-event-id'], r.headers.authorization])).toEqual([
      ['/v1/events/stream?types=vplat.comment.created%2Cvplat.message.received', 'evt_0', 'Bearer vps_test'],
      ['/v1/events/stream?types=vplat.comment.created%2Cvplat.message.received', 'evt_2', 'Bearer vps_test'],
    ]);
    expect(states.map((s) => s.state)).toEqual(['connected', 'disconnected', 'retrying', 'connected']);
    expect(states[1]).toEqual({ state: 'disconnected', reason: 'the service ended the stream' });
  });

  it('resumes from the position the stream started at when it ends before its first event', async () => {
    scripts.push(stream('id: evt_9\n\n'), stream(frame('evt_10')));
    const { ids } = await take(1);
    expect(ids).toEqual(['evt_10']);
    expect(requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, 'evt_9']);
  });

  it('backs off and retries 5xx answers, with or without the envelope, doubling up to the maximum', async () => {
    scripts.push(
      refuse(503, 5000),
      (_req, res) => res.writeHead(502).end('<html>bad gateway</html>'),
      refuse(504, 3002),
      stream(frame('evt_1'), false),
    );
    const { ids, states } = await take(1);
    expect(ids).toEqual(['evt_1']);
    const waits = states.filter((s) => s.state === 'retrying');
    expect(waits.map((s) => s.attempt)).toEqual([1, 2, 3]);
    waits.forEach((s, i) => {
      expect(s.delayMs).toBeGreaterThanOrEqual(Math.min(80, 20 * 2 ** i) / 2);
      expect(s.delayMs).toBeLessThanOrEqual(Math.min(80, 20 * 2 ** i));
    });
    expect(states.flatMap((s) => (s.state === 'disconnected' ? [s.reason] : []))).toEqual([
      '5000 refused with 5000',
      'HTTP 502',
      '3002 refused with 3002',
    ]);
  });

  it('waits for Retry-After on 2002 before trying again', async () => {
    scripts.push(refuse(429, 2002, { 'retry-after': '1' }), stream(frame('evt_1'), false));
    const started = Date.now();
    const { ids, states } = await take(1);
    expect(ids).toEqual(['evt_1']);
    expect(states.flatMap((s) => (s.state === 'retrying' ? [s.delayMs] : []))).toEqual([expect.any(Number)]);
    expect(states.flatMap((s) => (s.state === 'retrying' ? [s.delayMs] : []))[0]).toBeGreaterThanOrEqual(1_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('throws a refusal from 1001 to 2007 at once, and a non-service answer, without retrying', async () => {
    scripts.push(refuse(401, 1001));
    await expect(take(1)).rejects.toEqual(expect.objectContaining({ name: 'VpsApiError', code: 1001, httpStatus: 401 }));
    scripts.push(refuse(404, 1005));
    await expect(take(1, { lastEventId: 'evt_gone' })).rejects.toBeInstanceOf(VpsApiError);
    scripts.push((_req, res) => res.writeHead(404).end('not found'));
    await expect(take(1)).rejects.toBeInstanceOf(VpsNetworkError);
    expect(requests).toHaveLength(3);
  });

  it('replaces a connection that stays silent for the idle timeout, resuming where it was', async () => {
    scripts.push(stream(frame('evt_1'), false), stream(frame('evt_2'), false));
    const { ids, states } = await take(2, { idleTimeoutMs: 200 });
    expect(ids).toEqual(['evt_1', 'evt_2']);
    expect(requests[1]!.headers['last-event-id']).toBe('evt_1');
    expect(states).toContainEqual({ state: 'disconnected', reason: 'no data for 200 ms' });
  });

  it('ends without an error when its signal aborts, mid-stream or while waiting to reconnect', async () => {
    const stop = new AbortController();
    scripts.push(stream(frame('evt_1'), false));
    const ids: string[] = [];
    for await (const e of streamEvents({ baseUrl, apiKey: 'vps_test', signal: stop.signal })) {
      ids.push(e.id);
      stop.abort();
    }
    expect(ids).toEqual(['evt_1']);

    const waiting = new AbortController();
    scripts.push(refuse(503, 5000));
    const events = streamEvents({
      baseUrl,
      apiKey: 'vps_test',
      signal: waiting.signal,
      backoff: { initialMs: 60_000 },
      onState: (s) => s.state === 'retrying' && waiting.abort(),
    });
    await expect(events.next()).resolves.toEqual({ done: true, value: undefined });
  });
});
