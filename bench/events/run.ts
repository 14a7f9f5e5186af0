/**
 * bench/events: ingests N official webhook pushes through the gateway's receiver with M endpoints
 * subscribed on loopback receivers, and measures, in one run:
 *   - deliveries per second through the event path (ingest → log → Temporal delivery workflow →
 *     signed POST), against a baseline of the same signed POSTs sent straight from a loop;
 *   - p50/p99 from ingestion to receipt, for push and for an open SSE stream;
 *   - Temporal actions per delivery, read from the histories of the delivery workflows.
 *
 *   npm run bench:events   (BENCH_EVENTS=200, BENCH_ENDPOINTS=3, BENCH_CONCURRENCY=10)
 * Needs Postgres on 127.0.0.1:5432 and the Temporal CLI (scripts/temporal-cli.sh).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { request } from 'undici';
import { SealedBox } from '../../core/crypto/sealed-box';
import { openDatabase } from '../../core/db/client';
import * as seatsRepo from '../../core/db/repositories/seats';
import * as tenancy from '../../core/db/repositories/tenancy';
import { generateApiKey } from '../../core/crypto/api-keys';
import { freePort, startTemporalDevServer } from '../../core/embedded/temporal-dev-server';
import { EventHub } from '../../core/events/event-hub';
import { pushSignature } from '../../core/events/push-signature';
import { EventRecorder } from '../../core/events/recorder';
import { watchEvents } from '../../core/events/watch-events';
import { insertEndpoint } from '../../core/db/repositories/webhook-endpoints';
import { createLogger } from '../../core/logger';
import { createInProcessTransport } from '../../core/in-process-transport';
import { createCore } from '../../core/router';
import { connectTemporalClient } from '../../core/temporal/connection';
import { startWorker } from '../../core/temporal/worker';
import { createUpstream } from '../../core/upstream';
import { SANDBOX_APP } from '../../core/upstream/settings';
import { buildApp } from '../../gateway/app';

const N = Number(process.env.BENCH_EVENTS ?? 200);
const M = Number(process.env.BENCH_ENDPOINTS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Loopback receivers that note when each event id arrived. */
async function startReceivers(count: number) {
  const arrivals = new Map<string, number[]>();
  let total = 0;
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
          const list = arrivals.get(id) ?? [];
          list.push(Date.now());
          arrivals.set(id, list);
          total += 1;
          res.writeHead(200).end();
        });
      });
      server.keepAliveTimeout = 30_000;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  return {
    urls: servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`),
    arrivals,
    total: () => total,
    reset() {
      arrivals.clear();
      total = 0;
    },
    close: () => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))),
  };
}

async function inBatches<T>(items: T[], concurrency: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

async function waitUntil(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for deliveries');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main() {
  const logger = createLogger('warn', 'bench');
  const dbName = `vps_bench_events_${Date.now()}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const dev = await startTemporalDevServer({ port: await freePort(), uiPort: await freePort(), namespace: 'default' });
  const receivers = await startReceivers(M);
  const closers: Array<() => Promise<unknown>> = [() => receivers.close(), () => dev.stop()];
  try {
    const database = await openDatabase({ url: url.toString(), dataDir: '.data', poolSize: 10 });
    closers.unshift(() => database.close());
    const temporal = await connectTemporalClient({ address: dev.address, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TLS: false });
    closers.unshift(() => temporal.close());
    const taskQueue = 'bench-events';
    const events = new EventRecorder({ db: database.db, temporalClient: async () => temporal.client, delivery: { taskQueue, retryScheduleMs: [1_000], attemptTimeoutMs: 5_000 } });
    const hub = new EventHub({ listen: database.listen, logger });
    closers.unshift(() => hub.close());
    const sealedBox = new SealedBox(randomBytes(32));
    const core = createCore({
      db: database.db,
      logger,
      sealedBox,
      adminToken: undefined,
      ratePerMinute: 1_000_000_000,
      allowInsecureWebhookUrls: true,
      temporalClient: async () => temporal.client,
      taskQueue,
      tokenRefresh: { marginSeconds: 3_600, minIntervalMs: 60_000 },
      events,
      vplatApp: { appId: SANDBOX_APP.vplatAppId, appSecret: SANDBOX_APP.vplatAppSecret },
      secretGraceMs: 86_400_000,
      watchEvents: (principal, req, signal) => watchEvents({ db: database.db, hub, heartbeatMs: 15_000 }, principal, req, signal),
    });
    const app = await buildApp({ transport: createInProcessTransport(core), logger });
    await app.listen({ host: '127.0.0.1', port: 0 });
    closers.unshift(() => app.close());
    const gateway = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const upstream = createUpstream({
      vplat: { baseUrl: 'http://127.0.0.1:9', appId: 'x', appSecret: 'x' },
      shop: { baseUrl: 'http://127.0.0.1:9', authBaseUrl: 'http://127.0.0.1:9', appKey: 'x', appSecret: 'x' },
      timeouts: { connectMs: 1_000, totalMs: 1_000 },
    });
    closers.unshift(() => upstream.close());
    const worker = await startWorker({
      settings: { address: dev.address, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TLS: false },
      taskQueue,
      db: database.db,
      sealedBox,
      upstream,
      events,
      allowInsecureWebhookUrls: true,
      disableEndpointAfterMs: 432_000_000,
      maxInFlightPerEndpoint: 50,
      logger,
      shutdownGraceMs: 1_000,
    });
    closers.unshift(() => worker.stop());

    // One customer, a bound video seat, M endpoints subscribed to everything, an API key for SSE.
    const customer = await tenancy.insertCustomer(database.db, { name: 'Bench', seatQuota: 1, planExpiresAt: null });
    const user = await tenancy.insertUser(database.db, { customerId: customer.id, email: 'bench@example.com', name: 'Bench' });
    const key = generateApiKey();
    await tenancy.insertApiKey(database.db, { customerId: customer.id, userId: user!.id, name: 'bench', prefix: key.prefix, keyHash: key.hash });
    const seat = await seatsRepo.insertSeat(database.db, { customerId: customer.id, name: 'bench', track: 'video' });
    await seatsRepo.bindSeat(database.db, seat.id, { accountId: 'bench-account', accountUsername: 'bench', credentialsSealed: 'x', accessTokenExpiresAt: null, refreshTokenExpiresAt: null });
    const signingKey = createHash('sha256').update('bench-secret').digest('hex');
    for (const endpointUrl of receivers.urls) await insertEndpoint(database.db, { customerId: customer.id, url: endpointUrl, eventTypes: ['*'], signingKey });

    // An SSE client: arrival time of every event it streams.
    const sseArrivals = new Map<string, number>();
    const sseAbort = new AbortController();
    const sse = await fetch(`${gateway}/v1/events/stream`, { headers: { authorization: `Bearer ${key.plaintext}` }, signal: sseAbort.signal });
    if (!sse.ok || !sse.body) throw new Error(`SSE stream refused: HTTP ${sse.status}`);
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of sse.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let at: number;
          while ((at = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            const id = /^id: (.+)$/m.exec(frame)?.[1];
            if (id) sseArrivals.set(id, Date.now());
          }
        }
      } catch {
        // The stream ends when the benchmark aborts it.
      }
    })();

    const sentAt = new Map<string, number>();
    const push = async (i: number) => {
      const body = JSON.stringify({
        client_key: SANDBOX_APP.vplatAppId,
        event: 'im_receive_msg',
        create_time: Math.floor(Date.now() / 1000),
        user_openid: 'bench-account',
        content: JSON.stringify({ message_id: `m-${i}-${randomBytes(4).toString('hex')}`, type: 'text', text: { body: `hello ${i}` }, timestamp: Date.now() }),
      });
      const t = Math.floor(Date.now() / 1000);
      const started = Date.now();
      const res = await request(`${gateway}/webhooks/vplat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'tiktok-signature': `t=${t},s=${createHmac('sha256', SANDBOX_APP.vplatAppSecret).update(`${t}.${body}`).digest('hex')}` },
        body,
      });
      const answer = (await res.body.json()) as { data: { eventId: string } };
      sentAt.set(answer.data.eventId, started);
    };

    // Warm-up: JIT, connection pools, the worker's workflow cache.
    await inBatches([...Array(20).keys()], CONCURRENCY, push);
    await waitUntil(() => receivers.total() >= 20 * M, 60_000);
    receivers.reset();
    sentAt.clear();
    sseArrivals.clear();

    const started = Date.now();
    await inBatches([...Array(N).keys()], CONCURRENCY, push);
    const ingestSeconds = (Date.now() - started) / 1000;
    await waitUntil(() => receivers.total() >= N * M, 300_000);
    const pathSeconds = (Date.now() - started) / 1000;
    await waitUntil(() => sseArrivals.size >= N, 30_000);
    sseAbort.abort();

    const pushLatency: number[] = [];
    for (const [id, sent] of sentAt) for (const at of receivers.arrivals.get(id) ?? []) pushLatency.push(at - sent);
    const sseLatency = [...sentAt].map(([id, sent]) => (sseArrivals.get(id) ?? NaN) - sent).filter(Number.isFinite);

    // Baseline: the same number of signed POSTs of the same bodies, straight from a loop.
    receivers.reset();
    const bodies = [...Array(N * M).keys()].map((i) => ({ url: receivers.urls[i % M]!, body: JSON.stringify({ id: `evt_base_${i}`, type: 'vplat.message.received', data: { i } }) }));
    const baseStarted = Date.now();
    await inBatches(bodies, CONCURRENCY, async ({ url: target, body }) => {
      const res = await request(target, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-signature': pushSignature([signingKey], Math.floor(Date.now() / 1000), body) }, body });
      await res.body.dump();
    });
    const baseSeconds = (Date.now() - baseStarted) / 1000;

    // Temporal actions per delivery, from a sample of histories: starts, activities, timers.
    let actions = 0;
    let sampled = 0;
    for await (const execution of temporal.client.workflow.list({ query: `WorkflowType = 'webhookDeliveryWorkflow'` })) {
      const history = await temporal.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      for (const e of history.events ?? []) {
        if (e.workflowExecutionStartedEventAttributes || e.activityTaskScheduledEventAttributes || e.timerStartedEventAttributes) actions += 1;
      }
      if (++sampled >= 50) break;
    }
    if (process.env.BENCH_SHOW_HISTORY) {
      for await (const execution of temporal.client.workflow.list({ query: `WorkflowType = 'webhookDeliveryWorkflow'` })) {
        const history = await temporal.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
        console.log((history.events ?? []).map((e) => e.eventType).join(' '));
        break;
      }
    }

    const pathRate = (N * M) / pathSeconds;
    const baseRate = (N * M) / baseSeconds;
    console.log(`\nbench/events: ${N} events x ${M} endpoints, ${CONCURRENCY} concurrent senders, one machine (${process.version})`);
    console.log(`${'variant'.padEnd(52)} ${'deliveries/s'.padStart(13)} ${'ratio'.padStart(7)}`);
    console.log(`${'baseline: signed POSTs straight from a loop'.padEnd(52)} ${baseRate.toFixed(0).padStart(13)} ${'1.00'.padStart(7)}`);
    console.log(`${'event path: ingest, log, workflow, signed POST'.padEnd(52)} ${pathRate.toFixed(0).padStart(13)} ${(pathRate / baseRate).toFixed(2).padStart(7)}`);
    console.log(`\ningestion alone: ${(N / ingestSeconds).toFixed(0)} events/s (${M} workflow starts each)`);
    console.log(`ingestion to receipt, push: p50 ${percentile(pushLatency, 50)} ms, p99 ${percentile(pushLatency, 99)} ms (${pushLatency.length} deliveries)`);
    console.log(`ingestion to receipt, SSE:  p50 ${percentile(sseLatency, 50)} ms, p99 ${percentile(sseLatency, 99)} ms (${sseLatency.length} events)`);
    console.log(`Temporal actions per delivery (start + activities + timers, ${sampled} histories): ${(actions / Math.max(1, sampled)).toFixed(2)}`);
  } finally {
    for (const close of closers) await close().catch(() => undefined);
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
