/**
 * The lifetime of a video track record, on a shortened clock: its URL and record expire when the
 * durable timer fires, and the file is removed; a delete ends the lifetime workflow early. And the
 * address policy of remote uploads as production runs it (no insecure sources).
 */
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { connectTemporalClient } from '../../core/temporal/connection';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack, type Tenant } from '../helpers/stack';
import { startWorkingStack, type WorkingStack } from '../helpers/working-stack';
import { mp4Bytes, startSourceServer, uploadMultipart, type SourceServer } from '../helpers/videos';

interface VideoJson {
  id: string;
  status: string;
  videoUrl: string | null;
  expiresAt: string | null;
  deletedAt: string | null;
}

const TTL_MS = 2_500;

describe('video lifetime', () => {
  let env: WorkingStack;
  let stack: Stack;
  let source: SourceServer;
  let tenant: Tenant;
  let seatId: string;

  beforeAll(async () => {
    env = await startWorkingStack('videos-lifetime', { stack: { videos: { urlTtlMs: TTL_MS } } });
    stack = env.stack;
    source = await startSourceServer();
    tenant = await createTenant(stack);
    seatId = (await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'))).id;
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await source?.close();
  });

  const get = (id: string) => call<VideoJson>(stack.baseUrl, 'GET', `/v1/videos/${id}`, { key: tenant.apiKey });

  it('expires a direct upload when its URL lifetime ends: status expired, file removed, URL refused', async () => {
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'a.mp4', bytes: mp4Bytes(4096) } },
    ]);
    const { id, videoUrl, expiresAt } = res.body.data;
    expect(Date.parse(expiresAt!) - Date.now()).toBeLessThanOrEqual(TTL_MS);
    expect((await fetch(videoUrl!)).status).toBe(200);
    const expired = await eventually(
      () => get(id),
      (r) => r.body.data.status === 'expired',
      15_000,
      100,
    );
    expect(expired.body.data).toMatchObject({ status: 'expired', videoUrl: null, deletedAt: null });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt!));
    expect(await stack.media.size(`videos/${id}`)).toBeUndefined();
    expect((await fetch(videoUrl!)).status).toBe(404);
  });

  it('starts the same lifetime for a remote upload once it is available', async () => {
    const res = await call<VideoJson>(stack.baseUrl, 'POST', '/v1/videos', {
      key: tenant.apiKey,
      json: { sourceUrl: `${source.url}/video.mp4`, seatId },
    });
    expect(res.body.data.status).toBe('available');
    const expired = await eventually(
      () => get(res.body.data.id),
      (r) => r.body.data.status === 'expired',
      15_000,
      100,
    );
    expect(expired.body.data.videoUrl).toBeNull();
    expect(await stack.media.size(`videos/${res.body.data.id}`)).toBeUndefined();
  });

  it('ends the lifetime workflow early on delete', async () => {
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'a.mp4', bytes: mp4Bytes(4096) } },
    ]);
    const temporal = await connectTemporalClient({
      address: process.env.TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TLS: false,
    });
    try {
      const handle = temporal.client.workflow.getHandle(`video-expiry-${res.body.data.id}`);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      const started = Date.now();
      expect((await call(stack.baseUrl, 'DELETE', `/v1/videos/${res.body.data.id}`, { key: tenant.apiKey })).body.code).toBe(0);
      await handle.result();
      expect(Date.now() - started).toBeLessThan(TTL_MS);
      expect((await get(res.body.data.id)).body.data).toMatchObject({ status: 'expired', deletedAt: expect.any(String) });
    } finally {
      await temporal.close();
    }
  });
});

describe('production settings, gateway calling core over Connect HTTP', () => {
  let stack: Stack;
  let tenant: Tenant;
  let seatId: string;
  beforeAll(async () => {
    stack = await startStack({ allowInsecureSourceUrls: false, transport: 'http' });
    tenant = await createTenant(stack);
    seatId = (await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'))).id;
  });
  afterAll(() => stack.close());

  it.each([
    ['http://127.0.0.1/video.mp4', /^sourceUrl: must use https/],
    ['http://example.com/video.mp4', /^sourceUrl: must use https/],
    ['https://127.0.0.1/video.mp4', /^sourceUrl: must resolve to a public address/],
    ['https://10.1.2.3/video.mp4', /^sourceUrl: must resolve to a public address/],
    ['https://[::1]/video.mp4', /^sourceUrl: must resolve to a public address/],
    ['https://169.254.169.254/latest/meta-data', /^sourceUrl: must resolve to a public address/],
    ['https://localhost/video.mp4', /^sourceUrl: must resolve to a public address/],
  ])('refuses %s with 2001 before opening a record', async (sourceUrl, message) => {
    const res = await call(stack.baseUrl, 'POST', '/v1/videos', { key: tenant.apiKey, json: { sourceUrl, seatId } });
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 422, code: 2001 });
    expect(res.body.message).toMatch(message);
    const list = await call<{ items: unknown[] }>(stack.baseUrl, 'GET', '/v1/videos', { key: tenant.apiKey });
    expect(list.body.data.items).toEqual([]);
  });

  it('stores and serves a direct upload the same way', async () => {
    const bytes = mp4Bytes(100 * 1024);
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'a.mp4', bytes } },
    ]);
    expect(res.body.data.status).toBe('available');
    const part = await fetch(res.body.data.videoUrl!, { headers: { range: 'bytes=0-15' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(0, 16));
    expect(
      (
        await uploadMultipart(stack.baseUrl, 'vps_wrong', [
          { name: 'seatId', value: seatId },
          { name: 'file', value: { fileName: 'a.mp4', bytes } },
        ])
      ).body.code,
    ).toBe(1001);
  });
});

describe('remote upload address policy in the worker', () => {
  let env: WorkingStack;
  let stack: Stack;
  let source: SourceServer;
  let tenant: Tenant;
  let seatId: string;

  beforeAll(async () => {
    // Core accepts the loopback URL (as in development); the worker runs with production's
    // policy, so the fetch itself must refuse it: the check does not rest on core alone.
    env = await startWorkingStack('videos-guard', { stack: { allowInsecureSourceUrls: true }, worker: { allowInsecureSourceUrls: false } });
    stack = env.stack;
    source = await startSourceServer();
    tenant = await createTenant(stack);
    seatId = (await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'))).id;
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await source?.close();
  });

  it('refuses to fetch from an address that is not public, and fails the record without retrying', async () => {
    const res = await call<{ videoId: string }>(stack.baseUrl, 'POST', '/v1/videos', {
      key: tenant.apiKey,
      json: { sourceUrl: `${source.url}/video.mp4`, seatId },
    });
    expect({ code: res.body.code, message: res.body.message }).toEqual({
      code: 2001,
      message: expect.stringMatching(/^sourceUrl refused: must use https/),
    });
    const done = await call<VideoJson & { failureReason: string | null }>(stack.baseUrl, 'GET', `/v1/videos/${res.body.data.videoId}`, {
      key: tenant.apiKey,
    });
    expect(done.body.data).toMatchObject({ status: 'failed', failureReason: expect.stringMatching(/^sourceUrl refused: must use https/) });
    expect(source.hits.get('/video.mp4')).toBeUndefined();
  });
});
