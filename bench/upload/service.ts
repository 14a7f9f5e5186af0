/**
 * The service of bench/upload: `vps serve --role all` as a child process on a Postgres database of
 * its own (DATABASE_URL; or, asked for, the embedded PGlite of its data folder; the embedded Temporal
 * dev server, the sandbox), with a fresh VPS_DATA_DIR,
 * free loopback ports, and a customer with one bound video seat and an API key written straight
 * into the database before it starts. Its output goes to a log file. Also the readers of a process's
 * resident memory and CPU time from /proc, which the benchmark applies to it and to the baselines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { generateApiKey } from '../../core/crypto/api-keys';
import { SealedBox } from '../../core/crypto/sealed-box';
import { openDatabase } from '../../core/db/client';
import * as seatsRepo from '../../core/db/repositories/seats';
import * as tenancy from '../../core/db/repositories/tenancy';
import { sealCredentials } from '../../core/upstream/credentials';
import { emulatorPlatformEnv } from '../../core/upstream/settings';
import { freePorts, REPO_ROOT } from '../events-embedded/service';
import { createBenchDatabase } from '../harness';

export interface ServiceChild {
  pid: number;
  gateway: string;
  apiKey: string;
  seatId: string;
  dataDir: string;
  logFile: string;
  /** When it exited (ms since the epoch), once it has: where its CPU profile, if any, ends. */
  exitedAt(): number | undefined;
  /** SIGTERM, then SIGKILL to its process group (its Temporal dev server too) after `graceMs`; then drops its database. Once. */
  stop(graceMs: number): Promise<void>;
}

/** Starts the service with the settings every run shares; `env` adds the store's and the caller's. */
export async function startService(opts: {
  name: string;
  dataDir: string;
  env: Record<string, string>;
  nodeArgs: string[];
  startTimeoutMs: number;
  /** The embedded PGlite in the data folder instead of a Postgres database of its own. */
  embedded?: boolean;
}): Promise<ServiceChild> {
  const database = opts.embedded
    ? { url: undefined, drop: async () => undefined }
    : await createBenchDatabase(`vps_bench_upload_${opts.name}`);
  const encryptionKey = randomBytes(32);
  let tenant: { apiKey: string; seatId: string };
  try {
    tenant = await createTenant(database.url, opts.dataDir, encryptionKey);
  } catch (err) {
    await database.drop();
    throw err;
  }
  const [gateway, core, ops, sandbox, temporal, temporalUi] = await freePorts(6);
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Whatever the calling shell points elsewhere, only what is set below is measured.
  for (const name of Object.keys(env)) {
    if (/^(MEDIA_|VPS_|TEMPORAL_|DATABASE_|CORE_|VPLAT_|SHOP_)/.test(name) || ['PORT', 'HOST', 'OPS_PORT', 'SANDBOX_PORT'].includes(name))
      delete env[name];
  }
  Object.assign(env, {
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    VPS_DATA_DIR: opts.dataDir,
    VPS_ENCRYPTION_KEY: encryptionKey.toString('hex'),
    HOST: '127.0.0.1',
    PORT: String(gateway),
    CORE_HOST: '127.0.0.1',
    CORE_PORT: String(core),
    OPS_HOST: '127.0.0.1',
    OPS_PORT: String(ops),
    SANDBOX_HOST: '127.0.0.1',
    SANDBOX_PORT: String(sandbox),
    // With a DATABASE_URL this is not the embedded mode: the platforms are named, here the emulator
    // that --role all runs in the same process.
    ...emulatorPlatformEnv(`http://127.0.0.1:${sandbox}`),
    TEMPORAL_DEV_PORT: String(temporal),
    TEMPORAL_DEV_UI_PORT: String(temporalUi),
    // The remote fetch's source is a loopback server: what the embedded mode allows by default,
    // and what a DATABASE_URL turns off unless it is set.
    VPS_ALLOW_INSECURE_SOURCE_URLS: 'true',
    // The polls of a remote upload's record are the only repeated calls; none must be refused.
    RATE_LIMIT_PER_MINUTE: '100000',
    ...opts.env,
  });
  const logFile = path.join(opts.dataDir, 'serve.log');
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const log = fs.openSync(logFile, 'a');
  // Its own process group, so that a SIGKILL fallback also reaches the Temporal dev server.
  const child: ChildProcess = spawn(process.execPath, [...opts.nodeArgs, path.join(REPO_ROOT, 'bin', 'vps'), 'serve', '--role', 'all'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', log, log],
    detached: true,
  });
  fs.closeSync(log);
  const pid = child.pid!;
  let exited = false;
  let exitedAt: number | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      exitedAt = Date.now();
      resolve();
    }),
  );
  let stopping: Promise<void> | undefined;
  const stop = (graceMs: number) => (stopping ??= stopAndDrop(graceMs));
  const stopAndDrop = async (graceMs: number) => {
    try {
      if (!exited) {
        process.kill(pid, 'SIGTERM');
        const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
        if ((await Promise.race([exit.then(() => 'exited' as const), timer])) === 'timeout')
          console.error(`bench: vps serve did not stop within ${graceMs} ms; killing its process group`);
      }
      // The group too: a dev server left behind by a child that did not stop it.
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // ESRCH: the whole group is gone already, as it should be.
      }
      await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    } finally {
      await database.drop();
    }
  };
  const ready = async () =>
    fetch(`http://127.0.0.1:${ops}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false,
    );
  const deadline = Date.now() + opts.startTimeoutMs;
  for (;;) {
    if (exited || Date.now() > deadline) {
      await stop(5_000);
      throw new Error(
        `vps serve ${exited ? 'exited during start-up' : `was not ready within ${opts.startTimeoutMs} ms`}:\n${fs.readFileSync(logFile, 'utf8').slice(-4000)}`,
      );
    }
    if (await ready()) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    pid,
    gateway: `http://127.0.0.1:${gateway}`,
    apiKey: tenant.apiKey,
    seatId: tenant.seatId,
    dataDir: opts.dataDir,
    logFile,
    exitedAt: () => exitedAt,
    stop,
  };
}

