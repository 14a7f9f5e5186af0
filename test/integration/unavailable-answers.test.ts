/**
 * What a gateway answers when it cannot serve a request for a while: its core unreachable, or the
 * gateway itself closing. Both are the envelope's 5000 with the HTTP status the spec's table gives
 * it (500), Retry-After and data.retryable, never Fastify's own 503 body nor a bare 5000, so that
 * clients tell it from a bug and retry; the SDK does so by itself.
 */
import net from 'node:net';
import os from 'node:os';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '../../core/logger';
import { FolderMediaStore } from '../../core/media/folder-store';
import { buildApp } from '../../gateway/app';
import { createVpsClient, VpsApiError, type RetryInfo } from '../../sdk';

/** A core that is closing: after `ms`, every call is answered 503, as Fastify's closing server does. */
async function closingCore(ms: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => {
      const body = '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}';
      setTimeout(
        () =>
          socket.end(
            `HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          ),
        ms,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('answers while unavailable', () => {
  let core: Awaited<ReturnType<typeof closingCore>>;
  let app: FastifyInstance;
  let port: number;
  let markCloseStarted: () => void;
  let releaseClose: () => void;
  const closeStarted = new Promise<void>((resolve) => (markCloseStarted = resolve));
  const closeReleased = new Promise<void>((resolve) => (releaseClose = resolve));

  beforeAll(async () => {
    core = await closingCore(300);
    app = await buildApp({
      transport: createConnectTransport({ baseUrl: core.url, httpVersion: '1.1', useBinaryFormat: true }),
      logger: createLogger('silent', 'test'),
      media: new FolderMediaStore(os.tmpdir()),
      maxUploadBytes: 1024,
    });
    // Holds the close open after its first hooks, as a gateway ending its event streams does.
    app.addHook('preClose', async () => {
      markCloseStarted();
      await closeReleased;
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    releaseClose();
    await app.close();
    await core.close();
  });

  it("answers a request whose core is closing with the table's 500, Retry-After and the retryable envelope", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/seats`, { headers: { authorization: 'Bearer vps_test_key' } });
    expect(res.status).toBe(500);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({ code: 5000, message: expect.stringMatching(/briefly unavailable/), data: { retryable: true } });
  });

  it('is retried by the SDK, after Retry-After each time, until its retries run out', async () => {
    const retries: RetryInfo[] = [];
    const client = createVpsClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'vps_test_key',
      retry: { maxTransientRetries: 2, baseDelayMs: 10, maxDelayMs: 20 },
      onRetry: (info) => retries.push(info),
    });
    const err = await client.seats.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VpsApiError);
    expect(err).toMatchObject({ code: 5000, httpStatus: 500, retryAfterSeconds: 1, data: { retryable: true } });
    expect(retries.map((r) => [r.kind, r.retry, r.delayMs, (r.error as VpsApiError).code])).toEqual([
      ['transient', 1, 1_000, 5000],
      ['transient', 2, 1_000, 5000],
    ]);
  }, 30_000);

  it('answers a request that reaches the gateway while it closes with the same envelope, and closes the connection', async () => {
    const closed = app.close();
    // The close is under way (its hooks run before the listener stops): a request now meets a closing gateway.
    await closeStarted;
    const res = await fetch(`http://127.0.0.1:${port}/v1/seats`, { headers: { authorization: 'Bearer vps_test_key' } });
    releaseClose();
    await closed;
    expect(res.status).toBe(500);
    expect(res.headers.get('connection')).toBe('close');
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({ code: 5000, message: expect.stringMatching(/briefly unavailable/), data: { retryable: true } });
  });
});
