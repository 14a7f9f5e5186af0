/**
 * Configuration turned into core's inputs, in one place: `vps serve`, the test stack and the
 * benchmarks all build core (and its event recorder) through these, so a new setting is added to
 * config/config.ts and mapped here, and every way of running core picks it up. What cannot come
 * from configuration (the open database, the clients, the store, the process's logger) is passed
 * in as `runtime`.
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../config/config';
import type { SealedBox } from './crypto/sealed-box';
import type { Database } from './db/client';
import type { EventHub } from './events/event-hub';
import { EventRecorder } from './events/recorder';
import { StreamLeases } from './events/stream-leases';
import { watchEvents } from './events/watch-events';
import type { Logger } from './logger';
import type { TokenSigner } from './media/signed-tokens';
import type { MediaStore } from './media/storage';
import type { Metrics } from './observability/metrics';
import type { CoreDeps } from './router';
import type { Upstream } from './upstream';

/** Whether http and loopback addresses are accepted, as decided for this process (embedded mode allows them by default). */
export interface LocalAddresses {
  webhooks: boolean;
  sources: boolean;
}

/** What core needs beside its configuration: the things a process opens or creates. */
export interface CoreRuntime {
  database: Pick<Database, 'db' | 'listen'>;
  hub: EventHub;
  logger: Logger;
  sealedBox: SealedBox;
  signer: TokenSigner;
  adminToken: string | undefined;
  temporalClient: () => Promise<Client>;
  events: EventRecorder;
  upstream: Upstream;
  /** The short-video platform app whose secret signs its webhooks (from the resolved upstream settings). */
  vplatApp: { appId: string; appSecret: string };
  media: MediaStore;
  /** Public origin of the gateway, for media URLs. */
  publicUrl: string;
  local: LocalAddresses;
  metrics?: Metrics;
}

/** The event recorder of a process: it stores events and queues their deliveries on the configured task queue. */
export function eventRecorderFromConfig(
  config: Config,
  database: Pick<Database, 'db'>,
  temporalClient: () => Promise<Client>,
): EventRecorder {
  const env = config.env;
  return new EventRecorder({
    db: database.db,
    temporalClient,
    delivery: {
      taskQueue: env.TEMPORAL_TASK_QUEUE,
      retryScheduleMs: env.DELIVERY_RETRY_SCHEDULE_MS,
      attemptTimeoutMs: env.DELIVERY_ATTEMPT_TIMEOUT_MS,
    },
  });
}

/** The token refresh pacing core and the worker share. */
export function tokenRefreshFromConfig(config: Config): CoreDeps['tokenRefresh'] {
  return { marginSeconds: config.env.TOKEN_REFRESH_MARGIN_S, minIntervalMs: config.env.TOKEN_REFRESH_MIN_INTERVAL_MS };
}

export function coreDepsFromConfig(config: Config, runtime: CoreRuntime): CoreDeps {
  const env = config.env;
  const { database, hub } = runtime;
  // One per core: it renews the leases of all of this core's streams together.
  const leases = new StreamLeases({
    db: database.db,
    logger: runtime.logger,
    settings: {
      perCredential: env.SSE_MAX_STREAMS_PER_KEY,
      perCustomer: env.SSE_MAX_STREAMS_PER_CUSTOMER,
      leaseMs: env.SSE_STREAM_LEASE_MS,
    },
  });
  return {
    db: database.db,
    logger: runtime.logger,
    sealedBox: runtime.sealedBox,
    adminToken: runtime.adminToken,
    ratePerMinute: env.RATE_LIMIT_PER_MINUTE,
    allowInsecureWebhookUrls: runtime.local.webhooks,
    temporalClient: runtime.temporalClient,
    taskQueue: env.TEMPORAL_TASK_QUEUE,
    tokenRefresh: tokenRefreshFromConfig(config),
    events: runtime.events,
    vplatApp: runtime.vplatApp,
    secretGraceMs: env.WEBHOOK_SECRET_GRACE_MS,
    vplatMediaHosts: env.VPLAT_MEDIA_HOSTS ?? [],
    watchEvents: (principal, req, signal, credential) =>
      watchEvents({ db: database.db, hub, heartbeatMs: env.SSE_HEARTBEAT_MS, leases }, principal, req, signal, credential),
    upstream: runtime.upstream,
    media: runtime.media,
    signer: runtime.signer,
    publicUrl: runtime.publicUrl,
    videos: {
      maxBytes: env.VIDEO_MAX_BYTES,
      urlTtlMs: env.VIDEO_URL_TTL_MS,
      uploadWaitMs: env.UPLOAD_WAIT_MS,
      fetchWaitMs: env.VIDEO_FETCH_WAIT_MS,
      remoteTimeoutMs: env.REMOTE_UPLOAD_TIMEOUT_MS,
      fetchHeartbeatTimeoutMs: env.VIDEO_FETCH_HEARTBEAT_TIMEOUT_MS,
    },
    publishing: {
      pollIntervalMs: env.PUBLISH_POLL_INTERVAL_MS,
      pollAttempts: env.PUBLISH_POLL_ATTEMPTS,
      slowPollScheduleMs: env.PUBLISH_SLOW_POLL_SCHEDULE_MS,
      postIdWaitMs: env.PUBLISH_POST_ID_WAIT_MS,
      // The activity also reads and writes the record around the official call.
      submitTimeoutMs: env.UPSTREAM_TIMEOUT_MS + 30_000,
      submitRetryInitialMs: env.PUBLISH_SUBMIT_RETRY_MS,
      submitWaitMs: env.PUBLISH_SUBMIT_WAIT_MS,
    },
    allowInsecureSourceUrls: runtime.local.sources,
    shop: {
      productCacheTtlMs: env.PRODUCT_CACHE_TTL_MS,
      precheck: {
        dailyQuota: env.PRECHECK_DAILY_QUOTA,
        pollIntervalMs: env.PRECHECK_POLL_INTERVAL_MS,
        pollAttempts: env.PRECHECK_POLL_ATTEMPTS,
      },
    },
    consoleSessions: { ttlMs: env.CONSOLE_SESSION_TTL_MS, maxAgeMs: env.CONSOLE_SESSION_MAX_AGE_MS },
    signIn: {
      throttle: {
        address: { burst: env.CONSOLE_SIGN_IN_ADDRESS_FAILURES, refillMs: env.CONSOLE_SIGN_IN_ADDRESS_REFILL_MS },
        account: { burst: env.CONSOLE_SIGN_IN_ACCOUNT_FAILURES, refillMs: env.CONSOLE_SIGN_IN_ACCOUNT_REFILL_MS },
      },
      maxHashes: env.CONSOLE_SIGN_IN_MAX_HASHES,
    },
    ...(runtime.metrics ? { metrics: runtime.metrics } : {}),
  };
}
