/**
 * bench/gateway: GET /v1/seats through gateway → core → Postgres against a bare Fastify route that
 * runs the same query, measured in one run on this machine. Prints requests per second, p50/p99
 * latency and CPU per request of each variant, and its ratio to that bare route:
 *
 * - the production topology, `vps serve --role gateway,core` as docker-compose.yml runs it (its own
 *   process, core called in memory, core's Connect server listening for internal callers);
 *   target: at least 0.4;
 * - the anchor, the bare route behind one bare connect-node unary call over HTTP/1.1: what a hop
 *   per request costs with nothing else around it;
 * - separate roles, the gateway calling core over Connect on HTTP/1.1 (as CORE_URL does today) and
 *   on one pooled HTTP/2 session, the alternative the production topology was chosen against;
 * - the full path with core in memory built in the servers' process, and the bare route running
 *   the same two statements as the full path (what the layers cost beyond the statements).
 *
 *   npm run bench:gateway   (BENCH_ROUNDS=3 interleaved rounds, BENCH_DURATION=10 s per variant and
 *                            round, BENCH_CONNECTIONS=20; medians are printed; BENCH_VARIANTS=a,b
 *                            measures only those beside the baseline, e.g. production,inMemory;
 *                            BENCH_API_LOG_LEVEL=info is the production process's, as in compose)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { openDatabase } from '../../core/db/client';
import { emulatorPlatformEnv } from '../../core/upstream/settings';
import { generateApiKey } from '../../core/crypto/api-keys';
import * as seatsRepo from '../../core/db/repositories/seats';
import * as tenancy from '../../core/db/repositories/tenancy';
import { startCpuReading, type CpuPerRequest } from '../cpu-time';

const ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REPO = path.resolve(__dirname, '..', '..');
/** The production topology's ratio to the bare route that the issue asks for. */
const TARGET = 0.4;
/** The role list of the production topology's "api" service in docker-compose.yml. */
const PRODUCTION_ROLES = 'gateway,core';

/** In the order they are measured within a round and printed. */
const VARIANTS = {
  bare: 'baseline: bare Fastify route, same query',
  sameWork: 'bare route, same two statements',
  anchor: 'anchor: bare route + bare connect-node hop (1.1)',
  production: `production: serve --role ${PRODUCTION_ROLES}`,
  inMemory: 'full path, core in memory (--role all)',
  overHttp: 'separate roles, core over Connect HTTP/1.1',
  overHttp2: 'separate roles, core over Connect HTTP/2',
} as const;
type Variant = keyof typeof VARIANTS;
const NAMES = (Object.keys(VARIANTS) as Variant[]).filter(
  (name) => name === 'bare' || !process.env.BENCH_VARIANTS || process.env.BENCH_VARIANTS.split(',').includes(name),
);
const WIDTH = 50;

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  cpu?: CpuPerRequest;
}

const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function median(runs: Measurement[]): Measurement {
  const cpus = runs.flatMap((r) => (r.cpu ? [r.cpu] : []));
  const cpu = cpus.length === runs.length ? medianCpu(cpus) : undefined;
  return { rps: mid(runs.map((r) => r.rps)), p50: mid(runs.map((r) => r.p50)), p99: mid(runs.map((r) => r.p99)), ...(cpu ? { cpu } : {}) };
}

function medianCpu(cpus: CpuPerRequest[]): CpuPerRequest {
  const of = (field: keyof CpuPerRequest) => mid(cpus.map((c) => c[field]));
  return { service: of('service'), postgres: of('postgres'), loadGenerator: of('loadGenerator'), total: of('total') };
}

async function measure(
  url: string,
  headers: Record<string, string>,
  reading: () => ReturnType<typeof startCpuReading>,
): Promise<Measurement> {
  const cpu = await reading();
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  const perRequest = await cpu.perRequest(result.requests.total);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, ...(perRequest ? { cpu: perRequest } : {}) };
}

/**
 * The production topology as it is deployed: the `vps serve` command and the settings of
 * docker-compose.yml's api service (info logging, one line per call; the ops server and metrics),
 * in a process of its own. Temporal is named but not reachable: GET /v1/seats never calls it, and
 * the start-up calls that do (search attributes, token refreshes) fail in the background and are
 * logged. The rate limit is raised so that the limiter's statement runs but never refuses.
 */
