/**
 * The service stack inside the test process, over real HTTP on loopback: core's Connect server and
 * a gateway that reaches it either in memory (as in --role all) or over HTTP (as separate roles).
 */
import { randomBytes } from 'node:crypto';
import { createClient, type Client as ConnectClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { Client } from '@temporalio/client';
import { AdminService } from '../../gen/vps/admin/v1/admin_pb';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { SealedBox } from '../../core/crypto/sealed-box';
import { openDatabase, type Database } from '../../core/db/client';
import { createLogger } from '../../core/logger';
import { createInProcessTransport } from '../../core/in-process-transport';
import { createCore } from '../../core/router';
import { startCoreServer } from '../../core/server';
import { connectTemporalClient } from '../../core/temporal/connection';
import { buildApp } from '../../gateway/app';
import { startWorker, type RunningWorker } from '../../core/temporal/worker';
import type { Upstream } from '../../core/upstream';
import { SANDBOX_APP } from '../../core/upstream/settings';
import { EventHub } from '../../core/events/event-hub';
import { EventRecorder } from '../../core/events/recorder';
import { watchEvents } from '../../core/events/watch-events';

export type TransportKind = 'in-memory' | 'http';

export interface Stack {
  baseUrl: string;
  coreUrl: string;
  adminToken: string;
  admin: ConnectClient<typeof AdminService>;
  database: Database;
  sealedBox: SealedBox;
  events: EventRecorder;
  /** Settings of the worker the test starts with startStackWorker. */
  workerSettings: { allowInsecureWebhookUrls: boolean; disableEndpointAfterMs: number; maxInFlightPerEndpoint: number };
  close(): Promise<void>;
}

/** Webhook retries in seconds instead of days. */
export const TEST_DELIVERY = { retryScheduleMs: [200, 400, 800], attemptTimeoutMs: 2_000 };

export async function startStack(
  opts: {
    transport?: TransportKind;
    ratePerMinute?: number;
    allowInsecureWebhookUrls?: boolean;
    taskQueue?: string;
    tokenRefresh?: { marginSeconds: number; minIntervalMs: number };
    delivery?: { retryScheduleMs: number[]; attemptTimeoutMs: number };
    sseHeartbeatMs?: number;
    secretGraceMs?: number;
    disableEndpointAfterMs?: number;
    maxInFlightPerEndpoint?: number;
  } = {},
): Promise<Stack> {
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'test');
  const database = await openDatabase({ url: requiredEnv('TEST_DATABASE_URL'), dataDir: '.data', poolSize: 5, migrate: false });
  const adminToken = `test-admin-${randomBytes(16).toString('hex')}`;
  const sealedBox = new SealedBox(randomBytes(32));
  let temporal: Promise<{ client: Client; close(): Promise<void> }> | undefined;
  const temporalClient = async () => {
    temporal ??= connectTemporalClient({ address: requiredEnv('TEMPORAL_ADDRESS'), TEMPORAL_NAMESPACE: 'default', TEMPORAL_TLS: false });
    return (await temporal).client;
  };
  const taskQueue = opts.taskQueue ?? 'vps-test';
  const events = new EventRecorder({ db: database.db, temporalClient, delivery: { taskQueue, ...(opts.delivery ?? TEST_DELIVERY) } });
  const hub = new EventHub({ listen: database.listen, logger });
  const core = createCore({
    db: database.db,
    logger,
    sealedBox,
    adminToken,
    ratePerMinute: opts.ratePerMinute ?? 60,
    allowInsecureWebhookUrls: opts.allowInsecureWebhookUrls ?? false,
    temporalClient,
    taskQueue,
    tokenRefresh: opts.tokenRefresh ?? { marginSeconds: 3_600, minIntervalMs: 60_000 },
    events,
    vplatApp: { appId: SANDBOX_APP.vplatAppId, appSecret: SANDBOX_APP.vplatAppSecret },
    secretGraceMs: opts.secretGraceMs ?? 86_400_000,
    watchEvents: (principal, req, signal) => watchEvents({ db: database.db, hub, heartbeatMs: opts.sseHeartbeatMs ?? 15_000 }, principal, req, signal),
  });
  const coreServer = await startCoreServer(core, { host: '127.0.0.1', port: 0, logger });
  const transport: Transport =
    opts.transport === 'http'
      ? createConnectTransport({ baseUrl: coreServer.url, httpVersion: '1.1', useBinaryFormat: true })
      : createInProcessTransport(core);
  const app = await buildApp({ transport, logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const adminTransport = createConnectTransport({
    baseUrl: coreServer.url,
    httpVersion: '1.1',
    interceptors: [
      (next) => (req) => {
        req.header.set('authorization', `Bearer ${adminToken}`);
        return next(req);
      },
    ],
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    coreUrl: coreServer.url,
    adminToken,
    admin: createClient(AdminService, adminTransport),
    database,
    sealedBox,
    events,
    workerSettings: { allowInsecureWebhookUrls: opts.allowInsecureWebhookUrls ?? false, disableEndpointAfterMs: opts.disableEndpointAfterMs ?? 432_000_000,
      maxInFlightPerEndpoint: opts.maxInFlightPerEndpoint ?? 10,
    },
    async close() {
      await app.close();
      await coreServer.close();
      await hub.close();
      if (temporal) await (await temporal).close();
      await database.close();
    },
  };
}

/** A worker on the stack's database and key, calling the official APIs through `upstream`. */
export function startStackWorker(stack: Stack, taskQueue: string, upstream: Upstream): Promise<RunningWorker> {
  return startWorker({
    settings: { address: requiredEnv('TEMPORAL_ADDRESS'), TEMPORAL_NAMESPACE: 'default', TEMPORAL_TLS: false },
    taskQueue,
    db: stack.database.db,
    sealedBox: stack.sealedBox,
    upstream,
    events: stack.events,
    allowInsecureWebhookUrls: stack.workerSettings.allowInsecureWebhookUrls,
    disableEndpointAfterMs: stack.workerSettings.disableEndpointAfterMs,
    maxInFlightPerEndpoint: stack.workerSettings.maxInFlightPerEndpoint,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'worker'),
    shutdownGraceMs: 1_000,
    // A stopped worker's workflows move to the next worker quickly, as the restart tests need.
    stickyQueueTimeoutMs: 1_000,
  });
}

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite through jest, whose global setup provides it`);
  return value;
}

export interface Tenant {
  customerId: string;
  userId: string;
  apiKey: string;
  apiKeyId: string;
}

let tenantCounter = 0;

/** A customer with one user and one key; every test gets its own, so buckets and seats never mix. */
export async function createTenant(stack: Stack, opts: { seatQuota?: number; planExpiresAt?: Date } = {}): Promise<Tenant> {
  const { customer } = await stack.admin.createCustomer({
    name: `Tenant ${++tenantCounter}`,
    seatQuota: opts.seatQuota ?? 3,
    planExpiresAt: opts.planExpiresAt ? { seconds: BigInt(Math.floor(opts.planExpiresAt.getTime() / 1000)), nanos: 0 } : undefined,
  });
  const { user } = await stack.admin.createUser({ customerId: customer!.id, email: `user-${customer!.id}@example.com`, name: 'Test' });
  const key = await stack.admin.createApiKey({ userId: user!.id, name: 'test' });
  return { customerId: customer!.id, userId: user!.id, apiKey: key.plaintext, apiKeyId: key.apiKey!.id };
}

export async function createBoundSeat(stack: Stack, tenant: Tenant, track: Track, accountId: string) {
  const { seat } = await stack.admin.createSeat({ customerId: tenant.customerId, track, name: `seat ${accountId}` });
  const bound = await stack.admin.bindSeat({ seatId: seat!.id, accountId, accountUsername: `user_${accountId}`, credentials: { accessToken: `at-${accountId}`, refreshToken: `rt-${accountId}` } });
  return bound.seat!;
}

export function uniqueAccount(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}
