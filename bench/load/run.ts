/**
 * bench/load: the service under load from many customers at once, on loopback, each figure against
 * a baseline measured in the same run:
 *   - read:  GET /v1/seats, keys in rotation, against a bare Fastify route running the same seat
 *            query (and a second bare route that also runs the authentication and rate-limit
 *            statement, the database work the service does per request);
 *   - write: POST /v1/webhook-endpoints then DELETE of the endpoint created, keys in rotation,
 *            against bare routes running the same transaction and soft delete;
 *   - SSE:   BENCH_STREAMS open GET /v1/events/stream across the keys, BENCH_SSE_EVENTS events
 *            recorded for every customer, latency from record to arrival on every stream and the
 *            time until every stream has every event, against a bare node:http fan-out of the same
 *            frames from the same notifications;
 *   - memory of the service's process, sampled before, during and after, with a PASS/FAIL bound.
 *
 * The service (gateway, core in memory, event hub) and the baselines run in two child processes;
 * autocannon, the SSE clients and the event recorder run here.
 *
 *   npm run bench:load   (BENCH_KEYS=200, BENCH_CONNECTIONS=20, BENCH_DURATION=5 s per variant and
 *                         round, BENCH_ROUNDS=3, BENCH_WARMUP_SECONDS=2, BENCH_STREAMS=1000,
 *                         BENCH_SSE_EVENTS=10, BENCH_SSE_INTERVAL_MS=1000,
 *                         BENCH_RATE_PER_MINUTE=100000, BENCH_MAX_HEAP_GROWTH_MB=32,
 *                         BENCH_MAX_RSS_GROWTH_MB=192, BENCH_TIMEOUT_SECONDS=600)
 * Needs Postgres on 127.0.0.1:5432; not Temporal (no measured route starts a workflow).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import { generateApiKey } from '../../core/crypto/api-keys';
import { openDatabase, rawQuery, type Database } from '../../core/db/client';
import { events } from '../../core/db/schema';
import { EVENTS_CHANNEL, eventNotice } from '../../core/events/stream-channel';
import { newId } from '../../core/ids';
import * as seatsRepo from '../../core/db/repositories/seats';
import * as tenancy from '../../core/db/repositories/tenancy';
import { createBenchDatabase, envInt, formatTable, inBatches, loadAverage, machineLine, percentile, waitUntil } from '../harness';
import type { ServerMessage, ServerRequest, ServerRole } from './servers';
import { openStreams, type StreamClients } from './sse-clients';

const KEYS = envInt('BENCH_KEYS', 200);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 20);
const DURATION = envInt('BENCH_DURATION', 5);
const ROUNDS = envInt('BENCH_ROUNDS', 3);
const WARMUP_SECONDS = envInt('BENCH_WARMUP_SECONDS', 2);
const STREAMS = envInt('BENCH_STREAMS', 1000);
const SSE_EVENTS = envInt('BENCH_SSE_EVENTS', 10);
// One event per customer a second (1,000 deliveries a second over 1,000 streams) is a rate both
// sides keep up with on this machine, so the latency is the fan-out's, not a queue's; 250 ms
// saturates the shared Postgres and the figures become how far each side falls behind.
const SSE_INTERVAL_MS = envInt('BENCH_SSE_INTERVAL_MS', 1_000);
// The default 60 a minute would refuse most of this load (up to about 15 requests a second per key);
// far above any key's rate here, so every request runs the limiter's statement and none is refused.
const RATE_PER_MINUTE = envInt('BENCH_RATE_PER_MINUTE', 100_000);
const MAX_HEAP_GROWTH_MB = envInt('BENCH_MAX_HEAP_GROWTH_MB', 32);
const MAX_RSS_GROWTH_MB = envInt('BENCH_MAX_RSS_GROWTH_MB', 192);
const TIMEOUT_SECONDS = envInt('BENCH_TIMEOUT_SECONDS', 600);
/** Streams opened at once. */
const OPEN_CONCURRENCY = 50;
/** How long the last event may take to reach every stream before the run fails. */
const DELIVERY_TIMEOUT_MS = 60_000;

