/**
 * The publish handle: a publish answered before the platform gave its id (the submit outlasted the
 * request's wait) still carries a value to poll with, on both tracks. The status query of the
 * track accepts it at once (the deprecated route too), resolves it to the record, which shows the
 * platform's id once known, and goes on accepting the platform's id the spec promises.
 */
import { createHash } from 'node:crypto';
import { getShopProducts } from '../../core/upstream/shop/content';
import { call } from '../helpers/http';
import { eventually, startMediaServer, type MediaServer } from '../helpers/receivers';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { mp4Bytes, uploadMultipart } from '../helpers/videos';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

interface RecordJson {
  id: string;
  track: string;
  publishId: string;
  shareId: string;
  handle: string;
  videoId: string | null;
  status: string;
  postId: string | null;
  matchedRecord?: boolean;
}

/** Far shorter than the platform's hang below, which stays inside the upstream client's 2 s timeout. */
const SUBMIT_WAIT_MS = 200;
const HANG_MS = 1_200;
const VIDEO_SUBMIT = '/open_api/v1.3/business/video/publish/';
const SHOP_POSTS = '/affiliate_creator/202607/videos';

describe('the publish handle', () => {
  let env: WorkingStack;
  let stack: Stack;
  let media: MediaServer;
  let tenant: Tenant;
  let business: SandboxAccount;
  let creator: SandboxAccount;
  let shopSeatId: string;

  beforeAll(async () => {
    env = await startWorkingStack('publish-handle', {
      sandbox: { publishProcessingMs: 300, postIdDelayMs: 200 },
      stack: { publishing: { submitWaitMs: SUBMIT_WAIT_MS } },
    });
    stack = env.stack;
    media = await startMediaServer();
    tenant = await createTenant(stack);
    ({ account: business } = await bindSandboxSeat(env, tenant, 'business'));
    ({ account: creator, seatId: shopSeatId } = await bindSandboxSeat(env, tenant, 'shop'));
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await media?.close();
  });

  const api = <T = RecordJson>(method: string, path: string, json?: unknown, t: Tenant = tenant) =>
    call<T>(stack.baseUrl, method, path, { key: t.apiKey, json });
  const videoStatus = (publishId: string, t: Tenant = tenant) =>
    api('GET', `/v1/vplat/v1.3/business/publish/status?publishId=${encodeURIComponent(publishId)}`, undefined, t);
  const shopStatus = (videoId: string, t: Tenant = tenant) =>
    api('GET', `/v1/publish/tts/status?videoId=${encodeURIComponent(videoId)}`, undefined, t);
  const slowPlatform = (pathPrefix: string, platform?: 'shop') =>
    env.sb.control('POST', '/_sandbox/faults', { kind: 'hang', count: 1, hangMs: HANG_MS, pathPrefix, ...(platform ? { platform } : {}) });

  it('answers a video publish the platform is slow to take with a handle the status query accepts at once', async () => {
    await slowPlatform(VIDEO_SUBMIT);
    const res = await api('POST', '/v1/vplat/v1.3/business/video/publish', {
      account: business.openId,
      videoUrl: `${media.url}/video.mp4`,
      caption: 'slow to take',
    });
    expect(res.body.code).toBe(0);
    const accepted = res.body.data;
    // The platform has not answered: the answer carries the service's handle, never null.
    expect(accepted).toMatchObject({ status: 'submitted', handle: expect.stringMatching(/^vpsh_[0-9a-z]{26}$/) });
    expect(accepted.publishId).toBe(accepted.handle);
    expect(accepted.shareId).toBe(accepted.handle);

    const first = await videoStatus(accepted.publishId);
    expect(first.body).toMatchObject({ code: 0, data: { id: accepted.id, matchedRecord: true, handle: accepted.handle } });
    // The deprecated route passes the same value through.
    const legacy = await api('GET', `/v1/publish/vplat/status?shareId=${accepted.handle}`);
    expect(legacy.body).toMatchObject({ code: 0, data: { id: accepted.id, matchedRecord: true } });

    // Polling the handle follows the record to its end; it shows the platform's share id once known.
    const done = await eventually(
      () => videoStatus(accepted.handle),
      (r) => r.body.data.postId !== null,
      20_000,
    );
    expect(done.body.data).toMatchObject({ id: accepted.id, status: 'publish_complete', handle: accepted.handle });
    expect(done.body.data.shareId).toMatch(/^v_pub_url~v1\.\d+$/);
    expect(done.body.data.publishId).toBe(done.body.data.shareId);
    // The platform's id, as the spec promises, finds the same record.
    const official = await videoStatus(done.body.data.shareId);
    expect(official.body).toMatchObject({ code: 0, data: { id: accepted.id, matchedRecord: true, status: 'publish_complete' } });
  });

  it('answers a shop publish the shop is slow to take with a videoId the shop status query accepts at once', async () => {
    const upload = await uploadMultipart<{ fileId: string; id: string }>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: shopSeatId },
      {
        name: 'file',
        value: { fileName: 'clip.mp4', bytes: Buffer.concat([mp4Bytes(4096), createHash('sha256').update('handle').digest()]) },
      },
    ]);
    expect(upload.body.code).toBe(0);
    const products = await getShopProducts(env.sb.upstream.shop, creator.tokens.access_token, { page_size: 1 });
    await slowPlatform(SHOP_POSTS, 'shop');
    const res = await api('POST', '/v1/publish/tts', {
      fileId: upload.body.data.fileId,
      accountId: creator.openId,
      productId: products.products[0]!.id,
      title: 'Slow shop #deal',
      productTitle: 'Great deal',
    });
    expect(res.body.code).toBe(0);
    const accepted = res.body.data;
    expect(accepted).toMatchObject({ status: 'submitted', handle: expect.stringMatching(/^vpsh_/) });
    expect(accepted.videoId).toBe(accepted.handle);

    const first = await shopStatus(accepted.videoId!);
    expect(first.body).toMatchObject({ code: 0, data: { id: accepted.id, matchedRecord: true } });
    const done = await eventually(
      () => shopStatus(accepted.handle),
      (r) => r.body.data.status === 'publish_complete',
      20_000,
    );
    // The shop's video id once known, and it is accepted too.
    expect(done.body.data.shareId).toMatch(/^\d+$/);
    const official = await shopStatus(done.body.data.shareId);
    expect(official.body).toMatchObject({ code: 0, data: { id: accepted.id, matchedRecord: true } });
  });

  it("refuses a handle of another customer's publish, or of the other track's, with 1005", async () => {
    const res = await api('POST', '/v1/vplat/v1.3/business/video/publish', {
      account: business.openId,
      videoUrl: `${media.url}/video.mp4`,
      caption: 'handle kinds',
    });
    const handle = res.body.data.handle;
    const other = await createTenant(stack);
    expect((await videoStatus(handle, other)).body).toMatchObject({ code: 1005, message: expect.stringContaining('no publish of yours') });
    expect((await shopStatus(handle)).body).toMatchObject({ code: 1005, message: expect.stringContaining('video track') });
    // A well-formed handle of no record at all.
    expect((await videoStatus(`vpsh_${'0'.repeat(26)}`)).body).toMatchObject({ code: 1005 });
  });
});
