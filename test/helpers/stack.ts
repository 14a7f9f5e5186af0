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
import { startWorker, type RunningWorker } from '../../worker/worker';
import type { Upstream } from '../../core/upstream';
import { SANDBOX_APP } from '../../core/upstream/settings';
import { EventHub } from '../../core/events/event-hub';
import { EventRecorder } from '../../core/events/recorder';
import { catalogued, TEST_EVENT_TYPE } from '../../core/events/event-types';
import type { NewEvent } from '../../core/db/repositories/events';
import { coreDepsFromConfig } from '../../core/deps-from-config';
import { loadConfig } from '../../config/config';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUpstream } from '../../core/upstream';
import { FolderMediaStore } from '../../core/media/folder-store';
import { S3MediaStore } from '../../core/media/s3-store';
import type { MediaStore } from '../../core/media/storage';
import { testS3, testStoreSettings } from './minio-server';
import { TokenSigner } from '../../core/media/signed-tokens';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { DEFAULT_HTTP_TIMEOUTS, type HttpTimeouts } from '../../core/net/http-timeouts';
import type { VideoSettings } from '../../core/services/video.service';
import type { PublishSettings } from '../../core/services/publish.service';
import type { PrecheckSettings } from '../../core/services/precheck.service';
import type { VideoExpiryRepairInput } from '../../workflows/shared';

export type TransportKind = 'in-memory' | 'http';

export interface Stack {
  baseUrl: string;
  coreUrl: string;
  adminToken: string;
  admin: ConnectClient<typeof AdminService>;
  database: Database;
  sealedBox: SealedBox;
  /** The key behind sealedBox, for a worker the test runs as a separate process. */
  encryptionKey: Buffer;
  events: EventRecorder;
  /** The media store the gateway, core and the stack's workers share (a temporary folder or an S3 prefix on MinIO). */
  media: MediaStore;
  /** The settings a `vps serve` child needs to use the same store. */
  mediaEnv: Record<string, string>;
  /**
   * Settings of the worker the test starts with startStackWorker. The video expiry repair runs only
   * where a test asks for it: it acts on every row of the database, which other suites share.
   */
  workerSettings: {
    allowInsecureWebhookUrls: boolean;
    disableEndpointAfterMs: number;
    maxInFlightPerEndpoint: number;
    allowInsecureSourceUrls: boolean;
    tokenRefreshRetryMs: number;
    videoExpiryRepair?: VideoExpiryRepairInput;
  };
  close(): Promise<void>;
}

/** Uploads and publishing on a test's time scale: polls every 100 ms, short waits. */
export const TEST_VIDEOS: VideoSettings = {
  maxBytes: 64 * 1024 * 1024,
  urlTtlMs: 604_800_000,
  uploadWaitMs: 20_000,
  fetchWaitMs: 20_000,
  remoteTimeoutMs: 10_000,
};
export const TEST_PUBLISHING: PublishSettings = {
  pollIntervalMs: 100,
  pollAttempts: 30,
  slowPollScheduleMs: [200, 400],
  postIdWaitMs: 5_000,
  submitTimeoutMs: 10_000,
  submitRetryInitialMs: 100,
  submitWaitMs: 5_000,
};

export const TEST_PRECHECK: PrecheckSettings = { dailyQuota: 50, pollIntervalMs: 100, pollAttempts: 50 };

/** Drains and sweeps on a test's time scale: a missed wake-up is found within a second or two. */
export const TEST_DELIVERY_QUEUE = { lingerMs: 500, maxDrainMs: 5_000, wakeCoalesceMs: 200, sweepIntervalMs: 1_000, sweepGraceMs: 1_000 };

/** Webhook retries in seconds instead of days. */
export const TEST_DELIVERY = { retryScheduleMs: [200, 400, 800], attemptTimeoutMs: 2_000 };

export type MediaStoreKind = 'folder' | 's3';
let defaultMediaStore: MediaStoreKind = 'folder';

/**
 * The store every stack of this test file uses unless it asks for one: a suite runs against MinIO
 * by importing test/helpers/use-s3-media before itself (each test file has its own modules).
 */
export function useMediaStoreByDefault(kind: MediaStoreKind): void {
  defaultMediaStore = kind;
}

