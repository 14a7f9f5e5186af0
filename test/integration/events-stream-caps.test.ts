/**
 * The caps on open event streams, tried as a client that keeps opening streams would: beyond the
 * cap of its key, or of its customer, a stream is refused with 429, code 2002 and Retry-After in
 * the envelope, before any stream starts; closing a stream frees its slot; the count is one count
 * whichever gateway or core serves the streams; and the slots of a process that was killed come
 * back once their leases lapse.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createConnectTransport } from '@connectrpc/connect-node';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { createLogger } from '../../core/logger';
import { FolderMediaStore } from '../../core/media/folder-store';
import { buildApp } from '../../gateway/app';
import { cleanEnv, spawnVps, UNREACHABLE_PLATFORM_ENV, type ChildHandle } from '../helpers/processes';
import { SseReader } from '../helpers/sse';
import { createTenant, recordServiceEvent, requiredEnv, startStack, type Stack, type Tenant } from '../helpers/stack';

const PER_KEY = 2;
const PER_CUSTOMER = 3;
/** Short, so that a killed process's slots come back within the test; renewed every second. */
const LEASE_MS = 3_000;
const CAPS = { perKey: PER_KEY, perCustomer: PER_CUSTOMER, leaseMs: LEASE_MS };

describe('caps on open event streams', () => {
  let stack: Stack;
  /** A second gateway on the same core, over Connect HTTP, as another gateway process would be. */
  let second: FastifyInstance;
  let secondUrl: string;
  /** Another core (and its gateway) on the same database. */
  let other: Stack;
  const readers: SseReader[] = [];

  beforeAll(async () => {
    [stack, other] = await Promise.all([startStack({ sseStreams: CAPS }), startStack({ sseStreams: CAPS })]);
    second = await buildApp({
      transport: createConnectTransport({ baseUrl: stack.coreUrl, httpVersion: '1.1', useBinaryFormat: true }),
      logger: createLogger('silent', 'test'),
      media: new FolderMediaStore(os.tmpdir()),
      maxUploadBytes: 1024,
    });
    secondUrl = await second.listen({ host: '127.0.0.1', port: 0 });
  });
  afterEach(async () => {
    const cancels = await Promise.allSettled(readers.splice(0).map((r) => r.cancel()));
    // The streams of the killed process were cut off, which is what that test wants: their cancel
    // rejects with undici's "terminated". Anything else is a failure.
    for (const c of cancels) if (c.status === 'rejected' && !/terminated/.test(String(c.reason))) throw c.reason;
  });
  afterAll(async () => {
    await second?.close();
    await Promise.all([stack?.close(), other?.close()]);
  });

  /** Opens a stream; the answer is either a live stream (its first block read) or a refusal. */
  async function open(baseUrl: string, key: string): Promise<SseReader> {
    const reader = await SseReader.open(`${baseUrl}/v1/events/stream?includeTest=true`, { authorization: `Bearer ${key}` });
    readers.push(reader);
    if (reader.res.status === 200) expect(await reader.next()).toEqual({ retry: expect.any(String) });
    return reader;
  }

  async function expectOpen(baseUrl: string, key: string): Promise<SseReader> {
    const reader = await open(baseUrl, key);
    expect(reader.res.status).toBe(200);
    expect(reader.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    return reader;
  }

  /** The refusal a client beyond a cap gets: an envelope, not a stream. */
  async function expectRefused(baseUrl: string, key: string, scope: 'credential' | 'customer') {
    const reader = await open(baseUrl, key);
    expect(reader.res.status).toBe(429);
    expect(reader.res.headers.get('content-type')).toMatch(/^application\/json/);
    const retryAfter = reader.res.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(LEASE_MS / 1000);
    const body = JSON.parse(await reader.text()) as { code: number; message: string; data: Record<string, unknown> };
    expect(body).toEqual({
      code: 2002,
      message: expect.stringMatching(/too many open event streams/),
      data: { scope, open: scope === 'credential' ? PER_KEY : PER_CUSTOMER, limit: scope === 'credential' ? PER_KEY : PER_CUSTOMER },
    });
    return { retryAfter: Number(retryAfter) };
  }

  /** Opens a stream as soon as one is allowed, polling; fails after `ms`. */
  async function openOnceAllowed(baseUrl: string, key: string, ms: number): Promise<{ reader: SseReader; waitedMs: number }> {
    const started = Date.now();
    for (;;) {
      const reader = await open(baseUrl, key);
      if (reader.res.status === 200) return { reader, waitedMs: Date.now() - started };
      expect(reader.res.status).toBe(429);
      await reader.cancel();
      if (Date.now() - started > ms) throw new Error(`no stream allowed within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function readToEnd(reader: SseReader): Promise<void> {
    while (await reader.next(3_000));
  }

  async function secondKey(tenant: Tenant): Promise<string> {
    return (await stack.admin.createApiKey({ userId: tenant.userId, name: 'second' })).plaintext;
  }

  it("refuses a stream beyond its key's cap with 429, code 2002 and Retry-After, and closing a stream frees its slot", async () => {
    const tenant = await createTenant(stack);
    const open1 = await expectOpen(stack.baseUrl, tenant.apiKey);
    const open2 = await expectOpen(stack.baseUrl, tenant.apiKey);
    await expectRefused(stack.baseUrl, tenant.apiKey, 'credential');

    // The streams within the cap are untouched by the refusal.
    await recordServiceEvent(stack, tenant, 1);
    for (const r of [open1, open2]) expect(JSON.parse((await r.nextEvent()).data!)).toMatchObject({ type: 'service.endpoint.test' });

    await open1.cancel();
    const { reader, waitedMs } = await openOnceAllowed(stack.baseUrl, tenant.apiKey, 2_000);
    expect(reader.res.status).toBe(200);
    // Freed when the stream ended, not when its lease lapsed.
    expect(waitedMs).toBeLessThan(LEASE_MS);
    await expectRefused(stack.baseUrl, tenant.apiKey, 'credential');
  });

  it('keeps the slots of streams open longer than a lease: their core renews the leases', async () => {
    const tenant = await createTenant(stack);
    const streams = [await expectOpen(stack.baseUrl, tenant.apiKey), await expectOpen(secondUrl, tenant.apiKey)];
    // Tried again and again for two lease lifetimes: a lease that lapsed would let one through.
    const until = Date.now() + 2 * LEASE_MS;
    while (Date.now() < until) {
      await expectRefused(other.baseUrl, tenant.apiKey, 'credential');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await recordServiceEvent(stack, tenant, 1);
    for (const r of streams) expect(JSON.parse((await r.nextEvent()).data!)).toMatchObject({ type: 'service.endpoint.test' });
  });

  it('ends a stream whose lease was lost (another instance removed it as lapsed), so the cap stays true', async () => {
    const tenant = await createTenant(stack);
    const reader = await expectOpen(stack.baseUrl, tenant.apiKey);
    await stack.database.db.execute(sql`delete from event_stream_leases where credential = ${`key:${tenant.apiKeyId}`}`);
    // Found at the next renewal, a third of a lease later; the client then reconnects with Last-Event-ID.
    await expect(readToEnd(reader)).resolves.toBeUndefined();
  });

  it("counts every key of a customer against the customer's cap, and leaves other customers alone", async () => {
    const tenant = await createTenant(stack);
    const key2 = await secondKey(tenant);
    await expectOpen(stack.baseUrl, tenant.apiKey);
    await expectOpen(stack.baseUrl, tenant.apiKey);
    await expectOpen(stack.baseUrl, key2);
    // key2 holds one stream, under its own cap of 2: the customer's cap of 3 is what refuses it.
    await expectRefused(stack.baseUrl, key2, 'customer');
    const bystander = await createTenant(stack);
    await expectOpen(stack.baseUrl, bystander.apiKey);
  });

  it('holds one count across two gateways on one core and a gateway of another core on the same database', async () => {
    const tenant = await createTenant(stack);
    await expectOpen(stack.baseUrl, tenant.apiKey);
    await expectOpen(secondUrl, tenant.apiKey);
    await expectRefused(other.baseUrl, tenant.apiKey, 'credential');
    await expectRefused(secondUrl, tenant.apiKey, 'credential');

    const key2 = await secondKey(tenant);
    await expectOpen(other.baseUrl, key2);
    await expectRefused(stack.baseUrl, key2, 'customer');
  });

  it('opens streams concurrently on three gateways and never lets more than the cap through', async () => {
    const tenant = await createTenant(stack);
    const bases = [stack.baseUrl, secondUrl, other.baseUrl];
    const answers = await Promise.all(Array.from({ length: 9 }, (_, i) => open(bases[i % 3]!, tenant.apiKey)));
    const statuses = answers.map((r) => r.res.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429, 429, 429, 429]);
  });

  describe('after the process serving the streams is killed', () => {
    let child: ChildHandle | undefined;
    let dataDir: string;
    afterAll(async () => {
      await child?.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("gives the killed process's slots back once their leases lapse, within one lease", async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'vps-stream-caps-'));
      const [port, corePort] = await Promise.all([freePort(), freePort()]);
      child = spawnVps(
        ['serve', '--role', 'gateway,core'],
        cleanEnv({
          DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
          TEMPORAL_ADDRESS: requiredEnv('TEMPORAL_ADDRESS'),
          VPS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
          VPS_DATA_DIR: dataDir,
          PORT: String(port),
          CORE_PORT: String(corePort),
          ...UNREACHABLE_PLATFORM_ENV,
          SSE_MAX_STREAMS_PER_KEY: String(PER_KEY),
          SSE_MAX_STREAMS_PER_CUSTOMER: String(PER_CUSTOMER),
          SSE_STREAM_LEASE_MS: String(LEASE_MS),
        }),
      );
      await child.waitFor(/vps is running/, 90_000);
      const childUrl = `http://127.0.0.1:${port}`;

      const tenant = await createTenant(stack);
      const onChild = [await expectOpen(childUrl, tenant.apiKey), await expectOpen(childUrl, tenant.apiKey)];
      await expectRefused(stack.baseUrl, tenant.apiKey, 'credential');

      await child.stop('SIGKILL');
      const killedAt = Date.now();
      // What was sent before the kill (the stream's start) is read first; then the connection is gone.
      for (const reader of onChild) await expect(readToEnd(reader)).rejects.toThrow('terminated');
      // Its leases were renewed within the last third of a lease: they still count.
      await expectRefused(stack.baseUrl, tenant.apiKey, 'credential');
      // Each lease lapses one lease after its last renewal, the two not necessarily together.
      for (let i = 0; i < PER_KEY; i++) await openOnceAllowed(stack.baseUrl, tenant.apiKey, LEASE_MS + 2_000);
      expect(Date.now() - killedAt).toBeLessThanOrEqual(LEASE_MS + 1_000);
      await expectRefused(stack.baseUrl, tenant.apiKey, 'credential');
    }, 120_000);
  });
});
