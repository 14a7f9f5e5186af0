/**
 * The servers of the load run, started by bench/load/run.ts as child processes so the load
 * generator and the SSE clients do not share their event loop, and so the service's memory is the
 * memory of a process of its own:
 *
 *   servers.ts service    the gateway with core in memory (as `--role all` runs them), the real
 *                         authentication and rate-limit statement, the real event hub and streams
 *   servers.ts baseline   bare servers doing the same database work without the service's layers:
 *                         `bare` resolves the caller from an in-memory key table and runs the
 *                         route's own statements; `sameWork` also runs the authentication and
 *                         rate-limit statement first; `sse` is a bare node:http event stream
 *
 * Both report their ports once listening and answer `memory` requests over the IPC channel, and
 * exit when the parent goes away.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { hashApiKey } from '../../core/crypto/api-keys';
import { openDatabase, rawQuery, type Database } from '../../core/db/client';
import { apiKeyMeter } from '../../core/db/repositories/access';
import { listEvents } from '../../core/db/repositories/events';
import { listSeatsOfCustomer } from '../../core/db/repositories/seats';
import { lockCustomer } from '../../core/db/repositories/tenancy';
import { countLiveEndpoints, deleteEndpoint, insertEndpoint } from '../../core/db/repositories/webhook-endpoints';
import { EventHub } from '../../core/events/event-hub';
import { bodyFromMessage, toEventMessage } from '../../core/events/present';
import { EventRecorder } from '../../core/events/recorder';
import { EVENTS_CHANNEL, parseEventNotice } from '../../core/events/stream-channel';
import { createInProcessTransport } from '../../core/in-process-transport';
import { createLogger } from '../../core/logger';
import { FolderMediaStore } from '../../core/media/folder-store';
import { benchCoreDeps } from '../harness';
import { createCore } from '../../core/router';
import { createUpstream } from '../../core/upstream';
import { buildApp } from '../../gateway/app';

export type ServerRole = 'service' | 'baseline';

/** What a server process tells its parent over IPC. */
export type ServerMessage =
  | { kind: 'ready'; ports: Record<string, number> }
  | { kind: 'memory'; id: number; rss: number; heapUsed: number; heapTotal: number; external: number; openStreams: number };

/** What the parent asks; `gc` collects garbage first (the process runs with --expose-gc). */
export interface ServerRequest {
  kind: 'memory';
  id: number;
  gc: boolean;
}

const POOL_SIZE = 10;

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

function bearer(req: { headers: http.IncomingHttpHeaders }): string {
  return String(req.headers.authorization ?? '').replace(/^Bearer /, '');
}

/** The service: gateway, core in memory, the event hub; no Temporal (no measured route uses it). */
async function startService(database: Database, ratePerMinute: number, closers: Array<() => Promise<unknown>>) {
  const logger = createLogger('warn', 'bench');
  const hub = new EventHub({ listen: database.listen, logger });
  closers.push(() => hub.close());
  // The measured routes call no official API.
  const upstream = createUpstream({
    vplat: { baseUrl: 'http://127.0.0.1:9', appId: 'x', appSecret: 'x' },
    shop: { baseUrl: 'http://127.0.0.1:9', authBaseUrl: 'http://127.0.0.1:9', appKey: 'x', appSecret: 'x' },
    timeouts: { connectMs: 1_000, totalMs: 1_000 },
  });
  closers.push(() => upstream.close());
  const mediaDir = mkdtempSync(path.join(os.tmpdir(), 'vps-bench-load-media-'));
  closers.push(async () => rmSync(mediaDir, { recursive: true, force: true }));
  const media = new FolderMediaStore(mediaDir);
  const noTemporal = () => Promise.reject(new Error('the load run starts no workflow'));
  const core = createCore(
    benchCoreDeps(
      { RATE_LIMIT_PER_MINUTE: String(ratePerMinute), TEMPORAL_TASK_QUEUE: 'bench-load' },
      {
        database,
        hub,
        logger,
        temporalClient: noTemporal,
        events: new EventRecorder({
          db: database.db,
          temporalClient: noTemporal,
          delivery: { taskQueue: 'bench-load', retryScheduleMs: [], attemptTimeoutMs: 1_000 },
        }),
        upstream,
        media,
        // Endpoints created by the write phase point at 127.0.0.1 and receive nothing (no event is
        // recorded while they exist).
        local: { webhooks: true, sources: false },
      },
    ),
  );
  const app = await buildApp({ transport: createInProcessTransport(core), logger, media, maxUploadBytes: 1024 });
  await app.listen({ host: '127.0.0.1', port: 0 });
  closers.push(() => app.close());
  return { ports: { service: (app.server.address() as AddressInfo).port }, openStreams: () => hub.size };
}

