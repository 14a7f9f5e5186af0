/**
 * What the benchmarks that run the whole service share: their settings from the environment, a
 * fresh Postgres database, the service in one process as `--role all` runs it (Temporal dev
 * server, core, gateway and a worker), a customer with a bound video seat, an SSE client, and the
 * small helpers for load and figures.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import postgres from 'postgres';
import { generateApiKey } from '../core/crypto/api-keys';
import { SealedBox } from '../core/crypto/sealed-box';
import { openDatabase, type Db } from '../core/db/client';
import * as seatsRepo from '../core/db/repositories/seats';
import * as tenancy from '../core/db/repositories/tenancy';
import { freePort, startTemporalDevServer } from '../core/embedded/temporal-dev-server';
import { EventHub } from '../core/events/event-hub';
import { EventRecorder, type DeliverySettings } from '../core/events/recorder';
import { coreDepsFromConfig, type CoreRuntime } from '../core/deps-from-config';
import { loadConfig } from '../config/config';
import { createInProcessTransport } from '../core/in-process-transport';
import { createLogger } from '../core/logger';
import { TokenSigner } from '../core/media/signed-tokens';
import { FolderMediaStore } from '../core/media/folder-store';
import { createCore, type CoreDeps } from '../core/router';
import type { PublishSettings } from '../core/services/publish.service';
import { connectTemporalClient } from '../core/temporal/connection';
import { startWorker } from '../worker/worker';
import type { Upstream } from '../core/upstream';
import { sealCredentials } from '../core/upstream/credentials';
import { SANDBOX_APP } from '../core/upstream/settings';
import { buildApp } from '../gateway/app';

/** The embedded defaults of the delivery queue (config: DELIVERY_DRAIN_*, DELIVERY_WAKE_*, DELIVERY_SWEEP_*). */
const BENCH_DELIVERY_QUEUE = { lingerMs: 2_000, maxDrainMs: 15_000, wakeCoalesceMs: 1_000, sweepIntervalMs: 10_000, sweepGraceMs: 5_000 };

