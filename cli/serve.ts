/**
 * `vps serve --role …`: composes the roles into one process. `all` runs every role with embedded
 * defaults (PGlite, a Temporal dev server, the sandbox) unless configuration points elsewhere;
 * separate roles require their real dependencies to be configured.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { UsageError } from './usage-error';
import { createConnectTransport } from '@connectrpc/connect-node';
import { LISTEN_BACKLOG } from '../core/net/listen-backlog';
import { isLoopbackAddress } from '../core/net/address-policy';
import { httpTimeoutsFromConfig } from '../core/net/http-timeouts';
import type { Transport } from '@connectrpc/connect';
import type { Client } from '@temporalio/client';
import { PLATFORM_SETTINGS, REQUIRED_BY_ROLE, ROLES, type Config, type Env, type Role } from '../config/config';
import { buildApp, coreReadiness } from '../gateway/app';
import { SealedBox } from '../core/crypto/sealed-box';
import { startResealSweep } from '../core/crypto/reseal-sweep';
import { openDatabase, type Database } from '../core/db/client';
import { makeAdminToken, makeEncryptionKey, readOrCreateSecret } from '../core/embedded/local-secrets';
import { DEMO_EMAIL, DEV_CONSOLE_PASSWORD_FILE, seedDemoCustomer } from '../core/embedded/seed';
import { freePort, startTemporalDevServer } from '../core/embedded/temporal-dev-server';
import { createLogger, type Logger } from '../core/logger';
import { BASE_URL_FILE, localBaseUrl, removeBaseUrl, SANDBOX_URL_FILE, writeBaseUrl } from '../core/embedded/base-url-file';
import { createInProcessTransport } from '../core/in-process-transport';
import { createCore } from '../core/router';
import { startCoreServer } from '../core/server';
import { connectTemporalClient, type TemporalSettings } from '../core/temporal/connection';
import { ensureSearchAttributes, SEARCH_ATTRIBUTE_KEYS } from '../core/temporal/search-attributes';
import { startWorker } from '../worker/worker';
import { sandboxSettings, startSandbox } from '../sandbox/server';
import { UPSTREAM_WEBHOOK_PATH } from '../gateway/routes/upstream-webhooks';
import { subscribeToPlatformWebhooks } from '../core/upstream/vplat/webhooks';
import { restartTokenRefreshes } from '../core/temporal/restart-token-refreshes';
import { tokenRefreshStarter } from '../core/temporal/token-refresh';
import { createUpstream, type Upstream } from '../core/upstream';
import { resolveUpstream, SANDBOX_APP, type UpstreamSettings } from '../core/upstream/settings';
import { EventHub } from '../core/events/event-hub';
import type { EventRecorder } from '../core/events/recorder';
import { coreDepsFromConfig, eventRecorderFromConfig, tokenRefreshFromConfig, type LocalAddresses } from '../core/deps-from-config';
import { sandboxTokenGrant } from '../core/embedded/sandbox-tokens';
import { startOrphanSweep } from '../core/media/orphan-sweep';
import { mediaStoreFromConfig } from '../core/media/store-from-config';
import type { MediaStore } from '../core/media/storage';
import { TokenSigner } from '../core/media/signed-tokens';
import { createMetrics, type Metrics } from '../core/observability/metrics';
import { startOpsServer } from '../core/observability/ops-server';
import { mergeReports, workerReadiness, type ReadinessReport } from '../core/observability/readiness';

export { UsageError } from './usage-error';

export function parseRoles(spec: string): { roles: Set<Role>; all: boolean } {
  if (spec === 'all') return { roles: new Set(ROLES), all: true };
  const roles = new Set<Role>();
  for (const part of spec.split(',')) {
    const role = part.trim() as Role;
    if (!ROLES.includes(role)) throw new UsageError(`unknown role "${part}": use all, or a comma list of ${ROLES.join(', ')}`);
    roles.add(role);
  }
  return { roles, all: false };
}

/**
 * The embedded mode (`npm start`): every role in one process with no DATABASE_URL. Only there may
 * local conveniences apply: the emulator standing in for the platforms, and http or loopback URLs.
 */
export function isEmbedded(all: boolean, env: Env): boolean {
  return all && !env.DATABASE_URL;
}

/**
 * The variables `roles` need (REQUIRED_BY_ROLE) that are not set. `--role all` embeds Postgres,
 * Temporal and the secrets; outside the embedded mode it still needs the platforms' settings,
 * since the emulator's credentials are public and would let anyone sign a platform event.
 */