const MB = 2 ** 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Tenant {
  customerId: string;
  apiKey: string;
}

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
}

interface MemorySample {
  rss: number;
  heapUsed: number;
  openStreams: number;
}

/** A server child process: its ports, and its memory on request. */
class ServerProcess {
  private nextId = 0;
  private readonly waiting = new Map<number, (m: MemorySample) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly ports: Record<string, number>,
  ) {
    child.on('message', (message: ServerMessage) => {
      if (message.kind !== 'memory') return;
      this.waiting.get(message.id)?.({ rss: message.rss, heapUsed: message.heapUsed, openStreams: message.openStreams });
      this.waiting.delete(message.id);
    });
  }

  static async start(role: ServerRole, databaseUrl: string): Promise<ServerProcess> {
    // --expose-gc: the memory figures before and after are read after a full collection.
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(__dirname, 'servers.ts'), role], {
      env: { ...process.env, BENCH_DATABASE_URL: databaseUrl, BENCH_RATE_PER_MINUTE: String(RATE_PER_MINUTE) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ports = await new Promise<Record<string, number>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the ${role} servers did not start within 60 s`)), 60_000);
      child.on('message', (message: ServerMessage) => {
        if (message.kind !== 'ready') return;
        clearTimeout(timer);
        resolve(message.ports);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the ${role} servers exited with ${code}`));
      });
    });
    return new ServerProcess(child, ports);
  }

  memory(gc = false): Promise<MemorySample> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error('no memory figure from the server within 10 s'));
      }, 10_000);
      this.waiting.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.child.send({ kind: 'memory', id, gc } satisfies ServerRequest);
    });
  }

  /** Asks the process to close its servers and exit; kills it if it has not within 10 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** The service's memory every 250 ms, with the peak of each phase. */