async function startProductionApi(databaseUrl: string): Promise<{ child: ChildProcess; url: string; dir: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vps-bench-api-'));
  const logFile = path.join(dir, 'serve.log');
  // Its output goes to a file, as a container's goes to the runtime's log: not through this process.
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, [path.join(REPO, 'bin', 'vps'), 'serve', '--role', PRODUCTION_ROLES], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_SIZE: '10',
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      VPS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      VPS_ADMIN_TOKEN: randomBytes(16).toString('hex'),
      VPS_DATA_DIR: dir,
      HOST: '127.0.0.1',
      PORT: '0',
      CORE_HOST: '127.0.0.1',
      CORE_PORT: '0',
      OPS_PORT: '0',
      LOG_LEVEL: process.env.BENCH_API_LOG_LEVEL ?? 'info',
      RATE_LIMIT_PER_MINUTE: '1000000000',
      // GET /v1/seats never calls the platforms; core refuses to start without their settings.
      ...emulatorPlatformEnv('http://127.0.0.1:9'),
    },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const deadline = Date.now() + 90_000;
  for (;;) {
    const banner = /^\s+API\s+(http:\/\/\S+)\/v1$/m.exec(readFileSync(logFile, 'utf8'));
    if (banner) return { child, url: banner[1]!.replace('localhost', '127.0.0.1'), dir };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      throw new Error(`vps serve --role ${PRODUCTION_ROLES} did not start:\n${readFileSync(logFile, 'utf8').slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function main() {
  const dbName = `vps_bench_${Date.now()}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const children: ChildProcess[] = [];
  let apiDir: string | undefined;
  try {
    const database = await openDatabase({ url: url.toString(), dataDir: '.data', poolSize: 2 });
    const key = generateApiKey();
    const customer = await tenancy.insertCustomer(database.db, { name: 'Bench', seatQuota: 10, planExpiresAt: null });
    const user = await tenancy.insertUser(database.db, { customerId: customer.id, email: 'bench@example.com', name: 'Bench' });
    await tenancy.insertApiKey(database.db, {
      customerId: customer.id,
      userId: user!.id,
      name: 'bench',
      prefix: key.prefix,
      keyHash: key.hash,
    });
    for (const [i, track] of (['video', 'shop', 'video'] as const).entries()) {
      const seat = await seatsRepo.insertSeat(database.db, { customerId: customer.id, name: `seat ${i}`, track });
      await seatsRepo.bindSeat(database.db, seat.id, {
        accountId: `bench-${i}`,
        accountUsername: `bench_${i}`,
        credentialsSealed: 'x',
        accessTokenExpiresAt: null,
        refreshTokenExpiresAt: null,
      });
    }
    await database.close();

    const has = (...names: Variant[]) => names.every((name) => NAMES.includes(name));
    const servers = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'servers.ts')], {
      env: { ...process.env, BENCH_DATABASE_URL: url.toString(), BENCH_CUSTOMER_ID: customer.id },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(servers);
    const ports = await new Promise<Record<Exclude<Variant, 'production'>, number>>((resolve, reject) => {
      readline.createInterface({ input: servers.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
      servers.once('exit', (code) => reject(new Error(`servers exited with ${code}`)));
    });
    const api = has('production') ? await startProductionApi(url.toString()) : undefined;
    if (api) {
      children.push(api.child);
      apiDir = api.dir;
    }

    const target = (origin: string) => `${origin}/v1/seats`;
    const where: Record<Variant, { url: string; pid: number }> = {
      ...(Object.fromEntries(
        Object.entries(ports).map(([name, port]) => [name, { url: target(`http://127.0.0.1:${port}`), pid: servers.pid! }]),
      ) as Record<Exclude<Variant, 'production'>, { url: string; pid: number }>),
      production: { url: api ? target(api.url) : '', pid: api?.child.pid ?? 0 },
    };
    const auth = { authorization: `Bearer ${key.plaintext}` };
    // Warm up each path (JIT, connection pools, the HTTP/2 session) before anything is recorded.
    for (const name of NAMES) await autocannon({ url: where[name].url, connections: CONNECTIONS, duration: 2, headers: auth });
    // Interleaved rounds, medians reported: on a 2-core machine one 10 s run varies by a quarter.
    const runs = Object.fromEntries(NAMES.map((name) => [name, [] as Measurement[]])) as Record<Variant, Measurement[]>;
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of NAMES) {
        const reading = () => startCpuReading({ servicePid: where[name].pid, admin, database: dbName });
        runs[name].push(await measure(where[name].url, auth, reading));
      }
    }
    const m = Object.fromEntries(NAMES.map((name) => [name, median(runs[name])])) as Record<Variant, Measurement>;
    const ratio = (name: Variant) => m[name].rps / m.bare.rps;

    console.log(
      `\nGET /v1/seats, ${CONNECTIONS} connections, median of ${ROUNDS} interleaved rounds of ${DURATION} s, one machine (${process.version})`,
    );
    console.log(`${'variant'.padEnd(WIDTH)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'ratio'.padStart(7)}`);
    for (const name of NAMES) {
      const { rps, p50, p99 } = m[name];
      console.log(
        `${VARIANTS[name].padEnd(WIDTH)} ${rps.toFixed(0).padStart(8)} ${p50.toFixed(1).padStart(8)} ${p99.toFixed(1).padStart(8)} ${ratio(name).toFixed(2).padStart(7)}`,
      );
    }
    // The comparisons, each printed when the variants it needs were measured (BENCH_VARIANTS).
    if (NAMES.every((name) => m[name].cpu)) {
      // Throughput on a saturated machine is the inverse of the CPU a request costs everywhere:
      // this says which side of the path the difference is spent on.
      const cpu = (name: Variant) => m[name].cpu!;
      console.log(`\nCPU per request, µs (the serving process, the Postgres backends of the run's database, the load generator)`);
      console.log(`${'variant'.padEnd(WIDTH)} ${['service', 'postgres', 'loadgen', 'total'].map((h) => h.padStart(9)).join(' ')}`);
      for (const name of NAMES) {
        const c = cpu(name);
        console.log(
          `${VARIANTS[name].padEnd(WIDTH)} ${[c.service, c.postgres, c.loadGenerator, c.total].map((v) => v.toFixed(0).padStart(9)).join(' ')}`,
        );
      }
      if (has('anchor'))
        console.log(
          `one bare connect-node unary hop over HTTP/1.1 (anchor - baseline): ${(cpu('anchor').total - cpu('bare').total).toFixed(0)} µs of CPU per call`,
        );
      if (has('inMemory', 'overHttp', 'overHttp2')) {
        console.log(
          `core over Connect instead of in memory: HTTP/1.1 ${(cpu('overHttp').total - cpu('inMemory').total).toFixed(0)} µs, HTTP/2 ${(cpu('overHttp2').total - cpu('inMemory').total).toFixed(0)} µs per request`,
        );
      }
      console.log(
        `budget for the target: the production topology at most ${(cpu('bare').total / TARGET).toFixed(0)} µs in all (baseline / ${TARGET})`,
      );
    }
    console.log('');
    if (has('production')) {
      const verdict = ratio('production') >= TARGET ? 'MET' : 'NOT MET';
      console.log(
        `ratio (production topology, --role ${PRODUCTION_ROLES} / baseline): ${ratio('production').toFixed(2)} (target >= ${TARGET.toFixed(2)}): ${verdict}`,
      );
    }
    const beside = (['anchor', 'overHttp', 'overHttp2'] as const)
      .filter((name) => has(name))
      .map((name) => `${VARIANTS[name]} ${ratio(name).toFixed(2)}`);
    if (beside.length > 0) console.log(`  beside it: ${beside.join('; ')}`);
    if (has('inMemory')) console.log(`ratio (full path in memory / baseline): ${ratio('inMemory').toFixed(2)} (earlier target >= 0.50)`);
    if (has('inMemory', 'sameWork'))
      console.log(`ratio (full path in memory / bare route with the same two statements): ${(m.inMemory.rps / m.sameWork.rps).toFixed(2)}`);
  } finally {
    for (const child of children) child.kill();
    if (apiDir) rmSync(apiDir, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

void main();