/** The baselines: the same statements from bare routes, and a bare SSE fan-out. */
async function startBaseline(database: Database, ratePerMinute: number, closers: Array<() => Promise<unknown>>) {
  const { db } = database;
  // The bare routes know every key up front, as a table in memory: no authentication statement.
  const customerOfKey = new Map<string, string>();
  // Read once at start: the load run creates no keys.
  for (const row of await rawQuery<{ key_hash: string; customer_id: string }>(db, 'select key_hash, customer_id from api_keys', [])) {
    customerOfKey.set(row.key_hash, row.customer_id);
  }
  const fromTable = async (req: FastifyRequest) => customerOfKey.get(hashApiKey(bearer(req)));
  const meterKey = apiKeyMeter(db, ratePerMinute);
  const fromStatement = async (req: FastifyRequest) => (await meterKey(hashApiKey(bearer(req))))?.customerId;

  const bareApp = async (customerOf: (req: FastifyRequest) => Promise<string | undefined>) => {
    const app = Fastify();
    const caller = async (req: FastifyRequest, reply: FastifyReply) => {
      const customerId = await customerOf(req);
      if (!customerId) void reply.code(401).send({ code: 1001, message: 'invalid key', data: null });
      return customerId;
    };
    app.get('/v1/seats', async (req, reply) => {
      const customerId = await caller(req, reply);
      if (!customerId) return reply;
      return { code: 0, message: 'ok', data: { items: await listSeatsOfCustomer(db, customerId) } };
    });
    // The same transaction as WebhookEndpointService.createEndpoint: lock, count, insert.
    app.post('/v1/webhook-endpoints', async (req, reply) => {
      const customerId = await caller(req, reply);
      if (!customerId) return reply;
      const body = req.body as { url: string; eventTypes: string[] };
      const row = await db.transaction(async (tx) => {
        await lockCustomer(tx, customerId);
        if ((await countLiveEndpoints(tx, customerId)) >= 20) throw new Error('too many endpoints');
        return insertEndpoint(tx, {
          customerId,
          url: new URL(body.url).href,
          eventTypes: [...new Set(body.eventTypes)],
          signingKey: randomBytes(32).toString('hex'),
          standardKey: null,
        });
      });
      return { code: 0, message: 'ok', data: { id: row.id, url: row.url } };
    });
    app.delete('/v1/webhook-endpoints/:id', async (req, reply) => {
      const customerId = await caller(req, reply);
      if (!customerId) return reply;
      const row = await deleteEndpoint(db, customerId, (req.params as { id: string }).id);
      if (!row) return reply.code(404).send({ code: 1005, message: 'no such endpoint', data: null });
      return { code: 0, message: 'ok', data: { id: row.id, deleted: true } };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(() => app.close());
    return (app.server.address() as AddressInfo).port;
  };

  // Bare SSE: one LISTEN, one read of each notified event, the same frame written to every
  // connection of its customer. The service reads the log once per stream instead (each stream
  // has its own cursor and type filter); this is the least work a database-backed fan-out can do.
  const streams = new Map<string, Set<http.ServerResponse>>();
  let open = 0;
  const sse = http.createServer((req, res) => {
    const customerId = customerOfKey.get(hashApiKey(bearer(req)));
    if (!customerId || !req.url?.startsWith('/v1/events/stream')) {
      res.writeHead(401).end();
      return;
    }
    let set = streams.get(customerId);
    if (!set) streams.set(customerId, (set = new Set()));
    set.add(res);
    open += 1;
    res.once('close', () => {
      set.delete(res);
      open -= 1;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write('retry: 3000\n\n');
  });
  const unlisten = await database.listen(EVENTS_CHANNEL, (payload) => {
    const notice = parseEventNotice(payload);
    if (!notice || !('position' in notice) || !streams.get(notice.customerId)?.size) return;
    listEvents(db, { customerId: notice.customerId, afterPosition: notice.position - 1, limit: 1 })
      .then(([row]) => {
        if (!row) return;
        const frame = `id: ${row.id}\ndata: ${JSON.stringify(bodyFromMessage(toEventMessage(row)))}\n\n`;
        for (const res of streams.get(notice.customerId) ?? []) res.write(frame);
      })
      .catch((err: unknown) => console.error('bench baseline: reading a notified event failed:', err));
  });
  closers.push(unlisten);
  await new Promise<void>((resolve) => sse.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        sse.closeAllConnections();
        sse.close(resolve);
      }),
  );
  return {
    ports: { bare: await bareApp(fromTable), sameWork: await bareApp(fromStatement), sse: (sse.address() as AddressInfo).port },
    openStreams: () => open,
  };
}

async function main() {
  const role = process.argv[2] as ServerRole;
  if (role !== 'service' && role !== 'baseline') throw new Error(`unknown role ${String(role)}: expected service or baseline`);
  const ratePerMinute = Number(env('BENCH_RATE_PER_MINUTE'));
  const database = await openDatabase({ url: env('BENCH_DATABASE_URL'), dataDir: '.data', poolSize: POOL_SIZE, migrate: false });
  const closers: Array<() => Promise<unknown>> = [() => database.close()];
  const started =
    role === 'service' ? await startService(database, ratePerMinute, closers) : await startBaseline(database, ratePerMinute, closers);

  const send = (message: ServerMessage) => process.send?.(message);
  process.on('message', (request: ServerRequest) => {
    if (request.kind !== 'memory') return;
    if (request.gc) globalThis.gc?.();
    const m = process.memoryUsage();
    send({
      kind: 'memory',
      id: request.id,
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      openStreams: started.openStreams(),
    });
  });
  // The parent ending (normally or not) ends this process: nothing here outlives the run.
  process.once('disconnect', () => {
    void (async () => {
      for (const close of closers.reverse()) await close().catch((err: unknown) => console.error(`bench ${role}: cleanup failed:`, err));
      process.exit(0);
    })();
  });
  send({ kind: 'ready', ports: started.ports });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
