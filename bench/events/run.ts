/**
 * bench/events: webhook delivery through the per-endpoint delivery queues, each figure against a
 * baseline measured in the same run. The real path throughout: an official push signed as the
 * platform signs it → the gateway's receiver (/webhooks/vplat) → the event and its outbox rows in
 * one transaction → the worker's dispatcher → the endpoint's queue workflow → its drain → a signed
 * POST to loopback receivers. Phases, in order:
 *   1. throughput: BENCH_EVENTS pushes × BENCH_ENDPOINTS endpoints, deliveries/s, against a plain
 *      loop (sign, POST, one insert per attempt; no Temporal) to the same receivers;
 *   2. latency: BENCH_RATE pushes/s for BENCH_STEADY_S s, ingestion to receipt p50/p99 (and SSE),
 *      then the plain loop at the same rate, whose CPU per delivery is the steady phases' baseline;
 *   3. isolation: the same again with a 4th endpoint answering 500 and a 5th hanging past its
 *      attempt timeout, latency of the healthy endpoints only;
 *   4. intake: accepted pushes/s of the receiver against a bare Fastify route doing one insert,
 *      driven by the same concurrent loop, in interleaved rounds: with the endpoints delivering
 *      what it accepts, and with every endpoint disabled (the route alone);
 *   5. Temporal cost: history events of every run of each endpoint's queue workflow per delivery.
 *
 *   npm run bench:events
 * Needs Postgres on 127.0.0.1:5432 and the Temporal CLI (scripts/temporal-cli.sh). Everything runs
 * in this process and talks to 127.0.0.1 only; the run stops by itself (BENCH_TIMEOUT_S at most).
 */
import { availableParallelism } from 'node:os';
import { inArray, sql as dsql } from 'drizzle-orm';
import type postgres from 'postgres';
import { queryRows } from '../../core/db/client';
import type { EventRow } from '../../core/db/repositories/events';
import { insertEndpoint, type WebhookEndpointRow } from '../../core/db/repositories/webhook-endpoints';
import { events as eventsTable } from '../../core/db/schema';
import { createUpstream } from '../../core/upstream';
import {
  ADMIN_URL,
  createBenchTenant,
  envInt,
  formatTable,
  inBatches,
  loadAverage,
  machineLine,
  percentile,
  startBenchStack,
  type BenchStack,
} from '../harness';
import { openBaselineDb, plainDeliveryAtRate, plainDeliveryLoop, startBareIntake } from './baselines';
import { countQueueHistory } from './history';
import { BENCH_ACCOUNT, closePushAgent, postOnce, sendPush, signedPush, type PushResult } from './official-push';
import { startPhaseProbe, type ProbeFigures } from './probes';
import { profilePhase } from '../cpu-profile';
import { startReceiver, type Receiver } from './receivers';

const EVENTS = envInt('BENCH_EVENTS', 2_000);
const ENDPOINTS = envInt('BENCH_ENDPOINTS', 3);
/** Senders of the throughput phase, and loops of its baseline. */
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 10);
const RATE = envInt('BENCH_RATE', 100);
const STEADY_S = envInt('BENCH_STEADY_S', 60);
const INTAKE_S = envInt('BENCH_INTAKE_S', 5);
const INTAKE_ROUNDS = envInt('BENCH_INTAKE_ROUNDS', 3);
const INTAKE_CONCURRENCY = envInt('BENCH_INTAKE_CONCURRENCY', 20);
const ATTEMPT_TIMEOUT_MS = envInt('BENCH_ATTEMPT_TIMEOUT_MS', 2_000);
const IN_FLIGHT = envInt('BENCH_IN_FLIGHT', 50);
const TIMEOUT_S = envInt('BENCH_TIMEOUT_S', 900);
const WARMUP_EVENTS = 20;

/** The targets. */
const TARGET = { throughput: 0.3, p50Ms: 50, p99Ms: 250, historyPerDelivery: 0.2, intake: 0.3, cpuPerDelivery: 1.5 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : 'n/a');

interface Endpoint {
  row: WebhookEndpointRow;
  receiver: Receiver;
}

