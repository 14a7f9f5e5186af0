/**
 * The roles as separate `vps serve` processes (core, worker, two gateways) on the suite's Postgres
 * and Temporal: each role's health and readiness, the ops server's Prometheus metrics (requests by
 * route and code, rate-limit rejections, RPCs, workflow outcomes, delivery attempts), structured
 * logs that carry the request id and the customer, and a graceful stop of every role: an upload in
 * flight completes, SSE clients are told to reconnect and resume without a gap, the worker drains.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { call } from '../helpers/http';
import { cleanEnv, spawnVps, UNREACHABLE_PLATFORM_ENV, type ChildHandle } from '../helpers/processes';
import { eventually, receiverPool } from '../helpers/receivers';
import { SseReader, type SseBlock } from '../helpers/sse';
import {
  createBoundSeat,
  createTenant,
  recordServiceEvent,
  requiredEnv,
  startStack,
  uniqueAccount,
  type Stack,
  type Tenant,
} from '../helpers/stack';
import { postStream, streamingMultipart } from '../helpers/videos';

/** Small, so that a handful of requests shows a rejection. */
const RATE = 8;

interface Role {
  child: ChildHandle;
  /** The role's own port (gateway API or core Connect); none for a worker. */
  url?: string;
  ops: string;
}

/** One JSON log line of a child, by message and a predicate. */
function logLine(child: ChildHandle, msg: string, match: (line: Record<string, unknown>) => boolean): Record<string, unknown> | undefined {
  for (const text of child.output().split('\n')) {
    if (!text.startsWith('{')) continue;
    const line = JSON.parse(text) as Record<string, unknown>;
    if (line.msg === msg && match(line)) return line;
  }
  return undefined;
}

/** The value of one series in Prometheus' text format; 0 when the series does not exist yet. */
async function metric(opsUrl: string, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (match?.[1] === name && wanted.every((w) => match[2]!.split(',').includes(w))) return Number(match[3]);
  }
  return 0;
}

