/**
 * The video library's events: an upload answered `processing` because its fetch or its shop
 * hand-off outlasted the request's wait (VIDEO_FETCH_WAIT_MS, UPLOAD_WAIT_MS, shortened here)
 * announces its outcome with vplat.video.available or vplat.video.failed, logged like any event:
 * pulled with a type filter, and pushed to an endpoint subscribed to exactly those types.
 */
import { call } from '../helpers/http';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { mp4Bytes, startSourceServer, uploadMultipart, type SourceServer } from '../helpers/videos';
import { bindSandboxSeat, startWorkingStack, type WorkingStack } from '../helpers/working-stack';

interface VideoJson {
  id: string;
  track: string;
  status: string;
  videoUrl: string | null;
  fileId: string | null;
  expiresAt: string | null;
  failureReason: string | null;
}
interface EventJson {
  id: string;
  type: string;
  seat_id: string | null;
  data: Record<string, unknown>;
}

/** The requests' waits; every slow step below takes several times as long. */
const WAIT_MS = 200;
const SLOW_MS = 1_500;
const SHOP_UPLOAD = '/affiliate_creator/202505/videos/video_files';

describe('video library events', () => {
  let env: WorkingStack;
  let stack: Stack;
  let source: SourceServer;
  let receiver: WebhookReceiver;
  let tenant: Tenant;
  let videoSeatId: string;
  let shopSeatId: string;

  beforeAll(async () => {
    env = await startWorkingStack('video-events', {
      stack: { allowInsecureWebhookUrls: true, videos: { fetchWaitMs: WAIT_MS, uploadWaitMs: WAIT_MS } },
    });
    stack = env.stack;
    source = await startSourceServer();
    receiver = await startWebhookReceiver();
    tenant = await createTenant(stack);
    ({ seatId: videoSeatId } = await bindSandboxSeat(env, tenant, 'business'));
    ({ seatId: shopSeatId } = await bindSandboxSeat(env, tenant, 'shop'));
    const endpoint = await call(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url: receiver.url, eventTypes: ['vplat.video.available', 'vplat.video.failed'] },
    });
    expect(endpoint.body.code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await source?.close();
    await receiver?.close();
  });

  const remoteUpload = (sourceUrl: string, seatId: string) =>
    call<VideoJson>(stack.baseUrl, 'POST', '/v1/videos', { key: tenant.apiKey, json: { sourceUrl, seatId } });
  /** The event of the record, pulled with the type filter, once it is logged. */
  const pulled = async (type: string, videoId: string) =>
    (
      await eventually(
        () => call<{ items: EventJson[] }>(stack.baseUrl, 'GET', `/v1/events?types=${type}&limit=100`, { key: tenant.apiKey }),
        (r) => r.body.data.items.some((e) => e.data.video_id === videoId),
        20_000,
        100,
      )
    ).body.data.items.filter((e) => e.data.video_id === videoId);
  const pushedFor = async (videoId: string) =>
    (await receiver.waitFor(1, (p) => p.body.includes(videoId), 20_000)).map((p) => JSON.parse(p.body) as EventJson);

  it('announces a video track remote upload that outlasted the wait when it becomes available', async () => {
    const res = await remoteUpload(`${source.url}/slow?ms=${SLOW_MS}`, videoSeatId);
    expect(res.body.code).toBe(0);
    expect(res.body.data).toMatchObject({ status: 'processing', videoUrl: null });
    const { id } = res.body.data;

    const [event, ...more] = await pulled('vplat.video.available', id);
    expect(more).toHaveLength(0);
    expect(event).toMatchObject({
      platform: 'vplat',
      type: 'vplat.video.available',
      event: 'vplat.video.available',
      seat_id: videoSeatId,
      data: { video_id: id, track: 'video', source: 'remote', status: 'available', failure_reason: null },
    });
    // The event says when; the record, read now, has the URL to publish.
    const record = await call<VideoJson>(stack.baseUrl, 'GET', `/v1/videos/${id}`, { key: tenant.apiKey });
    expect(record.body.data).toMatchObject({ status: 'available', videoUrl: expect.any(String) });
    expect(event!.data.expires_at).toBe(record.body.data.expiresAt);
    expect((await pushedFor(id)).map((e) => [e.type, e.data.video_id])).toEqual([['vplat.video.available', id]]);
  });

  it('announces a remote upload that failed after the wait, with the reason', async () => {
    const res = await remoteUpload(`${source.url}/slow-missing?ms=${SLOW_MS}`, videoSeatId);
    expect(res.body).toMatchObject({ code: 0, data: { status: 'processing' } });
    const { id } = res.body.data;
    const [event] = await pulled('vplat.video.failed', id);
    expect(event).toMatchObject({
      type: 'vplat.video.failed',
      data: { video_id: id, status: 'failed', failure_reason: 'sourceUrl answered HTTP 404' },
    });
    expect((await pushedFor(id)).map((e) => e.type)).toEqual(['vplat.video.failed']);
  });

  it('announces a shop hand-off that outlasted the wait with the file id the shop issued', async () => {
    await env.sb.control('POST', '/_sandbox/faults', {
      kind: 'hang',
      count: 1,
      hangMs: SLOW_MS,
      platform: 'shop',
      pathPrefix: SHOP_UPLOAD,
    });
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: shopSeatId },
      { name: 'file', value: { fileName: 'product.mp4', bytes: mp4Bytes(64 * 1024) } },
    ]);
    expect(res.body).toMatchObject({ code: 0, data: { status: 'processing', fileId: null } });
    const { id } = res.body.data;
    const [event] = await pulled('vplat.video.available', id);
    const record = await call<VideoJson>(stack.baseUrl, 'GET', `/v1/videos/${id}`, { key: tenant.apiKey });
    expect(record.body.data).toMatchObject({ status: 'available', fileId: expect.any(String) });
    expect(event).toMatchObject({
      seat_id: shopSeatId,
      data: { video_id: id, track: 'shop', source: 'multipart', status: 'available', file_id: record.body.data.fileId },
    });
    expect((await pushedFor(id)).map((e) => e.type)).toEqual(['vplat.video.available']);
  });

  it('logs the outcome of uploads answered in their request too, so one rule serves every upload', async () => {
    const good = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: videoSeatId },
      { name: 'file', value: { fileName: 'clip.mp4', bytes: mp4Bytes(16 * 1024) } },
    ]);
    expect(good.body).toMatchObject({ code: 0, data: { status: 'available', videoUrl: expect.any(String) } });
    expect(await pulled('vplat.video.available', good.body.data.id)).toHaveLength(1);
    const refused = await uploadMultipart<VideoJson & { videoId?: string }>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: videoSeatId },
      { name: 'file', value: { fileName: 'notes.txt', bytes: Buffer.from('not a video at all, only words') } },
    ]);
    expect(refused.body.code).toBe(2001);
    const [event] = await pulled('vplat.video.failed', refused.body.data.videoId!);
    expect(event!.data).toMatchObject({
      status: 'failed',
      source: 'multipart',
      failure_reason: expect.stringContaining('video container'),
    });
  });
});