/** A store of its own for one stack: a fresh folder, or a fresh key prefix in the suite's bucket. */
function testMediaStore(kind: MediaStoreKind): { media: MediaStore; mediaEnv: Record<string, string>; removeMedia(): Promise<void> } {
  if (kind === 'folder') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vps-media-'));
    return {
      media: new FolderMediaStore(dir),
      mediaEnv: { MEDIA_STORE: 'folder', VPS_MEDIA_DIR: dir },
      removeMedia: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const s3 = testS3();
  const media = new S3MediaStore(testStoreSettings(s3.server, s3.bucket, s3.prefix, { requestTimeoutMs: 10_000 }));
  // The bucket lives as long as the run's MinIO; each stack only stops using its prefix.
  return { media, mediaEnv: s3.env, removeMedia: async () => media.close() };
}

export async function startStack(
  opts: {
    transport?: TransportKind;
    ratePerMinute?: number;
    allowInsecureWebhookUrls?: boolean;
    taskQueue?: string;
    tokenRefresh?: { marginSeconds: number; minIntervalMs: number; retryAfterRefusalMs?: number };
    delivery?: { retryScheduleMs: number[]; attemptTimeoutMs: number };
    sseHeartbeatMs?: number;
    /**
     * The caps on open event streams and their lease. Suites that are not about the caps open many
     * streams with one key in quick succession, so the stack's caps are far above production's.
     */
    sseStreams?: { perKey?: number; perCustomer?: number; leaseMs?: number };
    /**
     * The console sign-in throttle. Every suite signs in from 127.0.0.1 against one database, so
     * the stack's buckets are far larger than production's unless a test asks for its own.
     */
    signIn?: {
      address?: { burst: number; refillMs: number };
      account?: { burst: number; refillMs: number };
      maxHashes?: number;
    };
    secretGraceMs?: number;
    disableEndpointAfterMs?: number;
    maxInFlightPerEndpoint?: number;
    /** The official APIs core calls while a caller waits; by default nothing answers. */
    upstream?: Upstream;
    videos?: Partial<VideoSettings>;
    publishing?: Partial<PublishSettings>;
    allowInsecureSourceUrls?: boolean;
    shop?: Partial<{ productCacheTtlMs: number; precheck: Partial<PrecheckSettings> }>;
    /** How long a seat connect's OAuth state is accepted; core's default when not given. */
    seatConnectTtlMs?: number;
    /**
     * The Temporal namespace core starts its workflows in (the stack's workers stay on 'default').
     * One that does not exist makes every start core tries fail at the Temporal server, as an
     * outage at the moment of the request would.
     */
    coreTemporalNamespace?: string;
    /**
     * The media store: the suite's MinIO or a temporary folder (useMediaStoreByDefault sets the
     * default), or a store the test made (and closes) itself.
     */
    mediaStore?: MediaStoreKind | { store: MediaStore; env: Record<string, string> };
    /** How long the gateway and core wait for slow clients; the service's defaults when not given. */
    httpTimeouts?: Partial<HttpTimeouts>;
    /** Refused uploads up to this size are read before the answer; the service's default when not given. */
    uploadDrainBytes?: number;
    /** How long the gateway's /readyz reuses a probe; the service's default when not given. */
    readinessCacheMs?: number;
    /**
     * The encryption key (a fresh one by default). A stack whose worker pushes to endpoints, or
     * uses seats, that another stack created needs that stack's key, as processes of one
     * deployment share theirs.
     */
    encryptionKey?: Buffer;
  } = {},
): Promise<Stack> {
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'test');
  const database = await openDatabase({ url: requiredEnv('TEST_DATABASE_URL'), dataDir: '.data', poolSize: 5, migrate: false });
  const adminToken = `test-admin-${randomBytes(16).toString('hex')}`;
  let temporal: Promise<{ client: Client; close(): Promise<void> }> | undefined;
  const temporalClient = async () => {
    temporal ??= connectTemporalClient({ address: requiredEnv('TEMPORAL_ADDRESS'), TEMPORAL_NAMESPACE: 'default', TEMPORAL_TLS: false });
    return (await temporal).client;
  };
  let coreTemporal: Promise<{ client: Client; close(): Promise<void> }> | undefined;
  const coreTemporalClient = !opts.coreTemporalNamespace
    ? temporalClient
    : async () => {
        coreTemporal ??= connectTemporalClient({
          address: requiredEnv('TEMPORAL_ADDRESS'),
          TEMPORAL_NAMESPACE: opts.coreTemporalNamespace!,
          TEMPORAL_TLS: false,
        });
        return (await coreTemporal).client;
      };
  const taskQueue = opts.taskQueue ?? 'vps-test';
  const events = new EventRecorder({ db: database.db, temporalClient, delivery: { taskQueue, ...(opts.delivery ?? TEST_DELIVERY) } });
  const hub = new EventHub({ listen: database.listen, logger });
  const encryptionKey = opts.encryptionKey ?? randomBytes(32);
  const sealedBox = new SealedBox(encryptionKey);
  const given = opts.mediaStore ?? defaultMediaStore;
  const { media, mediaEnv, removeMedia } =
    typeof given === 'string' ? testMediaStore(given) : { media: given.store, mediaEnv: given.env, removeMedia: async () => undefined };
  const unreachable = opts.upstream ? undefined : unreachableUpstream();
  // Media URLs name the gateway's origin, so its port is chosen before core is built. Another
  // process can take a port between its choice and the gateway's listen: then core is built again
  // for a new port, rather than the test failing on EADDRINUSE.
  const serveOn = async (gatewayPort: number) => {
    // The service's own mapping of configuration to core (what `vps serve` uses), with the
    // suite's short timings and each test's options on top.
    const config = loadConfig({
      TEMPORAL_TASK_QUEUE: taskQueue,
      RATE_LIMIT_PER_MINUTE: String(opts.ratePerMinute ?? 60),
      WEBHOOK_SECRET_GRACE_MS: String(opts.secretGraceMs ?? 86_400_000),
      SSE_HEARTBEAT_MS: String(opts.sseHeartbeatMs ?? 15_000),
      SSE_MAX_STREAMS_PER_KEY: String(opts.sseStreams?.perKey ?? 1_000),
      SSE_MAX_STREAMS_PER_CUSTOMER: String(opts.sseStreams?.perCustomer ?? 1_000),
      SSE_STREAM_LEASE_MS: String(opts.sseStreams?.leaseMs ?? 30_000),
      CONSOLE_SIGN_IN_ADDRESS_FAILURES: String(opts.signIn?.address?.burst ?? 1_000),
      CONSOLE_SIGN_IN_ADDRESS_REFILL_MS: String(opts.signIn?.address?.refillMs ?? 1_000),
      CONSOLE_SIGN_IN_ACCOUNT_FAILURES: String(opts.signIn?.account?.burst ?? 1_000),
      CONSOLE_SIGN_IN_ACCOUNT_REFILL_MS: String(opts.signIn?.account?.refillMs ?? 1_000),
      CONSOLE_SIGN_IN_MAX_HASHES: String(opts.signIn?.maxHashes ?? 2),
    });
    const core = createCore({
      ...coreDepsFromConfig(config, {
        database,
        hub,
        logger,
        sealedBox,
        signer: new TokenSigner(encryptionKey),
        adminToken,
        temporalClient: coreTemporalClient,
        events,
        upstream: opts.upstream ?? unreachable!,
        vplatApp: { appId: SANDBOX_APP.vplatAppId, appSecret: SANDBOX_APP.vplatAppSecret },
        media,
        publicUrl: `http://127.0.0.1:${gatewayPort}`,
        local: { webhooks: opts.allowInsecureWebhookUrls ?? false, sources: opts.allowInsecureSourceUrls ?? true },
      }),
      tokenRefresh: opts.tokenRefresh ?? { marginSeconds: 3_600, minIntervalMs: 60_000 },
      videos: { ...TEST_VIDEOS, ...opts.videos },
      publishing: { ...TEST_PUBLISHING, ...opts.publishing },
      shop: { productCacheTtlMs: opts.shop?.productCacheTtlMs ?? 60_000, precheck: { ...TEST_PRECHECK, ...opts.shop?.precheck } },
      seatConnectTtlMs: opts.seatConnectTtlMs,
    });
    const httpTimeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...opts.httpTimeouts };
    const coreServer = await startCoreServer(core, { host: '127.0.0.1', port: 0, logger, httpTimeouts });
    const transport: Transport =
      opts.transport === 'http'
        ? createConnectTransport({ baseUrl: coreServer.url, httpVersion: '1.1', useBinaryFormat: true })
        : createInProcessTransport(core);
    const app = await buildApp({
      transport,
      logger,
      media,
      maxUploadBytes: opts.videos?.maxBytes ?? TEST_VIDEOS.maxBytes,
      uploadDrainBytes: opts.uploadDrainBytes,
      httpTimeouts,
      readinessCacheMs: opts.readinessCacheMs,
    });
    try {
      await app.listen({ host: '127.0.0.1', port: gatewayPort });
    } catch (err) {
      await app.close();
      await coreServer.close();
      throw err;
    }
    return { app, coreServer };
  };
  let served: Awaited<ReturnType<typeof serveOn>> | undefined;
  let port = 0;
  for (let attempt = 1; !served; attempt++) {
    port = await freePort();
    try {
      served = await serveOn(port);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 5) throw err;
    }
  }
  const { app, coreServer } = served;
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
    encryptionKey,
    events,
    media,
    mediaEnv,
    workerSettings: {
      allowInsecureWebhookUrls: opts.allowInsecureWebhookUrls ?? false,
      disableEndpointAfterMs: opts.disableEndpointAfterMs ?? 432_000_000,
      maxInFlightPerEndpoint: opts.maxInFlightPerEndpoint ?? 10,
      allowInsecureSourceUrls: opts.allowInsecureSourceUrls ?? true,
      tokenRefreshRetryMs: opts.tokenRefresh?.retryAfterRefusalMs ?? 60_000,
    },
    async close() {
      await app.close();
      await coreServer.close();
      await hub.close();
      if (temporal) await (await temporal).close();
      if (coreTemporal) await (await coreTemporal).close();
      await database.close();
      await unreachable?.close();
      await removeMedia();
    },
  };
}