class MemoryWatch {
  readonly peaks = new Map<string, MemorySample>();
  private phase = 'idle';
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly server: ServerProcess) {}

  start(): void {
    const tick = () => {
      this.server
        .memory()
        .then((m) => {
          const peak = this.peaks.get(this.phase);
          this.peaks.set(this.phase, {
            rss: Math.max(m.rss, peak?.rss ?? 0),
            heapUsed: Math.max(m.heapUsed, peak?.heapUsed ?? 0),
            openStreams: Math.max(m.openStreams, peak?.openStreams ?? 0),
          });
        })
        .catch((err: unknown) => console.error('bench: memory sample failed:', err))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, 250);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  enter(phase: string): void {
    this.phase = phase;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Customers with a user, an API key and three bound seats each, as bench/gateway seeds one. */
async function seedTenants(database: Database, count: number): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  await inBatches([...Array(count).keys()], 10, async (i) => {
    const customer = await tenancy.insertCustomer(database.db, { name: `Load ${i}`, seatQuota: 10, planExpiresAt: null });
    const user = await tenancy.insertUser(database.db, { customerId: customer.id, email: `load-${i}@example.com`, name: `Load ${i}` });
    const key = generateApiKey();
    await tenancy.insertApiKey(database.db, {
      customerId: customer.id,
      userId: user!.id,
      name: 'load',
      prefix: key.prefix,
      keyHash: key.hash,
    });
    for (const [s, track] of (['video', 'shop', 'video'] as const).entries()) {
      const seat = await seatsRepo.insertSeat(database.db, { customerId: customer.id, name: `seat ${s}`, track });
      await seatsRepo.bindSeat(database.db, seat.id, {
        accountId: `load-${i}-${s}`,
        accountUsername: `load_${i}_${s}`,
        credentialsSealed: 'x',
        accessTokenExpiresAt: null,
        refreshTokenExpiresAt: null,
      });
    }
    tenants.push({ customerId: customer.id, apiKey: key.plaintext });
  });
  return tenants;
}

/** Each request takes the next key in rotation, so every key's bucket row is drawn from in turn. */
function keyRotation(tenants: Tenant[]) {
  let next = 0;
  return () => tenants[next++ % tenants.length]!.apiKey;
}

const readRequests = (nextKey: () => string): autocannon.Request[] => [
  {
    method: 'GET',
    path: '/v1/seats',
    setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${nextKey()}` } }),
  },
];

/** One write operation = create an endpoint, then delete it, with the same key. */
const writeRequests = (nextKey: () => string): autocannon.Request[] => [
  {
    method: 'POST',
    path: '/v1/webhook-endpoints',
    body: JSON.stringify({ url: 'http://127.0.0.1:9/load-hook', eventTypes: ['vplat.*'] }),
    setupRequest: (req, context) => {
      const key = nextKey();
      (context as { key?: string }).key = key;
      return { ...req, headers: { ...req.headers, 'content-type': 'application/json', authorization: `Bearer ${key}` } };
    },
    onResponse: (status, body, context) => {
      if (status === 200) (context as { id?: string }).id = (JSON.parse(body) as { data: { id: string } }).data.id;
    },
  },
  {
    method: 'DELETE',
    setupRequest: (req, context) => {
      const { key, id } = context as { key?: string; id?: string };
      // The create failed (it is counted as a non-2xx and fails the run): start over.
      if (!key || !id) return undefined as unknown as autocannon.Request;
      return { ...req, path: `/v1/webhook-endpoints/${id}`, headers: { ...req.headers, authorization: `Bearer ${key}` } };
    },
  },
];

async function measure(port: number, requests: autocannon.Request[], seconds: number): Promise<Measurement> {
  const result = await autocannon({ url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration: seconds, requests });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `port ${port}: ${result.non2xx} non-2xx responses (${JSON.stringify(result.statusCodeStats)}), ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total };
}

/** Warm-up of each variant, then interleaved rounds; the median of each figure is kept. */
async function compare(
  variants: Record<string, number>,
  requests: () => autocannon.Request[],
  afterEach: () => Promise<void> = async () => undefined,
): Promise<Record<string, Measurement>> {
  for (const port of Object.values(variants)) {
    await autocannon({ url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration: WARMUP_SECONDS, requests: requests() });
    await afterEach();
  }
  const runs: Record<string, Measurement[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, port] of Object.entries(variants)) {
      (runs[name] ??= []).push(await measure(port, requests(), DURATION));
      await afterEach();
    }
  }
  const mid = (xs: number[]) => percentile(xs, 50);
  return Object.fromEntries(
    Object.entries(runs).map(([name, ms]) => [
      name,
      {
        rps: mid(ms.map((m) => m.rps)),
        p50: mid(ms.map((m) => m.p50)),
        p99: mid(ms.map((m) => m.p99)),
        requests: ms.reduce((n, m) => n + m.requests, 0),
      },
    ]),
  );
}

interface FanOut {
  openMs: number;
  latencies: number[];
  /** From the first record call to the last event's arrival on the last stream. */
  completeMs: number;
  /** From the first record call to the last record's commit. */
  recordMs: number;
  /** Each round's transaction, call to commit: part of every latency, on both sides. */
  recordTx: number[];
  broken: number;
}

/**
 * One event for every customer, stored as insertEvent stores one (the row, then its NOTIFY in the
 * same transaction), all in one transaction: the round's record time is one moment for every
 * customer and stream, and the recorder is not what is measured. Recorded one insertEvent call per
 * customer instead, a round of 200 took longer than the interval on this machine, so the time until
 * every stream had every event measured the recorder. Positions still commit in order per
 * customer: nothing else stores events during the run.
 */
