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
import { request } from 'undici';
import { pushSignature } from '../../core/events/push-signature';
import { insertEndpoint } from '../../core/db/repositories/webhook-endpoints';
import { createUpstream } from '../../core/upstream';
import { SANDBOX_APP } from '../../core/upstream/settings';
import { createBenchTenant, envInt, inBatches, percentile, startBenchStack, waitUntil } from '../harness';

const N = envInt('BENCH_EVENTS', 200);
const M = envInt('BENCH_ENDPOINTS', 3);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 10);

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

async function main() {
  // The events benchmark calls no official API and publishes nothing.
  const upstream = createUpstream({
    vplat: { baseUrl: 'http://127.0.0.1:9', appId: 'x', appSecret: 'x' },
    shop: { baseUrl: 'http://127.0.0.1:9', authBaseUrl: 'http://127.0.0.1:9', appKey: 'x', appSecret: 'x' },
    timeouts: { connectMs: 1_000, totalMs: 1_000 },
  });
  const receivers = await startReceivers(M);
  const closers: Array<() => Promise<unknown>> = [() => receivers.close(), () => upstream.close()];
  try {
    const stack = await startBenchStack({
      name: 'events',
      upstream,
      delivery: { retryScheduleMs: [1_000], attemptTimeoutMs: 5_000 },
      publishing: { pollIntervalMs: 1_000, pollAttempts: 1, slowPollScheduleMs: [], postIdWaitMs: 1_000, submitTimeoutMs: 1_000, submitRetryInitialMs: 1_000, submitWaitMs: 1_000 },
      allowInsecureWebhookUrls: true,
      maxInFlightPerEndpoint: 50,
    });
    closers.unshift(() => stack.close());
    const { gateway, temporal } = stack;

    // One customer, a bound video seat, M endpoints subscribed to everything, an API key for SSE.
    const tenant = await createBenchTenant(stack, { id: 'bench-account', username: 'bench', accessToken: 'unused' });
    const signingKey = createHash('sha256').update('bench-secret').digest('hex');
    for (const endpointUrl of receivers.urls) await insertEndpoint(stack.db, { customerId: tenant.customerId, url: endpointUrl, eventTypes: ['*'], signingKey });

    // An SSE client: arrival time of every event it streams.
    const sseArrivals = new Map<string, number>();
    await stack.streamEvents(tenant.apiKey, (event, at) => sseArrivals.set(event.id, at));

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
    await waitUntil(() => receivers.total() >= 20 * M, 60_000, 'the warm-up deliveries');
    receivers.reset();
    sentAt.clear();
    sseArrivals.clear();

    const started = Date.now();
    await inBatches([...Array(N).keys()], CONCURRENCY, push);
    const ingestSeconds = (Date.now() - started) / 1000;
    await waitUntil(() => receivers.total() >= N * M, 300_000, 'the deliveries');
    const pathSeconds = (Date.now() - started) / 1000;
    await waitUntil(() => sseArrivals.size >= N, 30_000, 'the SSE events');

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
    for await (const execution of temporal.workflow.list({ query: `WorkflowType = 'webhookDeliveryWorkflow'` })) {
      const history = await temporal.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      for (const e of history.events ?? []) {
        if (e.workflowExecutionStartedEventAttributes || e.activityTaskScheduledEventAttributes || e.timerStartedEventAttributes) actions += 1;
      }
      if (++sampled >= 50) break;
    }
    if (process.env.BENCH_SHOW_HISTORY) {
      for await (const execution of temporal.workflow.list({ query: `WorkflowType = 'webhookDeliveryWorkflow'` })) {
        const history = await temporal.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
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
    for (const close of closers) await close().catch((err: unknown) => console.error('bench: cleanup failed:', err));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