/** A worker on the stack's database and key, calling the official APIs through `upstream`. */
export function startStackWorker(stack: Stack, taskQueue: string, upstream: Upstream): Promise<RunningWorker> {
  return startWorker({
    settings: { address: requiredEnv('TEMPORAL_ADDRESS'), TEMPORAL_NAMESPACE: 'default', TEMPORAL_TLS: false },
    taskQueue,
    db: stack.database.db,
    listen: stack.database.listen,
    deliveryQueue: TEST_DELIVERY_QUEUE,
    sealedBox: stack.sealedBox,
    upstream,
    events: stack.events,
    allowInsecureWebhookUrls: stack.workerSettings.allowInsecureWebhookUrls,
    disableEndpointAfterMs: stack.workerSettings.disableEndpointAfterMs,
    maxInFlightPerEndpoint: stack.workerSettings.maxInFlightPerEndpoint,
    media: stack.media,
    allowInsecureSourceUrls: stack.workerSettings.allowInsecureSourceUrls,
    tokenRefreshRetryMs: stack.workerSettings.tokenRefreshRetryMs,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'worker'),
    shutdownGraceMs: 1_000,
    // A stopped worker's workflows move to the next worker quickly, as the restart tests need.
    stickyQueueTimeoutMs: 1_000,
    ...(stack.workerSettings.videoExpiryRepair ? { videoExpiryRepair: stack.workerSettings.videoExpiryRepair } : {}),
  });
}

