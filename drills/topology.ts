/**
 * The production topology as processes on this machine: one emulator, one core, two gateways and
 * two workers, each a separate `vps serve --role …` child, against one Temporal dev server (with its
 * SQLite file, so a restart keeps its state) and one private Postgres cluster. A small balancer in
 * front of the gateways receives the platform's webhooks, as production's does. Every duration is
 * shortened through the roles' environment so that drills and the topology tests finish quickly.
 *
 *   node --import tsx drills/topology.ts     prints the addresses and stays up until Ctrl-C
 *
 * The handle returned by startTopology creates tenants and seats through the AdminService, and
 * kills, restarts or stops any process, Postgres or Temporal.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient, type Client as ConnectClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AdminService } from '../gen/vps/admin/v1/admin_pb';
import { Track } from '../gen/vps/seat/v1/seat_pb';
import { freePort, startTemporalDevServer, type DevServer } from '../core/embedded/temporal-dev-server';
import { createUpstream } from '../core/upstream';
import { emulatorPlatformEnv, SANDBOX_APP, SANDBOX_AUTHORIZE_PATHS } from '../core/upstream/settings';
import { subscribeToPlatformWebhooks } from '../core/upstream/vplat/webhooks';
import { UPSTREAM_WEBHOOK_PATH } from '../gateway/routes/upstream-webhooks';
import { startMediaServer, type MediaServer } from '../test/helpers/receivers';
import { s3Env, startMinio } from '../test/helpers/minio-server';
import { startIngress, type Ingress } from './ingress';
import { startPrivatePostgres } from './postgres';
import { RoleProcess, type UnexpectedExit } from './role-process';

export type ProcessName = 'sandbox' | 'core' | 'gateway1' | 'gateway2' | 'worker1' | 'worker2';
export const PROCESS_NAMES: readonly ProcessName[] = ['sandbox', 'core', 'gateway1', 'gateway2', 'worker1', 'worker2'];

/**
 * Durations on a drill's time scale. Each is a variable of config/config.ts; the comment says why
 * the value suits the drills.
 */
export const DRILL_DURATIONS: Record<string, string> = {
  // Publishes: the emulator processes in half a second and reports the post id soon after; the
  // workflow polls every 300 ms and waits at most 10 s for the post id.
  SANDBOX_PUBLISH_PROCESSING_MS: '500',
  SANDBOX_POST_ID_DELAY_MS: '300',
  PUBLISH_POLL_INTERVAL_MS: '300',
  PUBLISH_POLL_ATTEMPTS: '100',
  PUBLISH_SLOW_POLL_SCHEDULE_MS: '1000,2000,5000',
  PUBLISH_POST_ID_WAIT_MS: '10000',
  PUBLISH_SUBMIT_WAIT_MS: '3000',
  PUBLISH_SUBMIT_RETRY_MS: '300',
  // A hung official call counts as no answer after 3 s (the submit activity then allows 33 s).
  UPSTREAM_CONNECT_TIMEOUT_MS: '1000',
  UPSTREAM_TIMEOUT_MS: '3000',
  // The platform retries its pushes for about a minute: longer than any outage a drill makes.
  SANDBOX_WEBHOOK_RETRY_MS: '250,500,1000,2000,4000,8000,15000,30000',
  // Our own pushes: retried for about 70 s, attempts time out after 2 s.
  DELIVERY_RETRY_SCHEDULE_MS: '250,500,1000,2000,4000,8000,15000,40000',
  DELIVERY_ATTEMPT_TIMEOUT_MS: '2000',
  SSE_HEARTBEAT_MS: '2000',
  SHUTDOWN_GRACE_MS: '2000',
};

export interface TopologyOptions {
  /** RATE_LIMIT_PER_MINUTE of every core (the drills use a huge one; the tests a real one). */
  rateLimitPerMinute?: number;
  /** Extra or overriding environment for every role. */
  env?: Record<string, string>;
  logLevel?: string;
  /** Keep the temporary folder (logs, Postgres, Temporal SQLite) after close. */
  keepDir?: boolean;
  /** Progress lines (start-up steps); silent by default. */
  log?: (line: string) => void;
}

