/**
 * bench/gateway: GET /v1/seats through gateway → core → Postgres against a bare Fastify route that
 * runs the same query, measured in one run on this machine. Prints requests per second and p50/p99
 * latency of each, and the ratio of the full path to the baseline (target: at least 0.5).
 *
 *   npm run bench:gateway   (BENCH_ROUNDS=3 interleaved rounds, BENCH_DURATION=10 s per variant and
 *                            round, BENCH_CONNECTIONS=20; medians are printed)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { openDatabase } from '../../core/db/client';
import { generateApiKey } from '../../core/crypto/api-keys';
import * as seatsRepo from '../../core/db/repositories/seats';
import * as tenancy from '../../core/db/repositories/tenancy';
import { startCpuReading, type CpuPerRequest } from '../cpu-time';

const ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

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

async function measure(url: string, headers: Record<string, string>, reading: () => ReturnType<typeof startCpuReading>): Promise<Measurement> {
  const cpu = await reading();
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  const perRequest = await cpu.perRequest(result.requests.total);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, ...(perRequest ? { cpu: perRequest } : {}) };
}

async function main() {
  const dbName = `vps_bench_${Date.now()}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const servers = { kill: () => undefined } as { kill: () => unknown };
  try {
    const database = await openDatabase({ url: url.toString(), dataDir: '.data', poolSize: 2 });
    const key = generateApiKey();
    const customer = await tenancy.insertCustomer(database.db, { name: 'Bench', seatQuota: 10, planExpiresAt: null });
    const user = await tenancy.insertUser(database.db, { customerId: customer.id, email: 'bench@example.com', name: 'Bench' });
    await tenancy.insertApiKey(database.db, { customerId: customer.id, userId: user!.id, name: 'bench', prefix: key.prefix, keyHash: key.hash });
    for (const [i, track] of (['video', 'shop', 'video'] as const).entries()) {
      const seat = await seatsRepo.insertSeat(database.db, { customerId: customer.id, name: `seat ${i}`, track });
      await seatsRepo.bindSeat(database.db, seat.id, { accountId: `bench-${i}`, accountUsername: `bench_${i}`, credentialsSealed: 'x', accessTokenExpiresAt: null, refreshTokenExpiresAt: null });
    }
    await database.close();

    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'servers.ts')], {
      env: { ...process.env, BENCH_DATABASE_URL: url.toString(), BENCH_CUSTOMER_ID: customer.id },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    servers.kill = () => child.kill();
    const ports = await new Promise<{ bare: number; sameWork: number; inMemory: number; overHttp: number }>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
      child.once('exit', (code) => reject(new Error(`servers exited with ${code}`)));
    });

    const auth = { authorization: `Bearer ${key.plaintext}` };
    const reading = () => startCpuReading({ servicePid: child.pid!, admin, database: dbName });
    const target = (port: number) => `http://127.0.0.1:${port}/v1/seats`;
    // Warm up each path (JIT, connection pools) before anything is recorded.
    for (const port of [ports.bare, ports.sameWork, ports.inMemory, ports.overHttp]) {
      await autocannon({ url: target(port), connections: CONNECTIONS, duration: 2, headers: auth });
    }
    // Interleaved rounds, medians reported: on a 2-core machine one 10 s run varies by a quarter.
    const runs: Record<'bare' | 'sameWork' | 'inMemory' | 'overHttp', Measurement[]> = { bare: [], sameWork: [], inMemory: [], overHttp: [] };
    for (let round = 0; round < ROUNDS; round++) {
      runs.bare.push(await measure(target(ports.bare), auth, reading));
      runs.sameWork.push(await measure(target(ports.sameWork), auth, reading));
      runs.inMemory.push(await measure(target(ports.inMemory), auth, reading));
      runs.overHttp.push(await measure(target(ports.overHttp), auth, reading));
    }
    const bare = median(runs.bare);
    const sameWork = median(runs.sameWork);
    const inMemory = median(runs.inMemory);
    const overHttp = median(runs.overHttp);

    const row = (name: string, m: Measurement) =>
      `${name.padEnd(44)} ${m.rps.toFixed(0).padStart(8)} ${m.p50.toFixed(1).padStart(8)} ${m.p99.toFixed(1).padStart(8)} ${(m.rps / bare.rps).toFixed(2).padStart(7)}`;
    console.log(`\nGET /v1/seats, ${CONNECTIONS} connections, median of ${ROUNDS} interleaved rounds of ${DURATION} s, one machine (${process.version})`);
    console.log(`${'variant'.padEnd(44)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'ratio'.padStart(7)}`);
    console.log(row('baseline: bare Fastify route, same query', bare));
    console.log(row('bare route, same two statements', sameWork));
    console.log(row('full path, core in memory (--role all)', inMemory));
    console.log(row('full path, core over Connect HTTP (roles)', overHttp));
    if (bare.cpu && sameWork.cpu && inMemory.cpu && overHttp.cpu) {
      // Throughput on a saturated machine is the inverse of the CPU a request costs everywhere:
      // this says which side of the path the difference is spent on.
      const cpuRow = (name: string, c: CpuPerRequest) =>
        `${name.padEnd(44)} ${[c.service, c.postgres, c.loadGenerator, c.total].map((v) => v.toFixed(0).padStart(9)).join(' ')}`;
      console.log(`\nCPU per request, µs (the servers' process, the Postgres backends of the run's database, the load generator)`);
      console.log(`${'variant'.padEnd(44)} ${['service', 'postgres', 'loadgen', 'total'].map((h) => h.padStart(9)).join(' ')}`);
      console.log(cpuRow('baseline: bare Fastify route, same query', bare.cpu));
      console.log(cpuRow('bare route, same two statements', sameWork.cpu));
      console.log(cpuRow('full path, core in memory (--role all)', inMemory.cpu));
      console.log(cpuRow('full path, core over Connect HTTP (roles)', overHttp.cpu));
      console.log(`budget for the target: the full path at most ${(bare.cpu.total * 2).toFixed(0)} µs in all (twice the baseline's)`);
    }
    console.log(`\nratio (full path in memory / baseline): ${(inMemory.rps / bare.rps).toFixed(2)} (target >= 0.50)`);
    console.log(`ratio (full path in memory / bare route with the same two statements): ${(inMemory.rps / sameWork.rps).toFixed(2)}`);
  } finally {
    servers.kill();
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

void main();