/** Official APIs that nothing answers: for stacks and workers whose tests never call them. */
export function unreachableUpstream(): Upstream {
  return createUpstream({
    vplat: { baseUrl: 'http://127.0.0.1:9', appId: 'x', appSecret: 'x' },
    shop: { baseUrl: 'http://127.0.0.1:9', authBaseUrl: 'http://127.0.0.1:9', appKey: 'x', appSecret: 'x' },
    timeouts: { connectMs: 500, totalMs: 1_000 },
  });
}

/** A direct message event of `tenant`, numbered `n` in its data, as core's recorder takes it. */
export function messageEvent(tenant: Tenant, n: number, sourceKey: string | null, text = `message ${n}`): NewEvent {
  return {
    customerId: tenant.customerId,
    seatId: null,
    platform: 'vplat',
    type: 'vplat.message.received',
    event: 'im_receive_msg',
    occurredAt: new Date(),
    data: { n, text },
    sourceKey,
  };
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
/**
 * Logs a test event for `tenant` straight through core's recorder: event traffic without a platform
 * push. Reads of the log show it only when asked (`includeTest=true`).
 */
export function recordServiceEvent(stack: Stack, tenant: Tenant, n: number) {
  return stack.events.record({
    customerId: tenant.customerId,
    seatId: null,
    ...catalogued(TEST_EVENT_TYPE),
    occurredAt: new Date(),
    data: { n },
    sourceKey: `test-${tenant.customerId}-${n}`,
  });
}

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
  const bound = await stack.admin.bindSeat({
    seatId: seat!.id,
    accountId,
    accountUsername: `user_${accountId}`,
    credentials: { accessToken: `at-${accountId}`, refreshToken: `rt-${accountId}` },
  });
  return bound.seat!;
}

export function uniqueAccount(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}