export interface TenantHandle {
  customerId: string;
  userId: string;
  apiKey: string;
}

export interface SeatHandle {
  seatId: string;
  openId: string;
  username: string;
  accessToken: string;
}

export interface Topology {
  dir: string;
  adminToken: string;
  urls: {
    sandbox: string;
    core: string;
    gateways: [string, string];
    /** The balancer the platform's webhooks go to. */
    webhookIngress: string;
    temporal: string;
    temporalUi: string;
    postgres: string;
    media: string;
    /** The S3-compatible store (MinIO) every role keeps media in. */
    mediaStore: string;
    /** Ops servers (/healthz, /readyz, /metrics) by process, when the roles have them. */
    ops: Partial<Record<ProcessName, string>>;
  };
  /** Environment shared by the service roles (for a process a caller starts itself). */
  sharedEnv: Record<string, string>;
  admin: ConnectClient<typeof AdminService>;
  processes: Record<ProcessName, RoleProcess>;
  /** Processes that died without being asked to (each was started again by the supervisor). */
  unexpectedExits: UnexpectedExit[];
  media: MediaServer;
  ingress: Ingress;
  /** A customer with one user and one API key. */
  createTenant(opts?: { name?: string; seatQuota?: number }): Promise<TenantHandle>;
  /** Another API key of the tenant's user (rate-limit buckets are per key). */
  createApiKey(tenant: TenantHandle, name?: string): Promise<string>;
  /** A video seat of the tenant bound to a fresh emulator account with its real tokens. */
  bindVideoSeat(tenant: TenantHandle): Promise<SeatHandle>;
  /** The emulator's control API (plain JSON). */
  sandbox<T = Record<string, unknown>>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** SIGKILL (a crash) or SIGTERM (a graceful stop); the process stays down until started. */
  kill(name: ProcessName, signal?: NodeJS.Signals): Promise<void>;
  start(name: ProcessName): Promise<void>;
  restart(name: ProcessName, opts?: { signal?: NodeJS.Signals; downMs?: number }): Promise<void>;
  restartPostgres(opts?: { mode?: 'fast' | 'immediate'; downMs?: number }): Promise<void>;
  restartTemporal(opts?: { downMs?: number }): Promise<void>;
  close(): Promise<void>;
}