interface Bench {
  stack: BenchStack;
  baselineDb: postgres.Sql;
  database: string;
  push: string;
  customerId: string;
  healthy: Endpoint[];
  sse: Map<string, number>;
}

// ---------------------------------------------------------------- phases

/** Pushes `count` events from `CONCURRENCY` senders; deliveries/s from the first push to the last receipt. */
async function throughputPhase(b: Bench, count: number) {
  for (const e of b.healthy) e.receiver.reset();
  const probe = await startPhaseProbe(b.baselineDb, b.database);
  const pushes: PushResult[] = [];
  const started = Date.now();
  await inBatches([...Array(count).keys()], CONCURRENCY, async () => {
    pushes.push(await sendPush(b.push));
  });
  const ingestSeconds = (Date.now() - started) / 1000;
  await waitForReceipts(b.healthy, count, 600_000, 'the throughput deliveries');
  const lastReceipt = Math.max(...b.healthy.flatMap((e) => [...e.receiver.arrivals.values()]));
  return { pushes, ingestSeconds, seconds: (lastReceipt - started) / 1000, probe: await probe.stop(count * b.healthy.length) };
}

/**
 * Sends `RATE` pushes a second for `STEADY_S` s on a fixed schedule (open loop: a slow answer
 * delays no later push), then waits for every healthy receipt. Latency counts from the scheduled
 * time, so a sender that fell behind (this process also runs the service) is not hidden.
 */
async function steadyPhase(b: Bench, name: string) {
  for (const e of b.healthy) e.receiver.reset();
  const total = RATE * STEADY_S;
  const probe = await startPhaseProbe(b.baselineDb, b.database);
  const stopProfile = await profilePhase(name);
  const start = Date.now() + 100;
  const sent: Array<PushResult & { scheduledAt: number }> = [];
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const scheduledAt = start + (i * 1000) / RATE;
    const wait = scheduledAt - Date.now();
    if (wait > 0) await sleep(wait);
    inFlight.push(sendPush(b.push).then((r) => void sent.push({ ...r, scheduledAt })));
  }
  await Promise.all(inFlight);
  await waitForReceipts(b.healthy, total, 300_000, 'the steady deliveries');
  const figures = await probe.stop(total * b.healthy.length);
  await stopProfile();
  return { sent, probe: figures };
}

/** Accepted pushes/s of each route, in interleaved rounds (bare first), medians. */
async function intakePhase(b: Bench, bareUrl: string) {
  await driveFor(bareUrl, 1);
  await driveFor(b.push, 1);
  await drainHealthy(b);
  const bare: number[] = [];
  const service: number[] = [];
  const deliveredDuring: number[] = [];
  const alone: number[] = [];
  const probes: { bare: ProbeFigures[]; service: ProbeFigures[] } = { bare: [], service: [] };
  for (let round = 0; round < INTAKE_ROUNDS; round++) {
    let probe = await startPhaseProbe(b.baselineDb, b.database);
    const bareRun = await driveFor(bareUrl, INTAKE_S);
    bare.push(bareRun.perSecond);
    probes.bare.push(await probe.stop(bareRun.accepted));
    for (const e of b.healthy) e.receiver.reset();
    probe = await startPhaseProbe(b.baselineDb, b.database);
    const run = await driveFor(b.push, INTAKE_S);
    service.push(run.perSecond);
    probes.service.push(await probe.stop(run.accepted));
    // Deliveries made while the receiver was driven: they shared the 2 cores with intake.
    deliveredDuring.push(b.healthy.reduce((n, e) => n + e.receiver.requests(), 0) / INTAKE_S);
    // The next bare round starts on a machine with no backlog to deliver.
    await waitForReceipts(b.healthy, run.accepted, 600_000, 'the intake deliveries');
    // The route alone: every endpoint disabled for the round, so accepting an event sets off no delivery.
    await setHealthyDisabled(b, true);
    alone.push((await driveFor(b.push, INTAKE_S)).perSecond);
    await setHealthyDisabled(b, false);
  }
  return {
    bare: median(bare),
    service: median(service),
    alone: median(alone),
    bareRounds: bare,
    serviceRounds: service,
    aloneRounds: alone,
    deliveredDuring: median(deliveredDuring),
    probes,
  };
}

