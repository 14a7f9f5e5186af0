/**
 * The servers under measurement, in their own process so the load generator does not share their
 * event loop: the full path (gateway → core → Postgres, with core in memory as in --role all, and
 * over Connect as with separate roles, HTTP/1.1 and HTTP/2), the baseline, a bare Fastify route
 * running the same query, and the anchor, that route behind one bare connect-node unary call.
 * The production topology (`vps serve --role gateway,core`) runs as a process of its own (run.ts).
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createClient } from '@connectrpc/connect';
import { connectNodeAdapter, createConnectTransport } from '@connectrpc/connect-node';
import { HealthService } from '../../gen/vps/health/v1/health_pb';
import Fastify from 'fastify';
import postgres from 'postgres';
import { hashApiKey } from '../../core/crypto/api-keys';
import { apiKeyMeter } from '../../core/db/repositories/access';
import { openDatabase } from '../../core/db/client';
import { createLogger } from '../../core/logger';
import { EventRecorder } from '../../core/events/recorder';
import { createInProcessTransport } from '../../core/in-process-transport';
import { benchCoreDeps } from '../harness';
import { EventHub } from '../../core/events/event-hub';
import { createCore } from '../../core/router';
import { startCoreServer } from '../../core/server';
import { buildApp } from '../../gateway/app';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUpstream } from '../../core/upstream';
import { FolderMediaStore } from '../../core/media/folder-store';

async function main() {
  const url = process.env.BENCH_DATABASE_URL!;
  const customerId = process.env.BENCH_CUSTOMER_ID!;
  const logger = createLogger('warn', 'bench');
  const database = await openDatabase({ url, dataDir: '.data', poolSize: 10, migrate: false });
  // The seat benchmark calls no official API and stores no media.
  const upstream = createUpstream({
    vplat: { baseUrl: 'http://127.0.0.1:9', appId: 'x', appSecret: 'x' },
    shop: { baseUrl: 'http://127.0.0.1:9', authBaseUrl: 'http://127.0.0.1:9', appKey: 'x', appSecret: 'x' },
    timeouts: { connectMs: 1_000, totalMs: 1_000 },
  });
  const media = new FolderMediaStore(mkdtempSync(path.join(os.tmpdir(), 'vps-bench-media-')));
  const noTemporal = () => Promise.reject(new Error('not used by the benchmark'));
  const core = createCore({
    ...benchCoreDeps(
      // The limiter's statement still runs on every request; only the refusals are taken out.
      { RATE_LIMIT_PER_MINUTE: '1000000000', TEMPORAL_TASK_QUEUE: 'bench' },
      {
        database,
        hub: new EventHub({ listen: database.listen, logger }),
        logger,
        temporalClient: noTemporal,
        // The seat benchmark records no events and opens no streams.
        events: new EventRecorder({
          db: database.db,
          temporalClient: noTemporal,
          delivery: { taskQueue: 'bench', retryScheduleMs: [], attemptTimeoutMs: 1_000 },
        }),
        upstream,
        media,
      },
    ),
    watchEvents: () => {
      throw new Error('not used by the benchmark');
    },
  });
  const coreServer = await startCoreServer(core, { host: '127.0.0.1', port: 0, logger });

  const inMemory = await buildApp({ transport: createInProcessTransport(core), logger, media, maxUploadBytes: 1024 });
  await inMemory.listen({ host: '127.0.0.1', port: 0 });
  const overHttp = await buildApp({
    transport: createConnectTransport({ baseUrl: coreServer.url, httpVersion: '1.1', useBinaryFormat: true }),
    logger,
    media,
    maxUploadBytes: 1024,
  });
  await overHttp.listen({ host: '127.0.0.1', port: 0 });

  // The HTTP/2 alternative: core's Connect services on an h2c server, the gateway's transport on one
  // HTTP/2 session that every call shares (connect-node keeps it open and multiplexes on it). Plain
  // connect-node rather than core's Fastify server, which speaks HTTP/1.1 only: if this does not
  // reach the target, core's server with Fastify around it would not either.
  const h2Core = http2.createServer(connectNodeAdapter({ routes: core.routes, interceptors: core.interceptors }));
  await listen(h2Core);
  const overHttp2 = await buildApp({
    transport: createConnectTransport({
      baseUrl: `http://127.0.0.1:${(h2Core.address() as AddressInfo).port}`,
      httpVersion: '2',
      useBinaryFormat: true,
    }),
    logger,
    media,
    maxUploadBytes: 1024,
  });
  await overHttp2.listen({ host: '127.0.0.1', port: 0 });

  // Baseline: the same query the seat repository runs, straight from a route, same pool size.
  const sql = postgres(url, { max: 10 });
  const bare = Fastify();
  bare.get('/v1/seats', async () => {
    const rows = await sql`select * from seats where customer_id = ${customerId} order by id`;
    return { code: 0, message: 'ok', data: { items: rows } };
  });
  await bare.listen({ host: '127.0.0.1', port: 0 });

  // Second baseline: the same two statements the full path runs per request (the authentication
  // and rate-limit write, then the seat list), so the ratio against it isolates what the layers cost.
  const bareDb = await openDatabase({ url, dataDir: '.data', poolSize: 10, migrate: false });
  const meterKey = apiKeyMeter(bareDb.db, 1_000_000_000);
  const sameWork = Fastify();
  sameWork.get('/v1/seats', async (request, reply) => {
    const plaintext = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
    const access = await meterKey(hashApiKey(plaintext));
    if (!access) return reply.code(401).send({ code: 1001, message: 'invalid key', data: null });
    const rows = await sql`select * from seats where customer_id = ${access.customerId} order by id`;
    return { code: 0, message: 'ok', data: { items: rows } };
  });
  await sameWork.listen({ host: '127.0.0.1', port: 0 });

  // Anchor: the baseline's route making one unary call to a bare connect-node server (an answer
  // built from nothing, no interceptors) before its query. What it loses against the baseline is
  // the least any topology pays that crosses HTTP/1.1 once per request.
  const hopServer = http.createServer(
    connectNodeAdapter({ routes: (router) => router.service(HealthService, { check: () => ({ ready: true }) }) }),
  );
  await listen(hopServer);
  const hopClient = createClient(
    HealthService,
    createConnectTransport({
      baseUrl: `http://127.0.0.1:${(hopServer.address() as AddressInfo).port}`,
      httpVersion: '1.1',
      useBinaryFormat: true,
    }),
  );
  const anchor = Fastify();
  anchor.get('/v1/seats', async () => {
    await hopClient.check({});
    const rows = await sql`select * from seats where customer_id = ${customerId} order by id`;
    return { code: 0, message: 'ok', data: { items: rows } };
  });
  await anchor.listen({ host: '127.0.0.1', port: 0 });

  const port = (app: { server: { address(): unknown } }) => (app.server.address() as AddressInfo).port;
  const ports = {
    bare: port(bare),
    sameWork: port(sameWork),
    anchor: port(anchor),
    inMemory: port(inMemory),
    overHttp: port(overHttp),
    overHttp2: port(overHttp2),
  };
  process.stdout.write(`${JSON.stringify(ports)}\n`);
}

function listen(server: http.Server | http2.Http2Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