export function missingSettings(roles: Set<Role>, env: Env, all = false): string[] {
  const needed = new Set<keyof Env>(all ? [] : [...roles].flatMap((role) => REQUIRED_BY_ROLE[role]));
  // A gateway beside core calls it in memory.
  if (roles.has('core')) needed.delete('CORE_URL');
  if (all && !isEmbedded(all, env)) for (const name of PLATFORM_SETTINGS) needed.add(name);
  return [...needed].filter((name) => env[name] === undefined);
}

/** Why a start-up with `missing` settings is refused, naming each of them. */
function missingSettingsMessage(missing: string[], spec: string): string {
  const platform = missing.filter((name) => (PLATFORM_SETTINGS as readonly string[]).includes(name));
  const others = missing.filter((name) => !platform.includes(name));
  const reasons: string[] = [];
  if (others.length > 0) {
    reasons.push(`${others.join(', ')} must be set for --role ${spec}; only --role all embeds Postgres, Temporal and the secrets`);
  }
  if (platform.length > 0) {
    reasons.push(
      `${platform.join(', ')} must be set for --role ${spec}: core and the worker call the official platforms and verify their webhooks, ` +
        'and only the embedded mode (npm start: --role all without DATABASE_URL) lets the sandbox emulator stand in for them ' +
        '(to use an emulator elsewhere, point these at it; see docs/operating.md)',
    );
  }
  return reasons.join('\n');
}

function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || (isIP(host) !== 0 && isLoopbackAddress(host));
}

/**
 * The emulator's app credentials are published in this repository: a process that trusts them
 * accepts platform events anyone can sign. They are accepted only for an emulator on this machine.
 */
export function publicCredentialProblems(env: Env): string[] {
  const problems: string[] = [];
  const published = [
    ['VPLAT_APP_SECRET', env.VPLAT_APP_SECRET, SANDBOX_APP.vplatAppSecret, env.VPLAT_API_BASE],
    ['SHOP_APP_SECRET', env.SHOP_APP_SECRET, SANDBOX_APP.shopAppSecret, env.SHOP_API_BASE],
  ] as const;
  for (const [name, value, emulatorValue, base] of published) {
    if (value === emulatorValue && base && !isLoopbackUrl(base)) {
      problems.push(`${name} is the sandbox emulator's published secret; it is accepted only for an emulator on a loopback address`);
    }
  }
  return problems;
}

export interface Running {
  urls: Record<string, string>;
  devApiKey?: string;
  /** Whether http and loopback webhook URLs are accepted, for the banner. */
  localWebhooks?: boolean;
  stop(): Promise<void>;
}

/** What every role of one process shares: its configuration, logger, metrics, and what stopping and readiness collect. */
interface ProcessContext {
  config: Config;
  env: Env;
  roles: Set<Role>;
  all: boolean;
  logger: Logger;
  metrics: Metrics;
  /** Run in reverse order by stop(): last started, first stopped. */
  closers: Array<() => Promise<void>>;
  urls: Record<string, string>;
  /** Each role's readiness; the ops server reports them together. */
  readiness: Array<() => Promise<ReadinessReport>>;
  isDraining: () => boolean;
  local: LocalAddresses;
}

/** What core and the worker both stand on: Postgres, Temporal, the sealing key, the platforms' client, the event recorder. */
interface StatefulParts {
  database: Database;
  temporal: TemporalSettings;
  sealedBox: SealedBox;
  signer: TokenSigner;
  upstreamSettings: UpstreamSettings;
  upstream: Upstream;
  temporalClient: () => Promise<Client>;
  events: EventRecorder;
}

/**
 * Starts the roles. `onFatal` hears of a role that died after start-up (a worker whose run ended
 * with an error): the process should stop rather than live on without it.
 */