async function setHealthyDisabled(b: Bench, disabled: boolean): Promise<void> {
  const ids = b.healthy.map((e) => e.row.id);
  if (disabled)
    await b.baselineDb`update webhook_endpoints set disabled_at = now(), disabled_reason = 'bench: intake alone' where id in ${b.baselineDb(ids)}`;
  else await b.baselineDb`update webhook_endpoints set disabled_at = null, disabled_reason = null where id in ${b.baselineDb(ids)}`;
}

/** Drives `url` with INTAKE_CONCURRENCY loops of signed pushes for `seconds`; any refusal fails the run. */
async function driveFor(url: string, seconds: number): Promise<{ accepted: number; perSecond: number }> {
  const started = Date.now();
  const deadline = started + seconds * 1000;
  let accepted = 0;
  await Promise.all(
    Array.from({ length: INTAKE_CONCURRENCY }, async () => {
      while (Date.now() < deadline) {
        if (!(await postOnce(url, signedPush()))) throw new Error(`${url} refused a push`);
        accepted += 1;
      }
    }),
  );
  return { accepted, perSecond: accepted / ((Date.now() - started) / 1000) };
}

// ---------------------------------------------------------------- measures

/** Ingestion-to-receipt latencies of a steady phase at the healthy receivers, and where the time went. */
async function steadyFigures(b: Bench, { sent, probe }: Awaited<ReturnType<typeof steadyPhase>>) {
  const receipt: number[] = [];
  for (const p of sent) for (const e of b.healthy) receipt.push(e.receiver.arrivals.get(p.eventId)! - p.scheduledAt);
  const sse = sent.map((p) => (b.sse.get(p.eventId) ?? NaN) - p.scheduledAt).filter(Number.isFinite);
  const stages = await stageTimes(b, sent);
  return {
    p50: percentile(receipt, 50),
    p99: percentile(receipt, 99),
    receipts: receipt.length,
    sse: { p50: percentile(sse, 50), p99: percentile(sse, 99), count: sse.length },
    senderLagP99: percentile(
      sent.map((p) => p.sentAt - p.scheduledAt),
      99,
    ),
    stages,
    probe,
  };
}

/**
 * Splits each healthy delivery's latency at two instants: the gateway's answer (the event and its
 * outbox rows committed) and the drain's first attempt starting (delivery_attempts.started_at, set
 * just before the POST). Stages: intake, queue (notice → dispatcher → drain → claim), POST.
 */
async function stageTimes(b: Bench, sent: Array<PushResult & { scheduledAt: number }>) {
  const ids = sent.map((p) => p.eventId);
  const endpointIds = b.healthy.map((e) => e.row.id);
  const expected = ids.length * endpointIds.length;
  let rows: Array<{ event_id: string; endpoint_id: string; started_at: Date }> = [];
  // Outcomes are written in batches after the POST: wait for the last of them.
  for (let tries = 0; tries < 100 && rows.length < expected; tries++) {
    if (tries > 0) await sleep(100);
    rows =
      await b.baselineDb`select d.event_id, d.endpoint_id, a.started_at from delivery_attempts a join deliveries d on d.id = a.delivery_id
      where a.attempt = 1 and d.event_id in ${b.baselineDb(ids)} and d.endpoint_id in ${b.baselineDb(endpointIds)}`;
  }
  const byEvent = new Map(sent.map((p) => [p.eventId, p]));
  const receivers = new Map(b.healthy.map((e) => [e.row.id, e.receiver]));
  const intake: number[] = [];
  const queue: number[] = [];
  const post: number[] = [];
  for (const p of sent) intake.push(p.answeredAt - p.scheduledAt);
  for (const r of rows) {
    const p = byEvent.get(r.event_id)!;
    const startedAt = new Date(r.started_at).getTime();
    queue.push(startedAt - p.answeredAt);
    post.push(receivers.get(r.endpoint_id)!.arrivals.get(r.event_id)! - startedAt);
  }
  const pair = (v: number[]) => `${ms(percentile(v, 50))} / ${ms(percentile(v, 99))}`;
  return { intake: pair(intake), queue: pair(queue), post: pair(post), attempts: rows.length };
}