async function waitHttpOk(url: string, deadline: number, what: string): Promise<void> {
  let last = '';
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`${what} (${url}) not ready: ${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The ops server's address as the banner prints it, if the role has one. */
function opsUrlOf(output: string): string | undefined {
  return output.match(/^\s+Ops\s+(http:\/\/\S+)/m)?.[1];
}

export async function startTopology(opts: TopologyOptions = {}): Promise<Topology> {
  const log = opts.log ?? (() => undefined);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vps-topology-'));
  const logDir = path.join(dir, 'logs');
  mkdirSync(logDir);
  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        process.stderr.write(`topology cleanup: ${String(err)}\n`);
      }
    }
    if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
  };

  try {
    const started = Date.now();
    const [pg, temporalPorts, media, s3] = await Promise.all([
      startPrivatePostgres({ dir }),
      Promise.all([freePort(), freePort()]),
      startMediaServer(),
      startMinio(),
    ]);
    cleanups.push(
      () => pg.close(),
      () => media.close(),
      () => s3.stop(),
    );
    log(`postgres ${pg.url} (${Date.now() - started} ms)`);

    const temporalDb = path.join(dir, 'temporal.sqlite');
    const [temporalPort, temporalUiPort] = temporalPorts;
    const startTemporal = () =>
      startTemporalDevServer({ port: temporalPort, uiPort: temporalUiPort, dbFile: temporalDb, namespace: 'default' });
    let temporal: DevServer = await startTemporal();
    cleanups.push(() => temporal.stop());
    log(`temporal ${temporal.address} (${Date.now() - started} ms)`);

    const ports = {
      sandbox: await freePort(),
      core: await freePort(),
      gateway1: await freePort(),
      gateway2: await freePort(),
    };
    const opsPorts = Object.fromEntries(await Promise.all(PROCESS_NAMES.map(async (n) => [n, await freePort()] as const))) as Record<
      ProcessName,
      number
    >;
    const adminToken = `topology-admin-${randomBytes(16).toString('hex')}`;
    const sandboxUrl = `http://127.0.0.1:${ports.sandbox}`;
    const coreUrl = `http://127.0.0.1:${ports.core}`;
    const gateways: [string, string] = [`http://127.0.0.1:${ports.gateway1}`, `http://127.0.0.1:${ports.gateway2}`];

    const inherited: NodeJS.ProcessEnv = { ...process.env };
    // Nothing of the caller's own service configuration may leak into the roles.
    for (const name of Object.keys(inherited)) {
      if (
        /^(DATABASE_|TEMPORAL_|CORE_|VPS_|SANDBOX_|PUBLISH_|DELIVERY_|UPSTREAM_|WEBHOOK_|OPS_|VPLAT_|SHOP_|MEDIA_)|^(PORT|HOST|RATE_LIMIT_PER_MINUTE|SSE_HEARTBEAT_MS|SHUTDOWN_GRACE_MS|LOG_LEVEL)$/.test(
          name,
        )
      )
        delete inherited[name];
    }
    const sharedEnv: Record<string, string> = {
      ...DRILL_DURATIONS,
      DATABASE_URL: pg.url,
      DATABASE_POOL_SIZE: '5',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: `vps-topology-${process.pid}`,
      VPS_ADMIN_TOKEN: adminToken,
      VPS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      // Media in the S3 store: no process shares a folder with another (each has its own data dir).
      ...s3Env(s3, s3.bucket),
      VPS_ALLOW_INSECURE_WEBHOOK_URLS: 'true',
      VPS_ALLOW_INSECURE_SOURCE_URLS: 'true',
      // The emulator is a role of its own here, so the others are pointed at it as at a platform.
      ...emulatorPlatformEnv(sandboxUrl),
      CORE_URL: coreUrl,
      CORE_PORT: String(ports.core),
      SANDBOX_PORT: String(ports.sandbox),
      RATE_LIMIT_PER_MINUTE: String(opts.rateLimitPerMinute ?? 60),
      LOG_LEVEL: opts.logLevel ?? 'warn',
      ...opts.env,
    };

    const unexpectedExits: UnexpectedExit[] = [];
    const ops: Partial<Record<ProcessName, string>> = {};
    const make = (name: ProcessName, role: string, env: Record<string, string>, httpCheck?: string) =>
      new RoleProcess({
        name,
        role,
        env: {
          ...inherited,
          ...sharedEnv,
          VPS_DATA_DIR: path.join(dir, 'data', name),
          OPS_HOST: '127.0.0.1',
          OPS_PORT: String(opsPorts[name]),
          ...env,
        },
        logFile: path.join(logDir, `${name}.log`),
        onUnexpectedExit: (exit) => {
          unexpectedExits.push(exit);
          log(`${name} exited unexpectedly (code ${exit.code}, signal ${exit.signal}); restarting it`);
        },
        ready: async (proc, deadline) => {
          await proc.waitFor(/vps is running/, deadline);
          if (httpCheck) await waitHttpOk(httpCheck, deadline, `${name} /healthz`);
          const opsUrl = opsUrlOf(proc.output());
          if (opsUrl) {
            ops[name] = opsUrl;
            await waitHttpOk(`${opsUrl}/readyz`, deadline, `${name} /readyz`);
          }
        },
      });
    const processes: Record<ProcessName, RoleProcess> = {
      sandbox: make('sandbox', 'sandbox', {}, `${sandboxUrl}/_sandbox/health`),
      core: make('core', 'core', { VPS_PUBLIC_URL: gateways[0] }, `${coreUrl}/healthz`),
      gateway1: make('gateway1', 'gateway', { PORT: String(ports.gateway1), VPS_PUBLIC_URL: gateways[0] }, `${gateways[0]}/healthz`),
      gateway2: make('gateway2', 'gateway', { PORT: String(ports.gateway2), VPS_PUBLIC_URL: gateways[1] }, `${gateways[1]}/healthz`),
      worker1: make('worker1', 'worker', {}),
      worker2: make('worker2', 'worker', {}),
    };
    cleanups.push(async () => {
      // Gateways first (clients go), then workers, core, and the emulator last.
      for (const group of [['gateway1', 'gateway2'], ['worker1', 'worker2'], ['core'], ['sandbox']] as ProcessName[][]) {
        await Promise.all(group.map((n) => processes[n].close()));
      }
    });

    // Core first: it migrates the database, which the other roles then find done.
    await Promise.all([processes.sandbox.start(), processes.core.start()]);
    log(`sandbox and core ready (${Date.now() - started} ms)`);
    await Promise.all([processes.gateway1.start(), processes.gateway2.start(), processes.worker1.start(), processes.worker2.start()]);
    log(`gateways and workers ready (${Date.now() - started} ms)`);

    const ingress = await startIngress(() => gateways);
    cleanups.push(() => ingress.close());
    const upstream = createUpstream({
      vplat: {
        baseUrl: sandboxUrl,
        appId: SANDBOX_APP.vplatAppId,
        appSecret: SANDBOX_APP.vplatAppSecret,
        authorizeUrl: sandboxUrl + SANDBOX_AUTHORIZE_PATHS.vplat,
      },
      shop: { baseUrl: sandboxUrl, authBaseUrl: sandboxUrl, appKey: SANDBOX_APP.shopAppKey, appSecret: SANDBOX_APP.shopAppSecret },
      timeouts: { connectMs: 2_000, totalMs: 5_000 },
    });
    try {
      // As an operator does once at the platform: the app's webhooks go to the balancer.
      await subscribeToPlatformWebhooks(upstream.vplat, `${ingress.url}${UPSTREAM_WEBHOOK_PATH}`);
    } finally {
      await upstream.close();
    }

    const admin = createClient(
      AdminService,
      createConnectTransport({
        baseUrl: coreUrl,
        httpVersion: '1.1',
        interceptors: [
          (next) => (req) => {
            req.header.set('authorization', `Bearer ${adminToken}`);
            return next(req);
          },
        ],
      }),
    );
    // The round trip through Temporal and a worker, so the first publish does not meet a cold start.
    const ping = await admin.pingWorker({}, { timeoutMs: 60_000 });
    log(`worker round trip ${ping.roundTripMs} ms (${Date.now() - started} ms in all)`);

    const sandbox = async <T>(method: string, p: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${sandboxUrl}${p}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      });
      const json = (await res.json()) as T & { error?: string };
      if (!res.ok) throw new Error(`sandbox ${method} ${p}: HTTP ${res.status} ${json.error ?? ''}`);
      return json;
    };

    let tenantCounter = 0;
    const topology: Topology = {
      dir,
      adminToken,
      urls: {
        sandbox: sandboxUrl,
        core: coreUrl,
        gateways,
        webhookIngress: `${ingress.url}${UPSTREAM_WEBHOOK_PATH}`,
        temporal: temporal.address,
        temporalUi: temporal.uiUrl,
        postgres: pg.url,
        media: media.url,
        mediaStore: s3.endpoint,
        ops,
      },
      sharedEnv,
      admin,
      processes,
      unexpectedExits,
      media,
      ingress,
      async createTenant(o = {}) {
        const { customer } = await admin.createCustomer({
          name: o.name ?? `Topology tenant ${++tenantCounter}`,
          seatQuota: o.seatQuota ?? 10,
        });
        const { user } = await admin.createUser({ customerId: customer!.id, email: `user-${customer!.id}@example.com`, name: 'Topology' });
        const key = await admin.createApiKey({ userId: user!.id, name: 'topology' });
        return { customerId: customer!.id, userId: user!.id, apiKey: key.plaintext };
      },
      async createApiKey(tenant, name = 'extra') {
        return (await admin.createApiKey({ userId: tenant.userId, name })).plaintext;
      },
      async bindVideoSeat(tenant) {
        const { account, tokens } = await sandbox<{
          account: { openId: string; username: string };
          tokens: { access_token: string; refresh_token: string; access_token_expires_at: number };
        }>('POST', '/_sandbox/accounts', { platform: 'business' });
        const { seat } = await admin.createSeat({ customerId: tenant.customerId, track: Track.VIDEO, name: account.username });
        await admin.bindSeat({
          seatId: seat!.id,
          accountId: account.openId,
          accountUsername: account.username,
          credentials: {
            accessToken: tokens.access_token,
            refreshToken: tokens.refresh_token,
            accessTokenExpiresAt: { seconds: BigInt(tokens.access_token_expires_at), nanos: 0 },
          },
        });
        return { seatId: seat!.id, openId: account.openId, username: account.username, accessToken: tokens.access_token };
      },
      sandbox: sandbox as Topology['sandbox'],
      kill: (name, signal = 'SIGKILL') => processes[name].stop(signal),
      start: (name) => processes[name].start(),
      restart: (name, o = {}) => processes[name].restart(o.signal ?? 'SIGTERM', o.downMs ?? 0),
      restartPostgres: (o) => pg.restart(o),
      async restartTemporal(o = {}) {
        await temporal.stop();
        if (o.downMs) await new Promise((r) => setTimeout(r, o.downMs));
        temporal = await startTemporal();
      },
      close: cleanup,
    };
    return topology;
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** The addresses, for people. */
export function describeTopology(t: Topology): string {
  const rows: Array<[string, string]> = [
    ['Gateway 1', `${t.urls.gateways[0]}/v1`],
    ['Gateway 2', `${t.urls.gateways[1]}/v1`],
    ['Core (Connect)', t.urls.core],
    ['Sandbox', t.urls.sandbox],
    ['Platform webhooks', `${t.urls.webhookIngress} (balancer over both gateways)`],
    ['Temporal', t.urls.temporal],
    ['Temporal UI', t.urls.temporalUi],
    ['Postgres', t.urls.postgres],
    ['Media host', t.urls.media],
    ['Media store (S3)', t.urls.mediaStore],
    ...Object.entries(t.urls.ops).map(([name, url]): [string, string] => [`Ops ${name}`, url]),
    ['Admin token', t.adminToken],
    ['Logs', path.join(t.dir, 'logs')],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const pids = PROCESS_NAMES.map((n) => `${n}=${t.processes[n].pid ?? '-'}`).join(' ');
  return ['topology is running', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), `  ${'Processes'.padEnd(width)}  ${pids}`].join(
    '\n',
  );
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const topology = await startTopology({
    keepDir: true,
    rateLimitPerMinute: Number(process.env.TOPOLOGY_RATE_LIMIT_PER_MINUTE ?? 60),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const tenant = await topology.createTenant({ name: 'Topology demo' });
  const seat = await topology.bindVideoSeat(tenant);
  process.stdout.write(`${describeTopology(topology)}\n`);
  process.stdout.write(`  Demo API key       ${tenant.apiKey} (video seat ${seat.seatId}, account ${seat.username})\n`);
  process.stdout.write(`started in ${Date.now() - t0} ms; Ctrl-C stops everything\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  process.stderr.write('stopping\n');
  await topology.close();
  process.exit(0);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`topology: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