export const ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A positive integer setting from the environment; a bad value stops the run with its name. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}=${raw}: expected a positive integer`);
  return value;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Runs `run` over `items` with at most `concurrency` in flight; the first failure stops the rest. */
export async function inBatches<T>(items: T[], concurrency: number, run: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!failed && next < items.length) {
        const index = next++;
        try {
          await run(items[index]!, index);
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    }),
  );
}

export async function waitUntil(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A database of its own for one run, created empty (the service migrates it) and dropped after. */
export async function createBenchDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${Date.now()}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      try {
        await admin.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.end();
      }
    },
  };
}

export interface BenchStack {
  db: Db;
  sealedBox: SealedBox;
  temporal: Client;
  taskQueue: string;
  /** The gateway's origin, e.g. http://127.0.0.1:1234. */
  gateway: string;
  /**
   * Opens an SSE client of GET /v1/events/stream that calls `onEvent` with each event and the time
   * it arrived; resolves once the stream is live. The stream lasts until close(), where the
   * gateway ends it: aborting it from this side first left its connection open on the gateway
   * until the 72 s keep-alive timeout, and the gateway's close waited for it.
   */
  streamEvents(apiKey: string, onEvent: (event: StreamedEvent, at: number) => void, types?: string[]): Promise<void>;
  /** Stops everything started, newest first, and drops the database. */
  close(): Promise<void>;
}

/**
 * The service as `--role all` runs it, in this process: a Temporal dev server, core reached in
 * memory by the gateway, and a worker on the same task queue, on a fresh database.
 */
export async function startBenchStack(opts: {
  name: string;
  upstream: Upstream;
  delivery: Omit<DeliverySettings, 'taskQueue'>;
  publishing: PublishSettings;
  allowInsecureWebhookUrls: boolean;
  maxInFlightPerEndpoint: number;
}): Promise<BenchStack> {
  const logger = createLogger('warn', 'bench');
  const closers: Array<{ what: string; close: () => Promise<unknown> }> = [];
  const streams: AbortController[] = [];
  const close = async () => {
    for (const { what, close: stop } of closers.reverse()) {
      await stop().catch((err: unknown) => console.error(`bench: stopping ${what} failed:`, err));
    }
    for (const stream of streams) stream.abort();
  };
  try {
    const database = await createBenchDatabase(`vps_bench_${opts.name}`);
    closers.push({ what: 'the bench database', close: () => database.drop() });
    const dev = await startTemporalDevServer({ port: await freePort(), uiPort: await freePort(), namespace: 'default' });
    closers.push({ what: 'the Temporal dev server', close: () => dev.stop() });
    const opened = await openDatabase({ url: database.url, dataDir: '.data', poolSize: 10 });
    closers.push({ what: 'the database pool', close: () => opened.close() });
    const temporalSettings = { address: dev.address, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TLS: false };
    const temporal = await connectTemporalClient(temporalSettings);
    closers.push({ what: 'the Temporal client', close: () => temporal.close() });
    const mediaDir = mkdtempSync(path.join(os.tmpdir(), 'vps-bench-media-'));
    closers.push({ what: 'the media folder', close: async () => rmSync(mediaDir, { recursive: true, force: true }) });

    const taskQueue = `bench-${opts.name}`;
    const events = new EventRecorder({
      db: opened.db,
      temporalClient: async () => temporal.client,
      delivery: { taskQueue, ...opts.delivery },
    });
    const hub = new EventHub({ listen: opened.listen, logger });
    closers.push({ what: 'the event hub', close: () => hub.close() });
    const sealedBox = new SealedBox(randomBytes(32));
    const media = new FolderMediaStore(mediaDir);
    // Media URLs name the gateway's origin, so its port is chosen before core is built.
    const gatewayPort = await freePort();
    const core = createCore({
      ...benchCoreDeps(
        // The limiter's statement still runs on every request; only the refusals are taken out.
        { RATE_LIMIT_PER_MINUTE: '1000000000', TEMPORAL_TASK_QUEUE: taskQueue },
        {
          database: opened,
          hub,
          logger,
          sealedBox,
          temporalClient: async () => temporal.client,
          events,
          upstream: opts.upstream,
          media,
          vplatApp: { appId: SANDBOX_APP.vplatAppId, appSecret: SANDBOX_APP.vplatAppSecret },
          publicUrl: `http://127.0.0.1:${gatewayPort}`,
          local: { webhooks: opts.allowInsecureWebhookUrls, sources: false },
        },
      ),
      publishing: opts.publishing,
    });
    const app = await buildApp({ transport: createInProcessTransport(core), logger, media, maxUploadBytes: 1024 });
    await app.listen({ host: '127.0.0.1', port: gatewayPort });
    closers.push({ what: 'the gateway', close: () => app.close() });
    const worker = await startWorker({
      settings: temporalSettings,
      taskQueue,
      db: opened.db,
      listen: opened.listen,
      deliveryQueue: BENCH_DELIVERY_QUEUE,
      sealedBox,
      upstream: opts.upstream,
      events,
      allowInsecureWebhookUrls: opts.allowInsecureWebhookUrls,
      disableEndpointAfterMs: 432_000_000,
      maxInFlightPerEndpoint: opts.maxInFlightPerEndpoint,
      media,
      allowInsecureSourceUrls: false,
      tokenRefreshRetryMs: loadConfig({}).env.TOKEN_REFRESH_RETRY_AFTER_REFUSAL_MS,
      logger,
      shutdownGraceMs: 1_000,
    });
    closers.push({ what: 'the worker', close: () => worker.stop() });
    const gateway = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    return {
      db: opened.db,
      sealedBox,
      temporal: temporal.client,
      taskQueue,
      gateway,
      async streamEvents(apiKey, onEvent, types = []) {
        const abort = new AbortController();
        streams.push(abort);
        await readEventStream(gateway, apiKey, onEvent, types, abort.signal);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A customer with one user, an API key and a video seat bound to `account` with its access token sealed. */
export async function createBenchTenant(
  stack: BenchStack,
  account: { id: string; username: string; accessToken: string },
): Promise<{ customerId: string; apiKey: string; seatId: string }> {
  const customer = await tenancy.insertCustomer(stack.db, { name: 'Bench', seatQuota: 1, planExpiresAt: null });
  const user = await tenancy.insertUser(stack.db, { customerId: customer.id, email: 'bench@example.com', name: 'Bench' });
  const key = generateApiKey();
  await tenancy.insertApiKey(stack.db, { customerId: customer.id, userId: user!.id, name: 'bench', prefix: key.prefix, keyHash: key.hash });
  const seat = await seatsRepo.insertSeat(stack.db, { customerId: customer.id, name: 'bench', track: 'video' });
  await seatsRepo.bindSeat(stack.db, seat.id, {
    accountId: account.id,
    accountUsername: account.username,
    credentialsSealed: sealCredentials(stack.sealedBox, seat.id, { accessToken: account.accessToken }),
    accessTokenExpiresAt: null,
    refreshTokenExpiresAt: null,
  });
  return { customerId: customer.id, apiKey: key.plaintext, seatId: seat.id };
}

export interface StreamedEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** Reads the event stream until `signal` aborts or the gateway ends it; resolves once it is live. */
export async function readEventStream(
  gateway: string,
  apiKey: string,
  onEvent: (event: StreamedEvent, at: number) => void,
  types: string[],
  signal: AbortSignal,
): Promise<void> {
  const query = types.length ? `?types=${encodeURIComponent(types.join(','))}` : '';
  const call = new AbortController();
  signal.addEventListener('abort', () => call.abort(), { once: true });
  // Only the wait for the response head is bounded: the stream itself lasts until the stack closes.
  const opening = setTimeout(() => call.abort(new Error('the event stream did not open within 10 s')), 10_000);
  const res = await fetch(`${gateway}/v1/events/stream${query}`, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: call.signal,
  }).finally(() => clearTimeout(opening));
  if (!res.ok || !res.body) throw new Error(`SSE stream refused: HTTP ${res.status}`);
  const body = res.body as unknown as AsyncIterable<Uint8Array>;
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        const at = Date.now();
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = /^id: (.+)$/m.exec(frame)?.[1];
          const data = /^data: (.+)$/m.exec(frame)?.[1];
          if (id && data) {
            const parsed = JSON.parse(data) as { type: string; data: Record<string, unknown> };
            onEvent({ id, type: parsed.type, data: parsed.data }, at);
          }
        }
      }
    } catch (err) {
      if (!signal.aborted) console.error('bench: the event stream failed:', err);
    }
  })();
}

/** The 1, 5 and 15 minute load averages: how busy the machine is, others' work included. */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/** The machine a figure comes from, and how busy it was just before: printed with every run. */
export function machineLine(): string {
  return `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${loadAverage()}`;
}

/** A plain-text table: the first column left-aligned, the others right-aligned, widths from the content. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/**
 * Core as `vps serve` builds it (coreDepsFromConfig, from configuration `env` over the defaults),
 * with what no benchmark measures filled in: fresh keys, no admin token, a 1 KiB upload cap.
 */
export function benchCoreDeps(
  env: Record<string, string>,
  runtime: Pick<CoreRuntime, 'database' | 'hub' | 'logger' | 'temporalClient' | 'events' | 'upstream' | 'media'> & Partial<CoreRuntime>,
): CoreDeps {
  return coreDepsFromConfig(loadConfig({ VIDEO_MAX_BYTES: '1024', ...env }), {
    sealedBox: new SealedBox(randomBytes(32)),
    signer: new TokenSigner(randomBytes(32)),
    adminToken: undefined,
    vplatApp: { appId: 'bench', appSecret: 'bench' },
    publicUrl: 'http://127.0.0.1',
    local: { webhooks: false, sources: false },
    ...runtime,
  });
}