/** Attempts recorded per endpoint so far (every outcome, failures included). */
async function attemptsByEndpoint(b: Bench, endpointIds: string[]): Promise<Map<string, number>> {
  const rows = await b.baselineDb<{ endpoint_id: string; n: number }[]>`select d.endpoint_id, count(*)::int as n from delivery_attempts a
    join deliveries d on d.id = a.delivery_id where d.endpoint_id in ${b.baselineDb(endpointIds)} group by d.endpoint_id`;
  return new Map(rows.map((r) => [r.endpoint_id, r.n]));
}

/** History events over all runs of each endpoint's queue workflow, and the attempts each endpoint had. */
async function temporalCost(b: Bench, endpointIds: string[]) {
  const byEndpoint = await attemptsByEndpoint(b, endpointIds);
  const out: Array<{ endpointId: string; runs: number; events: number; attempts: number }> = [];
  for (const endpointId of endpointIds) {
    const history = await countQueueHistory(b.stack.temporal, endpointId);
    out.push({ endpointId, ...history, attempts: byEndpoint.get(endpointId) ?? 0 });
  }
  return out;
}

// ---------------------------------------------------------------- setup

async function waitForReceipts(endpoints: Endpoint[], count: number, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!endpoints.every((e) => e.receiver.arrivals.size >= count)) {
    if (Date.now() > deadline) {
      const got = endpoints.map((e) => e.receiver.arrivals.size).join(', ');
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${got} of ${count} each`);
    }
    await sleep(20);
  }
}

/** Waits until no healthy endpoint has a pending delivery, so the next measure starts from an empty queue. */
async function drainHealthy(b: Bench): Promise<void> {
  const ids = b.healthy.map((e) => e.row.id);
  for (let tries = 0; tries < 600; tries++) {
    const [row] = await b.baselineDb<
      { n: number }[]
    >`select count(*)::int as n from deliveries where status = 'pending' and endpoint_id in ${b.baselineDb(ids)}`;
    if (row!.n === 0) return;
    await sleep(100);
  }
  throw new Error('the healthy queues did not drain within 60 s');
}

async function addEndpoint(b: Bench, receiver: Receiver): Promise<Endpoint> {
  const row = await insertEndpoint(b.stack.db, {
    customerId: b.customerId,
    url: receiver.url,
    eventTypes: ['*'],
    signingKey: `bench-${receiver.behaviour}-key`,
    standardKey: null,
  });
  return { row, receiver };
}

/** The run's database (harness names it), for the baselines' own pool and the probes. */
async function databaseName(stack: BenchStack): Promise<string> {
  const [row] = await queryRows<{ name: string }>(stack.db, dsql`select current_database() as name`);
  return row!.name;
}

function databaseUrl(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function storedEvents(stack: BenchStack, ids: string[]): Promise<EventRow[]> {
  return stack.db.select().from(eventsTable).where(inArray(eventsTable.id, ids)).orderBy(eventsTable.position);
}

function median(values: number[]): number {
  return percentile(values, 50);
}

// ---------------------------------------------------------------- the run

async function main() {
  const hardStop = setTimeout(() => {
    console.error(`bench/events: still running after BENCH_TIMEOUT_S=${TIMEOUT_S} s; stopping`);
    process.exit(2);
  }, TIMEOUT_S * 1000);
  hardStop.unref();
  const runStarted = Date.now();
  console.log(`bench/events: ${machineLine()}`);

  // The events benchmark calls no official API and publishes nothing.
  const upstream = createUpstream({
    vplat: { baseUrl: 'http://127.0.0.1:9', appId: 'x', appSecret: 'x' },
    shop: { baseUrl: 'http://127.0.0.1:9', authBaseUrl: 'http://127.0.0.1:9', appKey: 'x', appSecret: 'x' },
    timeouts: { connectMs: 1_000, totalMs: 1_000 },
  });
  const closers: Array<() => Promise<unknown>> = [() => upstream.close(), () => closePushAgent()];
  try {
    const receivers = await Promise.all([...Array(ENDPOINTS).keys()].map(() => startReceiver('ok')));
    const failing = await startReceiver('fail');
    const hanging = await startReceiver('hang');
    closers.unshift(() => Promise.all([...receivers, failing, hanging].map((r) => r.close())));
    const stack = await startBenchStack({
      name: 'events',
      upstream,
      // One retry a second later: the failing endpoint keeps its queue busy with retries too.
      delivery: { retryScheduleMs: [1_000], attemptTimeoutMs: ATTEMPT_TIMEOUT_MS },
      publishing: {
        pollIntervalMs: 1_000,
        pollAttempts: 1,
        slowPollScheduleMs: [],
        postIdWaitMs: 1_000,
        submitTimeoutMs: 1_000,
        submitRetryInitialMs: 1_000,
        submitWaitMs: 1_000,
      },
      allowInsecureWebhookUrls: true,
      maxInFlightPerEndpoint: IN_FLIGHT,
    });
    closers.unshift(() => stack.close());
    const database = await databaseName(stack);
    const baselineDb = await openBaselineDb(databaseUrl(database));
    closers.unshift(() => baselineDb.end());
    const tenant = await createBenchTenant(stack, { id: BENCH_ACCOUNT, username: 'bench', accessToken: 'unused' });
    const b: Bench = {
      stack,
      baselineDb,
      database,
      push: `${stack.gateway}/webhooks/vplat`,
      customerId: tenant.customerId,
      healthy: [],
      sse: new Map(),
    };
    for (const receiver of receivers) b.healthy.push(await addEndpoint(b, receiver));
    await stack.streamEvents(tenant.apiKey, (event, at) => b.sse.set(event.id, at));

    // Warm-up: JIT, pools, the queue workflows started and their drains open.
    await throughputPhase(b, WARMUP_EVENTS);
    await drainHealthy(b);

    console.log(`\n[1/5] throughput: ${EVENTS} events x ${ENDPOINTS} endpoints (load average ${loadAverage()})`);
    const through = await throughputPhase(b, EVENTS);
    await drainHealthy(b);
    const baselineProbe = await startPhaseProbe(baselineDb, b.database);
    const throughEvents = await storedEvents(
      stack,
      through.pushes.map((p) => p.eventId),
    );
    const targets = b.healthy.map((e) => ({ url: e.receiver.url, signingKey: e.row.signingKey }));
    const baselineSeconds = await plainDeliveryLoop(baselineDb, throughEvents, targets, CONCURRENCY);
    const deliveries = EVENTS * ENDPOINTS;
    const throughput = {
      service: deliveries / through.seconds,
      baseline: deliveries / baselineSeconds,
      ingest: EVENTS / through.ingestSeconds,
      probes: { service: through.probe, baseline: await baselineProbe.stop(deliveries) },
    };

    console.log(`[2/5] latency: ${RATE} events/s x ${ENDPOINTS} endpoints for ${STEADY_S} s (load average ${loadAverage()})`);
    const steady = await steadyFigures(b, await steadyPhase(b, 'steady'));
    await drainHealthy(b);
    // The same rate through the plain loop: the steady phases' CPU baseline.
    const steadyBaselineProbe = await startPhaseProbe(baselineDb, b.database);
    await plainDeliveryAtRate(baselineDb, throughEvents, targets, RATE, STEADY_S);
    const steadyBaseline = await steadyBaselineProbe.stop(RATE * STEADY_S * ENDPOINTS);

    console.log(`[3/5] isolation: the same with a 4th endpoint answering 500 and a 5th hanging (load average ${loadAverage()})`);
    const bad = [await addEndpoint(b, failing), await addEndpoint(b, hanging)];
    const isolated = await steadyFigures(b, await steadyPhase(b, 'isolation'));
    const badAttempts = await attemptsByEndpoint(
      b,
      bad.map((e) => e.row.id),
    );
    // Stop the bad endpoints' queues (disabled: their drains cancel what is left) and free the held requests.
    await baselineDb`update webhook_endpoints set disabled_at = now(), disabled_reason = 'bench' where id in ${baselineDb(bad.map((e) => e.row.id))}`;
    hanging.release();
    await drainHealthy(b);

    console.log(
      `[4/5] intake: ${INTAKE_ROUNDS} rounds of ${INTAKE_S} s per route, ${INTAKE_CONCURRENCY} concurrent senders (load average ${loadAverage()})`,
    );
    const bare = await startBareIntake(baselineDb);
    closers.unshift(() => bare.app.close());
    const intake = await intakePhase(b, bare.url);

    console.log(`[5/5] Temporal cost: histories of the endpoint queue workflows`);
    const cost = await temporalCost(
      b,
      [...b.healthy, ...bad].map((e) => e.row.id),
    );

    printReport({
      throughput,
      steady,
      steadyBaseline,
      isolated,
      intake,
      cost,
      healthyIds: new Set(b.healthy.map((e) => e.row.id)),
      badAttempts,
      badIds: [bad[0]!.row.id, bad[1]!.row.id],
      seconds: (Date.now() - runStarted) / 1000,
    });
  } finally {
    for (const close of closers) await close().catch((err: unknown) => console.error('bench: cleanup failed:', err));
  }
}

// ---------------------------------------------------------------- report

type SteadyFigures = Awaited<ReturnType<typeof steadyFigures>>;

function printReport(r: {
  throughput: { service: number; baseline: number; ingest: number; probes: { service: ProbeFigures; baseline: ProbeFigures } };
  steady: SteadyFigures;
  /** The plain loop at the steady phases' rate. */
  steadyBaseline: ProbeFigures;
  isolated: SteadyFigures;
  intake: Awaited<ReturnType<typeof intakePhase>>;
  cost: Awaited<ReturnType<typeof temporalCost>>;
  healthyIds: Set<string>;
  badAttempts: Map<string, number>;
  badIds: [failing: string, hanging: string];
  seconds: number;
}) {
  const sum = (rows: typeof r.cost, key: 'events' | 'attempts' | 'runs') => rows.reduce((n, c) => n + c[key], 0);
  const healthyCost = r.cost.filter((c) => r.healthyIds.has(c.endpointId));
  const perDelivery = (rows: typeof r.cost) => sum(rows, 'events') / Math.max(1, sum(rows, 'attempts'));
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const pair = (f: { p50: number; p99: number }) => `${ms(f.p50)} / ${ms(f.p99)}`;
  const latencyMet = (f: SteadyFigures) => verdict(f.p50 < TARGET.p50Ms && f.p99 < TARGET.p99Ms);
  const throughputRatio = r.throughput.service / r.throughput.baseline;
  const intakeRatio = r.intake.service / r.intake.bare;
  const aloneRatio = r.intake.alone / r.intake.bare;
  const ceiling = intakeCeiling(r.intake.probes.bare[r.intake.probes.bare.length - 1], r.throughput.probes.baseline);
  const cpuOf = (p: ProbeFigures) => (p.cpuUs ? p.cpuUs.node + p.cpuUs.postgres : NaN);
  const cpuText = (p: ProbeFigures) => (p.cpuUs ? `${p.cpuUs.node.toFixed(0)} + ${p.cpuUs.postgres.toFixed(0)}` : 'n/a');
  const cpuRatio = (p: ProbeFigures) => cpuOf(p) / cpuOf(r.steadyBaseline);

  console.log(
    `\nbench/events: ${EVENTS} events x ${ENDPOINTS} endpoints; ${RATE} events/s for ${STEADY_S} s; in-flight limit ${IN_FLIGHT}, attempt timeout ${ATTEMPT_TIMEOUT_MS} ms; ${r.seconds.toFixed(0)} s`,
  );
  console.log(`${machineLine()} (at the end)\n`);
  console.log(
    formatTable(
      ['measure', 'baseline', 'service', 'ratio', 'target', 'verdict'],
      [
        [
          `throughput, deliveries/s (baseline: plain loop, ${CONCURRENCY} at a time)`,
          r.throughput.baseline.toFixed(0),
          r.throughput.service.toFixed(0),
          throughputRatio.toFixed(2),
          `>= ${TARGET.throughput}`,
          verdict(throughputRatio >= TARGET.throughput),
        ],
        [
          `latency ingestion to receipt, p50 / p99 ms`,
          '',
          pair(r.steady),
          '',
          `< ${TARGET.p50Ms} / < ${TARGET.p99Ms}`,
          latencyMet(r.steady),
        ],
        [
          `  same, 4th endpoint 500 and 5th hanging (healthy ${ENDPOINTS})`,
          '',
          pair(r.isolated),
          '',
          `< ${TARGET.p50Ms} / < ${TARGET.p99Ms}`,
          latencyMet(r.isolated),
        ],
        [
          `CPU per healthy delivery, steady, node + Postgres µs (baseline: plain loop at ${RATE}/s)`,
          cpuText(r.steadyBaseline),
          cpuText(r.steady.probe),
          cpuRatio(r.steady.probe).toFixed(2),
          `<= ${TARGET.cpuPerDelivery}`,
          verdict(cpuRatio(r.steady.probe) <= TARGET.cpuPerDelivery),
        ],
        [
          `  same, 4th endpoint 500 and 5th hanging (healthy ${ENDPOINTS})`,
          cpuText(r.steadyBaseline),
          cpuText(r.isolated.probe),
          cpuRatio(r.isolated.probe).toFixed(2),
          '',
          '',
        ],
        [
          `Temporal history events per delivery (healthy ${ENDPOINTS})`,
          '',
          perDelivery(healthyCost).toFixed(3),
          '',
          `<= ${TARGET.historyPerDelivery}`,
          verdict(perDelivery(healthyCost) <= TARGET.historyPerDelivery),
        ],
        [
          `intake, accepted events/s (baseline: bare route, one insert)`,
          r.intake.bare.toFixed(0),
          r.intake.alone.toFixed(0),
          aloneRatio.toFixed(2),
          `>= ${TARGET.intake}`,
          verdict(aloneRatio >= TARGET.intake),
        ],
        [
          `  same while its ${ENDPOINTS} deliveries per event run on the same cores`,
          r.intake.bare.toFixed(0),
          r.intake.service.toFixed(0),
          intakeRatio.toFixed(2),
          ceiling ? `(ceiling ${(ceiling / r.intake.bare).toFixed(2)})` : '',
          ceiling ? `${(r.intake.service / ceiling).toFixed(2)} of it` : '',
        ],
        [`SSE ingestion to receipt, p50 / p99 ms (steady)`, '', pair(r.steady.sse), '', '', ''],
        [`  same, during isolation`, '', pair(r.isolated.sse), '', '', ''],
      ],
    ),
  );

  if (ceiling) {
    console.log(
      `\nceiling of intake while delivering: ${ceiling.toFixed(0)} events/s, what ${availableParallelism()} cores allow if each event cost the bare route's CPU ` +
        `and each of its ${ENDPOINTS} deliveries the plain loop's (both measured above); no service can accept more while it delivers what it accepts`,
    );
  }
  console.log(`\nthroughput: ingestion alone ${r.throughput.ingest.toFixed(0)} events/s (${CONCURRENCY} senders)`);
  console.log(
    `\nwhere the latency goes, p50 / p99 ms (intake: schedule to the gateway's answer; queue: answer to the attempt's start; POST: start to receipt)`,
  );
  console.log(
    formatTable(
      ['phase', 'intake', 'queue', 'POST', 'total', 'sender lag p99', 'receipts', 'SSE events'],
      [
        [
          'steady',
          r.steady.stages.intake,
          r.steady.stages.queue,
          r.steady.stages.post,
          pair(r.steady),
          ms(r.steady.senderLagP99),
          String(r.steady.receipts),
          String(r.steady.sse.count),
        ],
        [
          'isolation',
          r.isolated.stages.intake,
          r.isolated.stages.queue,
          r.isolated.stages.post,
          pair(r.isolated),
          ms(r.isolated.senderLagP99),
          String(r.isolated.receipts),
          String(r.isolated.sse.count),
        ],
      ],
    ),
  );
  const [failingId, hangingId] = r.badIds;
  console.log(
    `isolation: attempts recorded by the phase's end: ${r.badAttempts.get(failingId) ?? 0} to the failing (500) endpoint, ${r.badAttempts.get(hangingId) ?? 0} to the hanging one`,
  );

  console.log(
    `\nintake rounds, events/s: bare ${r.intake.bareRounds.map((v) => v.toFixed(0)).join(', ')}; service ${r.intake.serviceRounds.map((v) => v.toFixed(0)).join(', ')}; no endpoint subscribed ${r.intake.aloneRounds.map((v) => v.toFixed(0)).join(', ')}; deliveries made meanwhile ${r.intake.deliveredDuring.toFixed(0)}/s`,
  );

  console.log(`\nTemporal histories (all runs of endpoint-deliveries-<id>):`);
  console.log(
    formatTable(
      ['endpoint', 'runs', 'history events', 'attempts', 'events per attempt'],
      [
        ...r.cost.map((c) => [
          `${c.endpointId}${c.endpointId === failingId ? ' (500)' : c.endpointId === hangingId ? ' (hangs)' : ''}`,
          String(c.runs),
          String(c.events),
          String(c.attempts),
          (c.events / Math.max(1, c.attempts)).toFixed(3),
        ]),
        [
          'all endpoints',
          String(sum(r.cost, 'runs')),
          String(sum(r.cost, 'events')),
          String(sum(r.cost, 'attempts')),
          perDelivery(r.cost).toFixed(3),
        ],
      ],
    ),
  );
  console.log(
    `\nwhere the CPU and the waiting go: µs of CPU per unit (this process: gateway, core, worker and senders; Postgres backends; Temporal dev server),`,
  );
  console.log(
    `event-loop delay of this process, and the service's Postgres sessions (mean of samples every 50 ms): running, waiting on a lock, idle in a transaction`,
  );
  const probeRow = (what: string, unit: string, p: ProbeFigures) => [
    what,
    unit,
    p.cpuUs ? p.cpuUs.node.toFixed(0) : 'n/a',
    p.cpuUs ? p.cpuUs.postgres.toFixed(0) : 'n/a',
    p.cpuUs ? p.cpuUs.temporal.toFixed(0) : 'n/a',
    `${p.loopDelayMs.p50.toFixed(0)} / ${p.loopDelayMs.p99.toFixed(0)}`,
    `${p.sessions.active.toFixed(1)} / ${p.sessions.lockWait.toFixed(1)} / ${p.sessions.idleInTransaction.toFixed(1)}`,
  ];
  const last = <T>(values: T[]) => values[values.length - 1]!;
  console.log(
    formatTable(
      ['phase', 'per', 'node µs', 'postgres µs', 'temporal µs', 'loop delay p50 / p99 ms', 'sessions run / lock / idle-in-tx'],
      [
        probeRow('throughput, service', 'delivery', r.throughput.probes.service),
        probeRow('throughput, plain loop', 'delivery', r.throughput.probes.baseline),
        probeRow('steady', 'delivery', r.steady.probe),
        probeRow('steady, plain loop at the same rate', 'delivery', r.steadyBaseline),
        probeRow('isolation', 'healthy delivery', r.isolated.probe),
        probeRow('intake, service (last round)', 'event', last(r.intake.probes.service)),
        probeRow('intake, bare route (last round)', 'event', last(r.intake.probes.bare)),
      ],
    ),
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

/**
 * The most events a second any service could accept on this machine while it makes every
 * delivery of them: all cores busy, each event costing the bare route's CPU (node, Postgres) and
 * each of its deliveries the plain loop's. Both figures come from this run's probes.
 */
function intakeCeiling(bare: ProbeFigures | undefined, loop: ProbeFigures): number | undefined {
  if (!bare?.cpuUs || !loop.cpuUs) return undefined;
  const cpuUs = (c: NonNullable<ProbeFigures['cpuUs']>) => c.node + c.postgres + c.temporal;
  return (availableParallelism() * 1_000_000) / (cpuUs(bare.cpuUs) + ENDPOINTS * cpuUs(loop.cpuUs));
}