describe('roles as processes: health, metrics, logs and graceful stop', () => {
  let stack: Stack;
  let mediaDir: string;
  let env: NodeJS.ProcessEnv;
  let core: Role;
  let worker: Role;
  const gateways: Role[] = [];
  const receivers = receiverPool();

  async function start(roles: string, extra: Record<string, string>, port?: number): Promise<Role> {
    const child = spawnVps(['serve', '--role', roles], { ...env, ...extra });
    const ops = (await child.waitFor(/^\s+Ops\s+(\S+)$/m, 90_000))[1]!;
    return { child, ops, url: port ? `http://127.0.0.1:${port}` : undefined };
  }

  beforeAll(async () => {
    stack = await startStack();
    mediaDir = mkdtempSync(path.join(os.tmpdir(), 'vps-obs-media-'));
    env = cleanEnv({
      DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
      TEMPORAL_ADDRESS: requiredEnv('TEMPORAL_ADDRESS'),
      VPS_ADMIN_TOKEN: `obs-admin-${randomBytes(16).toString('hex')}`,
      VPS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      TEMPORAL_TASK_QUEUE: `vps-observability-${process.pid}-${Date.now()}`,
      ...UNREACHABLE_PLATFORM_ENV,
      VPS_MEDIA_DIR: mediaDir,
      VPS_ALLOW_INSECURE_WEBHOOK_URLS: 'true',
      DELIVERY_RETRY_SCHEDULE_MS: '200,400',
      RATE_LIMIT_PER_MINUTE: String(RATE),
      SHUTDOWN_GRACE_MS: '10000',
      SSE_HEARTBEAT_MS: '500',
      LOG_LEVEL: 'info',
    });
    const corePort = await freePort();
    core = await start('core', { CORE_PORT: String(corePort) }, corePort);
    const ports = [await freePort(), await freePort()];
    const started = await Promise.all([
      start('worker', {}),
      ...ports.map((port) => start('gateway', { PORT: String(port), CORE_URL: core.url! }, port)),
    ]);
    worker = started[0]!;
    gateways.push(...started.slice(1));
  }, 150_000);

  afterAll(async () => {
    await Promise.all([core, worker, ...gateways].filter(Boolean).map((r) => r.child.stop()));
    await receivers.closeAll();
    await stack?.close();
    rmSync(mediaDir, { recursive: true, force: true });
  });

  const receiver = () => receivers.start();

  it('answers liveness and readiness on every role, with the checks that gate it', async () => {
    for (const role of [core, worker, ...gateways]) {
      expect((await fetch(`${role.ops}/healthz`)).status).toBe(200);
    }
    // The public port says only whether; the ops port says why, since a failure can name internal addresses.
    const publicReady = await fetch(`${gateways[0]!.url}/readyz`);
    expect([publicReady.status, await publicReady.json()]).toEqual([200, { status: 'ready' }]);
    const gatewayReady = await fetch(`${gateways[0]!.ops}/readyz`);
    expect(gatewayReady.status).toBe(200);
    const gatewayChecks = ((await gatewayReady.json()) as { checks: Array<{ name: string; ok: boolean }> }).checks;
    expect(Object.keys(gatewayChecks[1]!).sort()).toEqual(['gatesReadiness', 'latencyMs', 'name', 'ok']);
    expect(gatewayChecks.map((c) => [c.name, c.ok])).toEqual([
      ['core', true],
      ['postgres', true],
      ['temporal', true],
    ]);
    expect((await fetch(`${core.url}/readyz`)).status).toBe(200);
    const workerReady = (await (await fetch(`${worker.ops}/readyz`)).json()) as {
      status: string;
      checks: Array<{ name: string; ok: boolean }>;
    };
    expect(workerReady).toMatchObject({
      status: 'ready',
      checks: [
        { name: 'worker', ok: true },
        { name: 'postgres', ok: true },
      ],
    });
    // Metrics are for the ops port, never the public API.
    expect((await fetch(`${gateways[0]!.url}/metrics`)).status).toBe(404);
  });

  it('counts requests by route and code and rate-limit rejections, and logs each request with its id and customer', async () => {
    const tenant = await createTenant(stack);
    const gateway = gateways[0]!;
    const requestId = `obs-${randomBytes(6).toString('hex')}`;
    const codes: number[] = [];
    for (let i = 0; i <= RATE; i++) {
      const res = await call(gateway.url!, 'GET', '/v1/seats', { key: tenant.apiKey, headers: { 'x-request-id': `${requestId}-${i}` } });
      codes.push(res.body.code);
    }
    expect(codes.filter((c) => c === 0)).toHaveLength(RATE);
    expect(codes.at(-1)).toBe(2002);
    expect((await call(gateway.url!, 'GET', '/v1/seats', { key: 'nope' })).body.code).toBe(1001);

    expect(await metric(gateway.ops, 'vps_http_requests_total', { route: '/v1/seats', status: '200', code: '0' })).toBeGreaterThanOrEqual(
      RATE,
    );
    expect(
      await metric(gateway.ops, 'vps_http_requests_total', { route: '/v1/seats', status: '429', code: '2002' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      await metric(gateway.ops, 'vps_http_requests_total', { route: '/v1/seats', status: '401', code: '1001' }),
    ).toBeGreaterThanOrEqual(1);
    expect(await metric(gateway.ops, 'vps_http_request_duration_seconds_count', { route: '/v1/seats', code: '0' })).toBeGreaterThanOrEqual(
      RATE,
    );
    expect(await metric(core.ops, 'vps_rate_limit_rejections_total', { credential: 'api_key', role: 'core' })).toBeGreaterThanOrEqual(1);
    expect(await metric(core.ops, 'vps_rpc_requests_total', { rpc: 'SeatService/ListSeats', code: '0' })).toBeGreaterThanOrEqual(RATE);
    // Postgres's notification queue, read at the scrape, only where the database is held.
    const coreText = await (await fetch(`${core.ops}/metrics`)).text();
    const usage = /^vps_postgres_notification_queue_usage_ratio\{role="core"\} (\S+)$/m.exec(coreText);
    expect(Number(usage?.[1])).toBeGreaterThanOrEqual(0);
    expect(Number(usage?.[1])).toBeLessThan(1);
    expect(await (await fetch(`${gateway.ops}/metrics`)).text()).not.toContain('vps_postgres_notification_queue_usage_ratio');

    // The gateway's line and core's line of one request share its id; core's names the customer.
    const id = `${requestId}-0`;
    expect(logLine(gateway.child, 'request', (l) => l.reqId === id)).toMatchObject({
      route: '/v1/seats',
      status: 200,
      code: 0,
      role: 'gateway',
    });
    await eventually(async () => logLine(core.child, 'rpc', (l) => l.reqId === id), Boolean);
    expect(logLine(core.child, 'rpc', (l) => l.reqId === id)).toMatchObject({
      rpc: 'SeatService/ListSeats',
      customerId: tenant.customerId,
      code: 0,
    });
    expect(logLine(core.child, 'rpc', (l) => l.reqId === `${requestId}-${RATE}`)).toMatchObject({
      customerId: tenant.customerId,
      code: 2002,
    });
  });

  it('counts delivery attempts by outcome and workflow runs by outcome on the worker', async () => {
    const tenant = await createTenant(stack);
    const r = await receiver();
    r.respondWith([500, 200]);
    const gateway = gateways[1]!;
    const before = {
      failed: await metric(worker.ops, 'vps_webhook_delivery_attempts_total', { outcome: 'failed' }),
      delivered: await metric(worker.ops, 'vps_webhook_delivery_attempts_total', { outcome: 'delivered' }),
      completed: await metric(worker.ops, 'vps_workflow_outcomes_total', { workflow: 'endpointDeliveriesWorkflow', outcome: 'completed' }),
    };
    const ep = await call<{ id: string }>(gateway.url!, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url: r.url, eventTypes: ['*'] },
    });
    expect((await call(gateway.url!, 'POST', `/v1/webhook-endpoints/${ep.body.data.id}/test`, { key: tenant.apiKey })).body.code).toBe(0);
    await r.waitFor(2);
    // The endpoint's queue workflow ends when its endpoint is deleted.
    expect((await call(gateway.url!, 'DELETE', `/v1/webhook-endpoints/${ep.body.data.id}`, { key: tenant.apiKey })).body.code).toBe(0);
    await eventually(
      () => metric(worker.ops, 'vps_workflow_outcomes_total', { workflow: 'endpointDeliveriesWorkflow', outcome: 'completed' }),
      (n) => n > before.completed,
    );
    expect(await metric(worker.ops, 'vps_webhook_delivery_attempts_total', { outcome: 'failed' })).toBe(before.failed + 1);
    expect(await metric(worker.ops, 'vps_webhook_delivery_attempts_total', { outcome: 'delivered' })).toBe(before.delivered + 1);
    expect(
      await metric(worker.ops, 'vps_workflow_run_duration_seconds_count', { workflow: 'endpointDeliveriesWorkflow', outcome: 'completed' }),
    ).toBeGreaterThanOrEqual(1);
    // Process metrics come with every registry.
    expect(await metric(worker.ops, 'process_resident_memory_bytes', { role: 'worker' })).toBeGreaterThan(0);
  });

  describe('graceful stop', () => {
    // Each test stays under RATE requests with a tenant of its own; the SSE one has no endpoint,
    // so the events it records start no delivery. It streams only the type it records: the upload
    // it makes logs its own event (vplat.video.available).
    const recordEvent = (tenant: Tenant, n: number) => recordServiceEvent(stack, tenant, n);

    async function nextEvent(reader: SseReader): Promise<SseBlock> {
      for (;;) {
        const block = await reader.next(10_000);
        if (!block) throw new Error('stream ended before the next event');
        if (block.data) return block;
      }
    }

    it('the worker finishes the delivery in flight before it exits', async () => {
      const tenant = await createTenant(stack);
      const r = await receiver();
      r.delayEach(1_500);
      const gateway = gateways[1]!;
      const ep = await call<{ id: string }>(gateway.url!, 'POST', '/v1/webhook-endpoints', {
        key: tenant.apiKey,
        json: { url: r.url, eventTypes: ['*'] },
      });
      expect(ep.body.code).toBe(0);
      const sent = await call(gateway.url!, 'POST', `/v1/webhook-endpoints/${ep.body.data.id}/test`, { key: tenant.apiKey });
      expect(sent.body).toMatchObject({ code: 0 });
      // The attempt is in flight once the receiver holds the request, before it answers.
      await eventually(
        async () => r.maxConcurrent,
        (n) => n === 1,
      );
      const exit = worker.child.stop('SIGTERM');
      await worker.child.waitFor(/SIGTERM: stopping/);
      const draining = await fetch(`${worker.ops}/readyz`);
      expect([draining.status, await draining.json()]).toEqual([503, { status: 'draining' }]);
      expect(await exit).toBe(0);
      expect(r.pushes).toHaveLength(1);
      const log = await call<{ items: Array<{ status: string; attempts: unknown[] }> }>(
        gateway.url!,
        'GET',
        `/v1/webhook-endpoints/${ep.body.data.id}/deliveries`,
        { key: tenant.apiKey },
      );
      expect(log.body.data.items).toEqual([
        expect.objectContaining({ status: 'succeeded', attempts: [expect.objectContaining({ statusCode: 200 })] }),
      ]);
    });

    it('a stopping gateway finishes an upload in flight, tells SSE clients to reconnect, and they resume on the other gateway without a gap', async () => {
      const [closing, other] = gateways as [Role, Role];
      const tenant = await createTenant(stack);
      const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('obs'));
      const reader = await SseReader.open(`${closing.url}/v1/events/stream?types=service.endpoint.test`, {
        authorization: `Bearer ${tenant.apiKey}`,
      });
      await recordEvent(tenant, 1);
      const first = await nextEvent(reader);

      let exit: Promise<number | null> | undefined;
      // The upload pauses half-way; the gateway is told to stop; then the rest is sent.
      const upload = streamingMultipart({ seatId: seat.id }, 4 * 1024 * 1024, {
        at: [2 * 1024 * 1024],
        onPause: async () => {
          exit = closing.child.stop('SIGTERM');
          await closing.child.waitFor(/SIGTERM: stopping/);
        },
      });
      const uploaded = await postStream<{ id: string; status: string }>(
        `${closing.url}/v1/videos`,
        tenant.apiKey,
        upload.body,
        upload.contentType,
      );
      expect(uploaded.body).toMatchObject({ code: 0, data: { status: 'available' } });

      // The stream's last words: why it ends, and when to come back.
      const blocks: SseBlock[] = [];
      for (let block = await reader.next(10_000); block; block = await reader.next(10_000)) blocks.push(block);
      expect(blocks).toContainEqual(expect.objectContaining({ comment: expect.stringContaining('reconnect with Last-Event-ID') }));
      const retry = Number(blocks.find((b) => b.retry)?.retry);
      expect(retry).toBeGreaterThanOrEqual(250);
      expect(retry).toBeLessThan(1_250);
      const code = await exit;
      if (code !== 0) process.stdout.write(closing.child.output().slice(-4000));
      expect(code).toBe(0);
      await reader.cancel();

      // Recorded while no gateway streamed to the client: it comes first after the resume.
      await recordEvent(tenant, 2);
      const resumed = await SseReader.open(`${other.url}/v1/events/stream?types=service.endpoint.test`, {
        authorization: `Bearer ${tenant.apiKey}`,
        'last-event-id': first.id!,
      });
      await recordEvent(tenant, 3);
      const after = [await nextEvent(resumed), await nextEvent(resumed)];
      expect(after.map((b) => (JSON.parse(b.data!) as { data: { n: number } }).data.n)).toEqual([2, 3]);
      await resumed.cancel();
      // The upload landed for core: the video is there, through the other gateway.
      const video = await call(other.url!, 'GET', `/v1/videos/${uploaded.body.data.id}`, { key: tenant.apiKey });
      expect(video.body).toMatchObject({ code: 0, data: { status: 'available' } });
    });
  });
});