/**
 * Migrates the database (as the service would at start) and adds a customer, an API key and a
 * video seat bound to an account whose credentials are sealed with the service's key. Uploads to
 * the video track never call the platform, so the account need not exist anywhere.
 */
async function createTenant(url: string | undefined, dataDir: string, encryptionKey: Buffer): Promise<{ apiKey: string; seatId: string }> {
  const opened = await openDatabase({ ...(url ? { url } : {}), dataDir, poolSize: 1 });
  try {
    const { db } = opened;
    const customer = await tenancy.insertCustomer(db, { name: 'Bench', seatQuota: 1, planExpiresAt: null });
    const user = await tenancy.insertUser(db, { customerId: customer.id, email: 'bench@example.com', name: 'Bench' });
    const key = generateApiKey();
    await tenancy.insertApiKey(db, { customerId: customer.id, userId: user!.id, name: 'bench', prefix: key.prefix, keyHash: key.hash });
    const seat = await seatsRepo.insertSeat(db, { customerId: customer.id, name: 'bench', track: 'video' });
    await seatsRepo.bindSeat(db, seat.id, {
      accountId: 'bench-upload',
      accountUsername: 'bench_upload',
      credentialsSealed: sealCredentials(new SealedBox(encryptionKey), seat.id, { accessToken: 'bench-not-used' }),
      accessTokenExpiresAt: null,
      refreshTokenExpiresAt: null,
    });
    return { apiKey: key.plaintext, seatId: seat.id };
  } finally {
    await opened.close();
  }
}

/** Resident memory of a process in bytes (VmRSS), or undefined once it is gone. */
export function residentBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user plus system) of a process or thread from its stat file; 0 once it is gone. */
function statCpuSeconds(file: string): number {
  // The command name in parentheses may hold spaces: the fields are counted from after it.
  try {
    const fields = fs.readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime; CLK_TCK is 100 on Linux builds
  } catch {
    return 0;
  }
}

/** CPU seconds of a process's threads, from /proc: all of them, and its main thread's; 0 once it is gone. */
export function cpuSeconds(pid: number): { all: number; main: number } {
  return { all: statCpuSeconds(`/proc/${pid}/stat`), main: statCpuSeconds(`/proc/${pid}/task/${pid}/stat`) };
}

/**
 * CPU seconds of each thread of a process but its main one, by thread id. Node 20 names all of
 * them `node`: libuv's pool, V8's helpers and worker threads are told apart by how they behave.
 */
export function threadCpuSeconds(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  let tids: string[] = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) if (tid !== String(pid)) threads.set(Number(tid), statCpuSeconds(`/proc/${pid}/task/${tid}/stat`));
  return threads;
}

/**
 * Samples a process's VmRSS every `everyMs` from outside. `window()` starts a measurement: its
 * `before` is read at once, and `end()` returns the peak seen since, with the growth.
 */
export class RssSampler {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs: number,
  ) {
    this.timer = setInterval(() => {
      this.peak = Math.max(this.peak, residentBytes(this.pid) ?? 0);
    }, everyMs);
  }

  window(): { end(): { before: number; peak: number } } {
    const before = residentBytes(this.pid) ?? NaN;
    this.peak = before;
    return {
      end: () => {
        this.peak = Math.max(this.peak, residentBytes(this.pid) ?? 0);
        return { before, peak: this.peak };
      },
    };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