async function recordRound(database: Database, tenants: Tenant[], round: number): Promise<Array<{ id: string; customerId: string }>> {
  const occurredAt = new Date();
  return database.db.transaction(async (tx) => {
    const rows = await tx
      .insert(events)
      .values(
        tenants.map(({ customerId }) => ({
          id: newId('evt'),
          customerId,
          seatId: null,
          platform: 'vplat',
          type: 'vplat.message.received',
          event: 'im_receive_msg',
          occurredAt,
          data: { bench: 'load', round, text: `hello ${round}` },
          sourceKey: null,
        })),
      )
      .returning({ id: events.id, customerId: events.customerId, position: events.position });
    const notices = rows.map((r) => sql`(${eventNotice(r.customerId, r.position)})`);
    await tx.execute(sql`select pg_notify(${EVENTS_CHANNEL}, n) from (values ${sql.join(notices, sql`, `)}) as v(n)`);
    return rows;
  });
}

/**
 * Opens the streams, records SSE_EVENTS rounds of one event per customer every SSE_INTERVAL_MS,
 * and waits until every stream has every event of its customer. An event's record time is when
 * its round's transaction was begun; its arrival is when the chunk carrying it was read.
 */
async function fanOut(database: Database, origin: string, tenants: Tenant[], whileOpen: () => Promise<void>): Promise<FanOut> {
  const keys = tenants.map((t) => t.apiKey);
  const customerOfStream = (i: number) => tenants[i % tenants.length]!.customerId;
  const opening = Date.now();
  const clients: StreamClients = await openStreams(origin, keys, STREAMS, OPEN_CONCURRENCY);
  const openMs = Date.now() - opening;
  try {
    await sleep(500);
    const recordedAt = new Map<string, Map<string, number>>(tenants.map((t) => [t.customerId, new Map()]));
    const first = Date.now();
    let lastCommit = first;
    const recordTx: number[] = [];
    for (let round = 0; round < SSE_EVENTS; round++) {
      const at = Date.now();
      for (const event of await recordRound(database, tenants, round)) recordedAt.get(event.customerId)!.set(event.id, at);
      const committed = Date.now();
      recordTx.push(committed - at);
      lastCommit = committed;
      const wait = SSE_INTERVAL_MS - (Date.now() - at);
      if (wait > 0) await sleep(wait);
    }
    const expected = STREAMS * SSE_EVENTS;
    await waitUntil(
      () => clients.received() >= expected,
      DELIVERY_TIMEOUT_MS,
      `${expected} event arrivals over ${STREAMS} streams (${clients.received()} so far)`,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}; ${clients.received()} arrived`);
    });
    const latencies: number[] = [];
    let last = 0;
    for (const [i, seen] of clients.arrivals.entries()) {
      const recorded = recordedAt.get(customerOfStream(i))!;
      if (seen.size !== recorded.size) throw new Error(`stream ${i}: ${seen.size} events, expected ${recorded.size}`);
      for (const [id, at] of seen) {
        const sent = recorded.get(id);
        if (sent === undefined) throw new Error(`stream ${i}: event ${id} of another customer`);
        latencies.push(at - sent);
        last = Math.max(last, at);
      }
    }
    await whileOpen();
    return { openMs, latencies, completeMs: last - first, recordMs: lastCommit - first, recordTx, broken: clients.broken() };
  } finally {
    clients.close();
  }
}

async function main() {
  const runStarted = Date.now();
  const watchdog = setTimeout(() => {
    console.error(`bench/load: still running after ${TIMEOUT_SECONDS} s; stopping`);
    process.exit(1);
  }, TIMEOUT_SECONDS * 1000);
  watchdog.unref();
  console.log(`bench/load on ${machineLine()}`);

  const bench = await createBenchDatabase('vps_bench_load');
  const closers: Array<() => Promise<unknown>> = [() => bench.drop()];
  try {
    // Migrates the fresh database; the recorder's pool afterwards.
    const database = await openDatabase({ url: bench.url, dataDir: '.data', poolSize: 4 });
    closers.unshift(() => database.close());
    const tenants = await seedTenants(database, KEYS);

    const service = await ServerProcess.start('service', bench.url);
    closers.unshift(() => service.stop());
    const baseline = await ServerProcess.start('baseline', bench.url);
    closers.unshift(() => baseline.stop());
    const watch = new MemoryWatch(service);
    // The bare fan-out's memory too, for comparison: what 1,000 open streams cost without the layers.
    const bareWatch = new MemoryWatch(baseline);
    await sleep(1_000);
    const before = await service.memory(true);
    watch.start();

    const variants = { bare: baseline.ports.bare!, sameWork: baseline.ports.sameWork!, service: service.ports.service! };

    // The machine is shared: the load average at each phase's start is printed with its figures.
    const loadAt: Record<string, string> = {};
    watch.enter('read');
    loadAt.read = loadAverage();
    const read = await compare(variants, () => readRequests(keyRotation(tenants)));
    watch.enter('write');
    // A run's end cuts off up to one create per connection before its delete; those endpoints are
    // deleted between runs, so every run starts with none and no customer nears its limit of 20.
    let leftover = 0;
    const deleteLeftovers = async () => {
      const rows = await rawQuery<{ id: string }>(
        database.db,
        'update webhook_endpoints set deleted_at = now() where deleted_at is null returning id',
        [],
      );
      leftover += rows.length;
    };
    loadAt.write = loadAverage();
    const write = await compare(variants, () => writeRequests(keyRotation(tenants)), deleteLeftovers);

    watch.enter('sse');
    // Heap after a full collection before the streams and with them all open (every event
    // delivered): what an open stream keeps, apart from the garbage its traffic leaves.
    loadAt.sse = loadAverage();
    const serviceNoStreams = await service.memory(true);
    let serviceStreams = serviceNoStreams;
    const serviceFanOut = await fanOut(database, `http://127.0.0.1:${service.ports.service!}`, tenants, async () => {
      serviceStreams = await service.memory(true);
    });
    let serviceOpen = (await service.memory()).openStreams;
    const closeDeadline = Date.now() + 10_000;
    while (serviceOpen > 0 && Date.now() < closeDeadline) {
      await sleep(100);
      serviceOpen = (await service.memory()).openStreams;
    }
    watch.enter('sse baseline');
    await sleep(1_000);
    loadAt.sseBaseline = loadAverage();
    const bareBefore = await baseline.memory(true);
    let bareStreams = bareBefore;
    bareWatch.enter('sse baseline');
    bareWatch.start();
    const bareFanOut = await fanOut(database, `http://127.0.0.1:${baseline.ports.sse!}`, tenants, async () => {
      bareStreams = await baseline.memory(true);
    });

    bareWatch.stop();
    watch.enter('after');
    watch.stop();
    await sleep(2_000);
    await service.memory(true);
    const after = await service.memory(true);

    // Figures.
    const perKeyPerMinute = (m: Measurement) => ((m.rps / KEYS) * 60).toFixed(0);
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
    console.log(
      `\n${KEYS} customers, one API key each, every request taking the next key in rotation; ${CONNECTIONS} connections;` +
        ` median of ${ROUNDS} interleaved rounds of ${DURATION} s per variant after ${WARMUP_SECONDS} s of warm-up.` +
        `\nRate limit in the service: ${RATE_PER_MINUTE}/min per key (default 60): every request runs the limiter's statement on its key's bucket row, none is refused.`,
    );

    const loadRows = (m: Record<string, Measurement>, unit: string) =>
      [
        ['baseline: bare route, same statements as the route', m.bare!],
        ['bare route + the authentication and rate-limit statement', m.sameWork!],
        ['service: gateway, core in memory, Postgres', m.service!],
      ].map(([name, x]) => {
        const v = x as Measurement;
        return [
          name as string,
          v.rps.toFixed(0),
          v.p50.toFixed(1),
          v.p99.toFixed(1),
          ratio(v.rps, m.bare!.rps),
          `${perKeyPerMinute(v)} ${unit}`,
        ];
      });
    console.log(`\nread: GET /v1/seats (load average at the start: ${loadAt.read})`);
    console.log(formatTable(['variant', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'per key'], loadRows(read, 'req/min')));
    console.log(
      `\nwrite: POST /v1/webhook-endpoints, then DELETE /v1/webhook-endpoints/:id (req/s counts both; operations/s is half; load average at the start: ${loadAt.write})`,
    );
    console.log(formatTable(['variant', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'per key'], loadRows(write, 'req/min')));
    console.log(`endpoints left live by a run's end between create and delete, deleted between runs: ${leftover}`);

    const fan = (f: FanOut) => ({ p50: percentile(f.latencies, 50), p99: percentile(f.latencies, 99), max: Math.max(...f.latencies) });
    const s = fan(serviceFanOut);
    const b = fan(bareFanOut);
    console.log(
      `\nSSE fan-out: ${STREAMS} streams over ${KEYS} keys (${(STREAMS / KEYS).toFixed(1)} per customer), ${SSE_EVENTS} rounds of one event per customer every ${SSE_INTERVAL_MS} ms` +
        ` (${SSE_EVENTS * KEYS} events recorded, one transaction a round, ${STREAMS * SSE_EVENTS} deliveries each side); latency from the round's record call to the frame's arrival` +
        `\nload average at the start: service ${loadAt.sse}, baseline ${loadAt.sseBaseline}`,
    );
    console.log(
      formatTable(
        [
          'variant',
          'open all ms',
          'p50 ms',
          'p99 ms',
          'max ms',
          'all streams have all events ms',
          'of which recording ms',
          'after last commit ms',
          'record tx p50/max ms',
          'broken',
        ],
        [
          ['baseline: bare node:http fan-out, one read per event', bareFanOut, b],
          ['service: GET /v1/events/stream', serviceFanOut, s],
        ].map(([name, f, l]) => {
          const x = f as FanOut;
          const y = l as ReturnType<typeof fan>;
          return [
            name as string,
            String(x.openMs),
            String(y.p50),
            String(y.p99),
            String(y.max),
            String(x.completeMs),
            String(x.recordMs),
            String(x.completeMs - x.recordMs),
            `${percentile(x.recordTx, 50)}/${Math.max(...x.recordTx)}`,
            String(x.broken),
          ];
        }),
      ),
    );
    console.log(`service streams still open 10 s after the clients left: ${serviceOpen}`);

    const phases = ['read', 'write', 'sse', 'sse baseline'];
    console.log(`\nservice process memory (before: after start, full GC; after: 2 s after the last phase, full GC)`);
    console.log(
      formatTable(
        ['moment', 'RSS', 'heap used', 'RSS growth', 'heap growth'],
        [
          ['before', mb(before.rss), mb(before.heapUsed), '', ''],
          ...phases.map((p) => {
            const peak = watch.peaks.get(p);
            return peak
              ? [`peak during ${p}`, mb(peak.rss), mb(peak.heapUsed), mb(peak.rss - before.rss), mb(peak.heapUsed - before.heapUsed)]
              : [`peak during ${p}`, '-', '-', '-', '-'];
          }),
          ['after', mb(after.rss), mb(after.heapUsed), mb(after.rss - before.rss), mb(after.heapUsed - before.heapUsed)],
        ],
      ),
    );
    const peakRss = Math.max(...[...watch.peaks.values()].map((p) => p.rss));
    const peakHeap = Math.max(...[...watch.peaks.values()].map((p) => p.heapUsed));
    const perStream = (withStreams: MemorySample, without: MemorySample) =>
      `${((withStreams.heapUsed - without.heapUsed) / STREAMS / 1024).toFixed(1)} KB`;
    const barePeak = bareWatch.peaks.get('sse baseline');
    console.log(
      `heap kept per open stream (after full GC, ${STREAMS} streams open, all events delivered, over the same before them):` +
        ` service ${perStream(serviceStreams, serviceNoStreams)}, bare fan-out ${perStream(bareStreams, bareBefore)}` +
        `; bare fan-out process peak during its run: heap ${mb(barePeak?.heapUsed ?? NaN)}, RSS ${mb(barePeak?.rss ?? NaN)}`,
    );
    console.log(`max growth during the run: RSS ${mb(peakRss - before.rss)}, heap ${mb(peakHeap - before.heapUsed)}`);
    const heapOk = after.heapUsed - before.heapUsed < MAX_HEAP_GROWTH_MB * MB;
    const rssOk = after.rss - before.rss < MAX_RSS_GROWTH_MB * MB;
    const memoryPass = heapOk && rssOk && serviceOpen === 0;
    console.log(
      `memory bound: heap after GC grew ${mb(after.heapUsed - before.heapUsed)} (bound ${MAX_HEAP_GROWTH_MB} MB) ${heapOk ? 'ok' : 'over'},` +
        ` RSS grew ${mb(after.rss - before.rss)} (bound ${MAX_RSS_GROWTH_MB} MB) ${rssOk ? 'ok' : 'over'}, streams left open ${serviceOpen}: ${memoryPass ? 'PASS' : 'FAIL'}`,
    );

    console.log(`\nsummary (ratio = service / baseline; above 1 on a latency means slower)`);
    console.log(
      formatTable(
        ['measure', 'baseline', 'service', 'ratio'],
        [
          ['read req/s', read.bare!.rps.toFixed(0), read.service!.rps.toFixed(0), ratio(read.service!.rps, read.bare!.rps)],
          ['read p50 ms', read.bare!.p50.toFixed(1), read.service!.p50.toFixed(1), ratio(read.service!.p50, read.bare!.p50)],
          ['read p99 ms', read.bare!.p99.toFixed(1), read.service!.p99.toFixed(1), ratio(read.service!.p99, read.bare!.p99)],
          ['write req/s', write.bare!.rps.toFixed(0), write.service!.rps.toFixed(0), ratio(write.service!.rps, write.bare!.rps)],
          ['write p99 ms', write.bare!.p99.toFixed(1), write.service!.p99.toFixed(1), ratio(write.service!.p99, write.bare!.p99)],
          [`SSE p50 ms (${STREAMS} streams)`, String(b.p50), String(s.p50), ratio(s.p50, b.p50)],
          [`SSE p99 ms (${STREAMS} streams)`, String(b.p99), String(s.p99), ratio(s.p99, b.p99)],
          [
            'SSE all streams have all events ms',
            String(bareFanOut.completeMs),
            String(serviceFanOut.completeMs),
            ratio(serviceFanOut.completeMs, bareFanOut.completeMs),
          ],
          [
            '  of which after the last commit ms',
            String(bareFanOut.completeMs - bareFanOut.recordMs),
            String(serviceFanOut.completeMs - serviceFanOut.recordMs),
            ratio(serviceFanOut.completeMs - serviceFanOut.recordMs, bareFanOut.completeMs - bareFanOut.recordMs),
          ],
          ['service heap growth after GC', '', mb(after.heapUsed - before.heapUsed), memoryPass ? 'PASS' : 'FAIL'],
        ],
      ),
    );
    console.log(`\nbench/load ran ${((Date.now() - runStarted) / 1000).toFixed(0)} s`);
    if (!memoryPass) process.exitCode = 1;
  } finally {
    for (const close of closers) await close().catch((err: unknown) => console.error('bench: cleanup failed:', err));
    clearTimeout(watchdog);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
