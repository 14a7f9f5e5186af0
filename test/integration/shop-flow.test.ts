/**
 * The shop track in the spec's order of flow, through the service alone: products the creator can
 * link, the video upload (a file id), a cover photo, music, a pre-check, the post that uses all of
 * them, and its status to publish_complete; the official request the shop received is checked
 * field by field against the spec's mapping table.
 */
import { call } from '../helpers/http';
import { png, postPhoto } from '../helpers/images';
import { eventually } from '../helpers/receivers';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { mp4Bytes, uploadMultipart } from '../helpers/videos';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';
import { findPublishRecord } from '../../core/db/repositories/publish-records';

describe('shop track, in the order of flow', () => {
  let env: WorkingStack;
  let stack: Stack;
  let tenant: Tenant;
  let creator: SandboxAccount;
  let seatId: string;

  beforeAll(async () => {
    env = await startWorkingStack('shop-flow', { sandbox: { publishProcessingMs: 300 } });
    stack = env.stack;
    tenant = await createTenant(stack);
    ({ account: creator, seatId } = await bindSandboxSeat(env, tenant, 'shop'));
  }, 120_000);
  afterAll(() => env?.close());

  const api = <T>(method: string, path: string, json?: unknown) => call<T>(stack.baseUrl, method, path, { key: tenant.apiKey, json });

  it('queries products, uploads, adds a cover and music, pre-checks, posts and follows the post to publish_complete', async () => {
    const products = await api<{ items: Array<{ id: string; title: string; addedStatus: string }> }>('POST', '/v1/products/query', {
      accountId: creator.openId,
      pageSize: 10,
    });
    expect(products.body.code).toBe(0);
    const product = products.body.data.items.find((p) => p.addedStatus !== 'REJECTED')!;

    const upload = await uploadMultipart<{ id: string; fileId: string; status: string }>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: seatId },
      { name: 'file', value: { fileName: 'product.mp4', bytes: mp4Bytes(8192) } },
    ]);
    expect(upload.body.data).toMatchObject({ status: 'available', fileId: expect.any(String) });

    const cover = await postPhoto(stack.baseUrl, tenant.apiKey, [
      ['accountId', creator.openId],
      ['file', { fileName: 'cover.png', bytes: png(90, 160) }],
    ]);
    expect(cover.body.code).toBe(0);

    const music = await api<{ items: Array<{ id: string }> }>('POST', '/v1/music/search', {
      accountId: creator.openId,
      keyword: 'a',
      pageSize: 5,
    });
    const musicId = music.body.data.items[0]!.id;

    const precheck = await api<{ taskId: string; status: string }>('POST', '/v1/publish/tts/precheck', {
      accountId: creator.openId,
      fileId: upload.body.data.fileId,
      productId: product.id,
      productTitle: 'Summer pick',
    });
    expect(precheck.body.code).toBe(0);
    const checked = await eventually(
      () => api<{ status: string; violation: string | null }>('GET', `/v1/publish/tts/precheck/${precheck.body.data.taskId}`),
      (r) => ['passed', 'failed', 'service_error'].includes(r.body.data.status),
      15_000,
    );
    expect(checked.body.data).toMatchObject({ status: 'passed', violation: 'passed' });

    const post = await api<{ id: string; shareId: string; status: string }>('POST', '/v1/publish/tts', {
      fileId: upload.body.data.fileId,
      accountId: creator.openId,
      productId: product.id,
      title: 'Our summer pick #deal',
      isAiGenerated: false,
      coverUri: cover.body.data.photoUri,
      coverTimestampMs: 1500,
      musicId,
      productTitle: 'Summer pick',
    });
    expect(post.body.code).toBe(0);
    // The spec's mapping table, as the shop receives it (accountId selects the token; it is not sent).
    const stored = await findPublishRecord(stack.database.db, post.body.data.id);
    expect(stored!.request).toEqual({
      video_info: {
        file_id: upload.body.data.fileId,
        title: 'Our summer pick #deal',
        is_ai_generated: false,
        cover_uri: cover.body.data.photoUri,
        cover_timestamp_ms: 1500,
        music_id: musicId,
      },
      product_link_info: { product_id: product.id, title: 'Summer pick' },
    });

    const done = await eventually(
      () => api<{ status: string; matchedRecord: boolean }>('GET', `/v1/publish/tts/status?videoId=${post.body.data.shareId}`),
      (r) => r.body.data.status === 'publish_complete',
      15_000,
    );
    expect(done.body.data).toMatchObject({ id: post.body.data.id, matchedRecord: true });
  });
});