export async function serve(spec: string, config: Config, onFatal: (err: unknown) => void = () => undefined): Promise<Running> {
  const { roles, all } = parseRoles(spec);
  const env = config.env;
  const name = all ? 'all' : [...roles].join('+');
  const logger = createLogger(env.LOG_LEVEL, name);
  let draining = false;
  // The embedded mode is local development: a receiver or a source on this machine works out of
  // the box. Private, link-local and metadata addresses stay refused whatever is set here.
  const embedded = isEmbedded(all, env);
  const ctx: ProcessContext = {
    config,
    env,
    roles,
    all,
    logger,
    metrics: createMetrics({ role: name }),
    closers: [],
    urls: {},
    readiness: [],
    isDraining: () => draining,
    local: { webhooks: env.VPS_ALLOW_INSECURE_WEBHOOK_URLS ?? embedded, sources: env.VPS_ALLOW_INSECURE_SOURCE_URLS ?? embedded },
  };
  let stopped: Promise<void> | undefined;
  // Last started, first stopped; a second call waits for the first. Readiness fails from the first
  // moment, so load balancers stop sending new work while the in-flight work finishes.
  const stop = () =>
    (stopped ??= (async () => {
      draining = true;
      for (const close of [...ctx.closers].reverse()) {
        await close().catch((err: unknown) => logger.error({ err }, 'error while stopping'));
      }
    })());

  // Every lack is named at once, before anything starts.
  const missing = missingSettings(roles, env, all);
  if (missing.length > 0) throw new UsageError(missingSettingsMessage(missing, spec));
  const unsafe = roles.has('core') || roles.has('worker') ? publicCredentialProblems(env) : [];
  if (unsafe.length > 0) throw new UsageError(unsafe.join('\n'));

  try {
    // Core and worker are the roles with state: both need Postgres and Temporal.
    const stores = roles.has('core') || roles.has('worker') ? await openStores(ctx) : undefined;
    const sandboxUrl = roles.has('sandbox') ? await startSandboxRole(ctx) : undefined;
    // The emulator in this process stands in for the platforms only in the embedded mode.
    const stateful = stores ? statefulParts(ctx, stores, embedded ? sandboxUrl : undefined) : undefined;
    // Gateways write uploads and serve media URLs, core and workers read and remove. Checked now:
    // a store this process cannot use stops start-up rather than failing its first upload.
    const media = mediaStoreFromConfig(config);
    if (stateful || roles.has('gateway')) {
      await media.check();
      ctx.urls.Media = media.description;
      ctx.closers.push(async () => media.close());
    }
    // Media URLs name the gateway's origin before it listens: a port left to the system is chosen now.
    const gatewayPort = env.PORT === 0 && roles.has('gateway') ? await freePort() : env.PORT;
    const publicUrl = env.VPS_PUBLIC_URL ?? `http://localhost:${gatewayPort}`;

    const core = roles.has('core') ? await startCoreRole(ctx, stateful!, media, publicUrl) : undefined;
    if (roles.has('worker')) await startWorkerRole(ctx, stateful!, media, onFatal);
    if (roles.has('gateway')) {
      // Over CORE_URL, or in memory to core in this process (missingSettings guarantees one of them).
      const transport = env.CORE_URL
        ? createConnectTransport({ baseUrl: env.CORE_URL, httpVersion: '1.1', useBinaryFormat: true })
        : core!.transport;
      await startGatewayRole(ctx, {
        transport,
        media,
        gatewayPort,
        publicUrl,
        platformEmulator: sandboxUrl && stateful ? { upstream: stateful.upstream, url: sandboxUrl } : undefined,
      });
    }
    // Last to start, so it reports ready only once every role is up; last to stop, so that it
    // reports the drain (503 "draining") and keeps serving metrics until the very end.
    if (roles.has('gateway') || stateful) await startOpsRole(ctx);

    let devApiKey: string | undefined;
    if (all && stateful?.database.kind === 'pglite' && sandboxUrl) {
      devApiKey = (await seedDemoCustomer(stateful.database.db, stateful.sealedBox, config.dataDir, sandboxTokenGrant(sandboxUrl))).apiKey;
    }
    // In the background: start-up does not wait on Temporal for work that only needs to exist soon.
    if (core) void core.startRefreshes();
    return { urls: ctx.urls, devApiKey, stop, ...(roles.has('core') ? { localWebhooks: ctx.local.webhooks } : {}) };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startSandboxRole(ctx: ProcessContext): Promise<string> {
  const { env } = ctx;
  const { clockSpeed, ...settings } = sandboxSettings(env);
  const sandbox = await startSandbox({
    host: env.SANDBOX_HOST,
    port: env.SANDBOX_PORT,
    logger: ctx.logger.child({ component: 'sandbox' }),
    settings,
    clockSpeed,
  });
  ctx.closers.push(() => sandbox.close());
  ctx.urls.Sandbox = sandbox.url;
  return sandbox.url;
}

/** Postgres (or the embedded PGlite) and Temporal (or the embedded dev server). */
async function openStores(ctx: ProcessContext): Promise<Pick<StatefulParts, 'database' | 'temporal'>> {
  const { env, config, closers } = ctx;
  const database = await openDatabase({
    url: env.DATABASE_URL,
    dataDir: config.dataDir,
    poolSize: env.DATABASE_POOL_SIZE,
    preparedStatements: env.DATABASE_PREPARED_STATEMENTS,
  });
  closers.push(() => database.close());

  let address = env.TEMPORAL_ADDRESS;
  if (!address) {
    const dev = await startTemporalDevServer({
      cliPath: env.TEMPORAL_CLI_PATH,
      port: env.TEMPORAL_DEV_PORT,
      uiPort: env.TEMPORAL_DEV_UI_PORT,
      dbFile: path.join(config.dataDir, 'temporal.sqlite'),
      namespace: env.TEMPORAL_NAMESPACE,
    });
    closers.push(() => dev.stop());
    address = dev.address;
    ctx.urls['Temporal UI'] = env.TEMPORAL_UI_URL ?? dev.uiUrl;
  } else if (env.TEMPORAL_UI_URL) {
    ctx.urls['Temporal UI'] = env.TEMPORAL_UI_URL;
  }
  return { database, temporal: { ...env, address } };
}

/**
 * What core and the worker share on top of the stores: upstream credentials are sealed by core and
 * opened by the worker, so both need the key; both also record events and start workflows, so both
 * hold a Temporal client.
 */
function statefulParts(
  ctx: ProcessContext,
  stores: Pick<StatefulParts, 'database' | 'temporal'>,
  emulatorUrl: string | undefined,
): StatefulParts {
  const { env, config, closers, logger } = ctx;
  const { database, temporal } = stores;
  const key = env.VPS_ENCRYPTION_KEY ?? Buffer.from(readOrCreateSecret(config.dataDir, 'encryption-key', makeEncryptionKey), 'hex');
  const upstreamSettings = resolveUpstream(env, emulatorUrl);
  const upstream = createUpstream(upstreamSettings);
  closers.push(() => upstream.close());
  let clientPromise: Promise<{ client: Client; close(): Promise<void> }> | undefined;
  const temporalClient = async () => {
    // A failed connection is not kept: the next call tries again, so an outage heals by itself.
    clientPromise ??= connectTemporalClient(temporal).catch((err: unknown) => {
      clientPromise = undefined;
      throw err;
    });
    return (await clientPromise).client;
  };
  closers.push(async () => {
    if (clientPromise) await (await clientPromise).close();
  });
  // A cluster of our own lacks the attributes every workflow start carries (the embedded dev
  // server registers them itself). In the background, like every other wait on Temporal.
  if (env.TEMPORAL_ADDRESS) {
    void temporalClient()
      .then((c) => ensureSearchAttributes(c.connection, env.TEMPORAL_NAMESPACE))
      .catch((err: unknown) =>
        logger.error(
          { err },
          `could not register the search attributes ${SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).join(', ')} (Keyword); workflow starts fail until they exist`,
        ),
      );
  }
  return {
    database,
    temporal,
    sealedBox: new SealedBox(key, env.VPS_ENCRYPTION_KEYS_ACCEPTED),
    signer: new TokenSigner(key, env.VPS_ENCRYPTION_KEYS_ACCEPTED),
    upstreamSettings,
    upstream,
    temporalClient,
    events: eventRecorderFromConfig(config, database, temporalClient),
  };
}

/** Core's Connect server, and the transport a gateway in this process calls it through, in memory. */
async function startCoreRole(ctx: ProcessContext, parts: StatefulParts, media: MediaStore, publicUrl: string) {
  const { env, config, closers, logger } = ctx;
  const { database } = parts;
  const adminToken = env.VPS_ADMIN_TOKEN ?? (ctx.all ? readOrCreateSecret(config.dataDir, 'admin-token', makeAdminToken) : undefined);
  if (!adminToken) logger.warn('VPS_ADMIN_TOKEN is not set: the AdminService refuses every call');
  const hub = new EventHub({ listen: database.listen, logger: logger.child({ component: 'core' }) });
  closers.push(() => hub.close());
  const core = createCore(
    coreDepsFromConfig(config, {
      database,
      hub,
      logger: logger.child({ component: 'core' }),
      sealedBox: parts.sealedBox,
      signer: parts.signer,
      adminToken,
      temporalClient: parts.temporalClient,
      events: parts.events,
      upstream: parts.upstream,
      vplatApp: parts.upstreamSettings.vplat,
      media,
      publicUrl,
      local: ctx.local,
      metrics: ctx.metrics,
    }),
  );
  ctx.readiness.push(core.readiness);
  const server = await startCoreServer(core, {
    host: env.CORE_HOST,
    port: env.CORE_PORT,
    logger: logger.child({ component: 'core' }),
    readiness: core.readiness,
    draining: ctx.isDraining,
    httpTimeouts: httpTimeoutsFromConfig(env),
  });
  closers.push(() => server.close());
  ctx.urls['Core (Connect)'] = server.url;
  const reseal = startResealSweep(database.db, parts.sealedBox, {
    intervalMs: env.VPS_RESEAL_INTERVAL_MS,
    logger: logger.child({ component: 'core' }),
  });
  closers.push(async () => reseal.stop());
  const refreshes = tokenRefreshStarter(parts.temporalClient, { taskQueue: env.TEMPORAL_TASK_QUEUE, ...tokenRefreshFromConfig(config) });
  return {
    // Same process: the gateway calls core directly, through the same interceptors as over HTTP.
    transport: createInProcessTransport(core),
    startRefreshes: () => restartTokenRefreshes(database.db, refreshes, logger),
  };
}

async function startWorkerRole(
  ctx: ProcessContext,
  parts: StatefulParts,
  media: MediaStore,
  onFatal: (err: unknown) => void,
): Promise<void> {
  const { env, closers, logger } = ctx;
  const worker = await startWorker({
    settings: parts.temporal,
    taskQueue: env.TEMPORAL_TASK_QUEUE,
    db: parts.database.db,
    listen: parts.database.listen,
    deliveryQueue: {
      lingerMs: env.DELIVERY_DRAIN_LINGER_MS,
      maxDrainMs: env.DELIVERY_DRAIN_MAX_MS,
      wakeCoalesceMs: env.DELIVERY_WAKE_COALESCE_MS,
      sweepIntervalMs: env.DELIVERY_SWEEP_INTERVAL_MS,
      sweepGraceMs: env.DELIVERY_SWEEP_GRACE_MS,
    },
    sealedBox: parts.sealedBox,
    upstream: parts.upstream,
    events: parts.events,
    allowInsecureWebhookUrls: ctx.local.webhooks,
    disableEndpointAfterMs: env.WEBHOOK_DISABLE_AFTER_MS,
    maxInFlightPerEndpoint: env.WEBHOOK_MAX_IN_FLIGHT,
    media,
    allowInsecureSourceUrls: ctx.local.sources,
    tokenRefreshRetryMs: env.TOKEN_REFRESH_RETRY_AFTER_REFUSAL_MS,
    logger: logger.child({ component: 'worker' }),
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    metrics: ctx.metrics,
    videoExpiryRepair: { intervalMs: env.VIDEO_EXPIRY_REPAIR_INTERVAL_MS, graceMs: env.VIDEO_EXPIRY_REPAIR_GRACE_MS },
  });
  closers.push(() => worker.stop());
  const sweep = startOrphanSweep(media, {
    ageMs: env.MEDIA_S3_ORPHAN_AGE_MS,
    intervalMs: env.MEDIA_S3_SWEEP_INTERVAL_MS,
    logger: logger.child({ component: 'worker' }),
  });
  closers.push(async () => sweep.stop());
  ctx.readiness.push(workerReadiness(worker.state, parts.database.db));
  worker.done.catch(onFatal);
}

async function startGatewayRole(
  ctx: ProcessContext,
  opts: {
    transport: Transport;
    media: MediaStore;
    gatewayPort: number;
    publicUrl: string;
    /** The platforms' client and address when they are the emulator in this process: the app subscribes to its webhooks. */
    platformEmulator: { upstream: Upstream; url: string } | undefined;
  },
): Promise<void> {
  const { env, config, closers, logger, urls } = ctx;
  const app = await buildApp({
    transport: opts.transport,
    media: opts.media,
    maxUploadBytes: env.VIDEO_MAX_BYTES,
    uploadDrainBytes: env.UPLOAD_DRAIN_BYTES,
    logger: logger.child({ component: 'gateway' }),
    publicUrl: opts.publicUrl,
    // With --role gateway alone no Temporal is started here: the setting still links.
    temporalUiUrl: urls['Temporal UI'] ?? env.TEMPORAL_UI_URL ?? null,
    temporalNamespace: env.TEMPORAL_NAMESPACE,
    metrics: ctx.metrics,
    draining: ctx.isDraining,
    trustedProxies: env.VPS_TRUSTED_PROXIES,
    readinessCacheMs: env.READYZ_CACHE_MS,
    httpTimeouts: httpTimeoutsFromConfig(env),
  });
  // With core in this process, core's own readiness already covers what the gateway depends on.
  if (!ctx.roles.has('core')) ctx.readiness.push(() => coreReadiness(opts.transport));
  await app.listen({ host: env.HOST, port: opts.gatewayPort, backlog: LISTEN_BACKLOG });
  closers.push(() => app.close());
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.gatewayPort;
  if (typeof address === 'object' && address)
    announceAddress(config.dataDir, BASE_URL_FILE, localBaseUrl(address), logger, closers, '--base-url or VPS_BASE_URL');
  urls.API = `${env.VPS_PUBLIC_URL ?? `http://localhost:${port}`}/v1`;
  // With the emulator in this process, subscribe the app to its webhooks, as an operator does
  // once at the real platform (sandbox/README.md, "Webhook subscription").
  if (opts.platformEmulator && !env.VPLAT_API_BASE) {
    await subscribeToPlatformWebhooks(opts.platformEmulator.upstream.vplat, `http://127.0.0.1:${port}${UPSTREAM_WEBHOOK_PATH}`);
    urls['Platform webhooks'] = `http://127.0.0.1:${port}${UPSTREAM_WEBHOOK_PATH}`;
    // `vps trigger` on this machine makes platform events through this emulator: the one whose
    // pushes this gateway receives.
    announceAddress(config.dataDir, SANDBOX_URL_FILE, opts.platformEmulator.url, logger, closers, '--sandbox-url or VPS_SANDBOX_URL');
  }
}

/** Probes and metrics of every role in this process; first in the stop order's last place, so it reports the drain. */
async function startOpsRole(ctx: ProcessContext): Promise<void> {
  const { env, readiness } = ctx;
  const ops = await startOpsServer({
    host: env.OPS_HOST,
    port: env.OPS_PORT,
    logger: ctx.logger.child({ component: 'ops' }),
    metrics: ctx.metrics,
    draining: ctx.isDraining,
    readiness: async () => mergeReports(await Promise.all(readiness.map((r) => r()))),
    httpTimeouts: httpTimeoutsFromConfig(env),
  });
  ctx.closers.unshift(() => ops.close());
  ctx.urls.Ops = ops.url;
}

/**
 * Tells the `vps` client commands on this machine where the gateway (or the emulator) listens (see
 * base-url-file.ts), and takes it back on a clean stop, before the gateway closes. A folder that
 * cannot be written costs the clients their default only: they still take the flag or the
 * variable, so the gateway runs on.
 */
function announceAddress(
  dataDir: string,
  name: string,
  url: string,
  logger: Logger,
  closers: Array<() => Promise<void>>,
  otherwise: string,
): void {
  const file = path.join(dataDir, name);
  try {
    writeBaseUrl(dataDir, url, name);
  } catch (err) {
    logger.warn({ err, file }, `could not write ${file}: vps client commands need ${otherwise} (${url})`);
    return;
  }
  closers.push(async () => removeBaseUrl(dataDir, url, name));
}

export function banner(running: Running, dataDir: string): string {
  const width = Math.max(...Object.keys(running.urls).map((k) => k.length));
  const lines = ['', 'vps is running', ...Object.entries(running.urls).map(([name, url]) => `  ${name.padEnd(width)}  ${url}`)];
  if (running.devApiKey && running.urls.API) {
    lines.push(
      `  ${'Dev API key'.padEnd(width)}  ${path.join(dataDir, 'dev-api-key')}`,
      `  ${'Admin token'.padEnd(width)}  ${path.join(dataDir, 'admin-token')}`,
      `  ${'Console sign-in'.padEnd(width)}  ${running.urls.API.replace(/\/v1$/, '/console')} as ${DEMO_EMAIL}, password in ${path.join(dataDir, DEV_CONSOLE_PASSWORD_FILE)}`,
      '',
      'Try it:',
      `  curl -s ${running.urls.API}/seats -H 'Authorization: Bearer ${running.devApiKey}'`,
    );
  }
  if (running.localWebhooks !== undefined) {
    lines.push(
      '',
      running.localWebhooks
        ? 'Local webhooks: http and loopback URLs are accepted (e.g. http://localhost:3000/hook); VPS_ALLOW_INSECURE_WEBHOOK_URLS=false refuses them'
        : 'Local webhooks: refused (https to public addresses only); VPS_ALLOW_INSECURE_WEBHOOK_URLS=true accepts http and loopback URLs',
    );
  }
  return `${lines.join('\n')}\n`;
}
