/**
 * /readyz on the gateway's public port, which anyone may call: many calls at once, and calls in
 * quick succession, cost core one probe between them; the next probe comes only once the kept one
 * is older than the configured time.
 */
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { FastifyInstance } from 'fastify';
import { HealthService } from '../../gen/vps/health/v1/health_pb';
import { createLogger } from '../../core/logger';
import { buildApp } from '../../gateway/app';
import { eventually } from '../helpers/receivers';
import { startStack, type Stack } from '../helpers/stack';

// Long enough that fifty calls fit inside it on a loaded machine (a clean-clone CI run took 2.2 s).
const CACHE_MS = 8_000;

describe('readiness on the public port', () => {
  let stack: Stack;
  let app: FastifyInstance;
  let baseUrl: string;
  let probes = 0;

  beforeAll(async () => {
    stack = await startStack();
    // The gateway of a separate role, calling core over Connect, with its probes of core counted.
    const toCore = createConnectTransport({ baseUrl: stack.coreUrl, httpVersion: '1.1', useBinaryFormat: true });
    // Core's first probe opens its Postgres and Temporal connections, which can outlast the probe's
    // 2 s timeout on a loaded machine; a failed report would then be kept for the whole cache time.
    // Warm core up with uncounted probes first: this test is about the gateway's sharing.
    const coreReady = async () => (await toCore.unary(HealthService.method.check, undefined, undefined, undefined, {})).message.ready;
    await eventually(coreReady, (ready) => ready, 30_000, 200);
    const counting: Transport = {
      unary: (method, ...rest) => {
        if (method.name === HealthService.method.check.name && method.parent.typeName === HealthService.typeName) probes++;
        return toCore.unary(method, ...rest);
      },
      stream: (...args) => toCore.stream(...args),
    };
    app = await buildApp({
      transport: counting,
      logger: createLogger('silent', 'test'),
      media: stack.media,
      maxUploadBytes: 1024 * 1024,
      readinessCacheMs: CACHE_MS,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await stack?.close();
  });

  const readyz = async () => {
    const res = await fetch(`${baseUrl}/readyz`);
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it('answers many calls, at once and one after another, from one probe of core until the probe is older than the cache time', async () => {
    const started = performance.now();
    const together = await Promise.all(Array.from({ length: 25 }, readyz));
    for (const res of together) expect(res).toEqual({ status: 200, body: { status: 'ready' } });
    for (let i = 0; i < 25; i++) expect(await readyz()).toEqual({ status: 200, body: { status: 'ready' } });
    // Every call above came within the cache time of the first probe's end.
    expect(performance.now() - started).toBeLessThan(CACHE_MS);
    expect(probes).toBe(1);

    await delay(CACHE_MS);
    expect(await readyz()).toEqual({ status: 200, body: { status: 'ready' } });
    expect(probes).toBe(2);
  });
});
