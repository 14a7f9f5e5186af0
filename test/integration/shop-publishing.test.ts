/**
 * Shop track publishing end to end: a product-linked post of a library file id, through core, a
 * publish workflow and a worker, to the emulator's shop API. The file id is consumed once: repeats
 * (one after another, or at the same time) answer with the first attempt and the shop receives one
 * post; a post the shop did not answer is never sent again; a post it refused outright frees the
 * file id for a corrected one.
 */
import { createHash } from 'node:crypto';
import { getShopProducts, postVideo } from '../../core/upstream/shop/content';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { spawnVps } from '../helpers/processes';
import { createTenant, startStackWorker, type Stack, type Tenant } from '../helpers/stack';
import { mp4Bytes, uploadMultipart } from '../helpers/videos';
import { bindSandboxSeat, childWorkerEnv, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

interface RecordJson {
  id: string;
  track: string;
  shareId: string | null;
  status: string;
  reason: string | null;
  failReason: string | null;
  reasonCategory?: string | null;
  unconfirmed: boolean;
  videoId: string | null;
  libraryVideoId?: string | null;
  earlierAttempt?: boolean;
  matchedRecord?: boolean;
}

const POSTS = '/affiliate_creator/202607/videos';

describe('shop track publishing', () => {
  let env: WorkingStack;
  let stack: Stack;
  let tenant: Tenant;
  let creator: SandboxAccount;
  let seatId: string;
  let product: { id: string; title: string };

  beforeAll(async () => {
    env = await startWorkingStack('shop-publish', { sandbox: { publishProcessingMs: 300 } });
    stack = env.stack;
    tenant = await createTenant(stack, { seatQuota: 10 });
    ({ account: creator, seatId } = await bindSandboxSeat(env, tenant, 'shop'));
    const products = await getShopProducts(env.sb.upstream.shop, creator.tokens.access_token, { page_size: 10 });
    product = products.products[0]!;
  }, 120_000);
  afterAll(() => env?.close());

  /** A new shop track upload of the tenant's creator seat: its file id. */
  async function fileId(seat = seatId, t = tenant): Promise<{ fileId: string; videoId: string }> {
    const res = await uploadMultipart<{ id: string; fileId: string }>(stack.baseUrl, t.apiKey, [
      { name: 'seatId', value: seat },
      // Distinct bytes, so the shop's records tell the uploads apart.
      {
        name: 'file',
        value: {
          fileName: 'clip.mp4',
          bytes: Buffer.concat([mp4Bytes(4096), Buffer.from(createHash('sha256').update(String(Math.random())).digest())]),
        },
      },
    ]);
    expect(res.body.code).toBe(0);
    return { fileId: res.body.data.fileId, videoId: res.body.data.id };
  }
  const publish = (body: object, t = tenant) =>
    call<RecordJson>(stack.baseUrl, 'POST', '/v1/publish/tts', {
      key: t.apiKey,
      json: { accountId: creator.openId, productId: product.id, title: 'Look at this #deal', productTitle: 'Great deal', ...body },
    });
  const recordOf = (id: string, t = tenant) =>
    call<{ items: RecordJson[] }>(stack.baseUrl, 'GET', '/v1/publish/records?limit=100', { key: t.apiKey }).then((r) =>
      r.body.data.items.find((i) => i.id === id)!,
    );
  const until = (id: string, done: (r: RecordJson) => boolean) =>
    eventually(
      () => recordOf(id),
      (r) => r !== undefined && done(r),
      15_000,
    );
  const acceptedPosts = async (openId = creator.openId) =>
    (
      await env.sb.control<{ calls: Array<{ code: number }> }>('GET', `/_sandbox/calls?path=${encodeURIComponent(POSTS)}&openId=${openId}`)
    ).calls.filter((c) => c.code === 0).length;

  it('posts a library file id with its product, answers with the official video id to poll with, and follows it to publish_complete', async () => {
    const before = await acceptedPosts();
    const file = await fileId();
    const res = await publish({ fileId: file.fileId });
    expect(res.status).toBe(200);
    // The spec's polling rule: the videoId of the publish response is the official video id.
    expect(res.body.data).toMatchObject({
      track: 'shop',
      libraryVideoId: file.videoId,
      earlierAttempt: false,
      unconfirmed: false,
      failReason: null,
    });
    expect(res.body.data.shareId).toMatch(/^\d+$/);
    expect(res.body.data.videoId).toBe(res.body.data.shareId);
    const polled = await call<RecordJson>(stack.baseUrl, 'GET', `/v1/publish/tts/status?videoId=${res.body.data.videoId}`, {
      key: tenant.apiKey,
    });
    expect(polled.body).toMatchObject({ code: 0, data: { id: res.body.data.id, matchedRecord: true } });
    const done = await until(res.body.data.id, (r) => r.status === 'publish_complete');
    // The record keeps the spec's meaning: videoId is the library id, shareId the official one.
    expect(done).toMatchObject({ videoId: file.videoId, shareId: res.body.data.shareId });
    const status = await call<RecordJson>(stack.baseUrl, 'GET', `/v1/publish/tts/status?videoId=${done.shareId}`, { key: tenant.apiKey });
    expect(status.body).toMatchObject({ code: 0, data: { id: done.id, status: 'publish_complete', matchedRecord: true } });
    const libraryId = await call(stack.baseUrl, 'GET', `/v1/publish/tts/status?videoId=${file.videoId}`, { key: tenant.apiKey });
    expect(libraryId.body).toMatchObject({ code: 1005 });
    expect(await acceptedPosts()).toBe(before + 1);
    const events = await call<{ items: Array<{ data: { record_id: string; track: string; status: string } }> }>(
      stack.baseUrl,
      'GET',
      '/v1/events?types=vplat.publish.status_changed&limit=100',
      { key: tenant.apiKey },
    );
    expect(
      events.body.data.items
        .filter((e) => e.data.record_id === done.id)
        .map((e) => [e.data.track, e.data.status])
        .pop(),
    ).toEqual(['shop', 'publish_complete']);
  });

  it("takes the anchor text from the product's own title when the post names none", async () => {
    const file = await fileId();
    const res = await publish({ fileId: file.fileId, productTitle: undefined });
    expect(res.body.code).toBe(0);
    expect((await until(res.body.data.id, (r) => r.status === 'publish_complete')).status).toBe('publish_complete');
    const unknownProduct = await publish({ fileId: (await fileId()).fileId, productTitle: undefined, productId: '999999999' });
    expect(unknownProduct.body).toMatchObject({ code: 1005, message: expect.stringContaining('productId') });
  });

  it('answers a repeated post of one file id with the first attempt, and the shop receives one post', async () => {
    const file = await fileId();
    const before = await acceptedPosts();
    const first = await publish({ fileId: file.fileId });
    const again = await publish({ fileId: file.fileId, title: 'a retry with other text' });
    expect(again.body.data).toMatchObject({ id: first.body.data.id, earlierAttempt: true });
    await until(first.body.data.id, (r) => r.status === 'publish_complete');
    expect(await acceptedPosts()).toBe(before + 1);
  });

  it('sends one post for concurrent posts of one file id', async () => {
    const file = await fileId();
    const before = await acceptedPosts();
    const answers = await Promise.all(Array.from({ length: 5 }, () => publish({ fileId: file.fileId })));
    expect(answers.map((a) => a.body.code)).toEqual([0, 0, 0, 0, 0]);
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect(answers.filter((a) => a.body.data.earlierAttempt === false)).toHaveLength(1);
    await until(answers[0]!.body.data.id, (r) => r.status === 'publish_complete');
    expect(await acceptedPosts()).toBe(before + 1);
  });

  it('never resends a post the shop did not answer: the record ends unconfirmed within the six statuses, with an event, and the file id stays used', async () => {
    const file = await fileId();
    const before = await acceptedPosts();
    // Longer than the upstream client's 2 s timeout; the emulator then accepts the post all the same.
    await env.sb.control('POST', '/_sandbox/faults', { kind: 'hang', count: 1, hangMs: 3_000, platform: 'shop', pathPrefix: POSTS });
    const res = await publish({ fileId: file.fileId });
    const done = await until(res.body.data.id, (r) => r.unconfirmed);
    expect(done).toMatchObject({ status: 'submitted', reasonCategory: 'unconfirmed', failReason: null });
    expect(done.reason).toContain('not sent again');
    const events = await call<{ items: Array<{ type: string; data: { record_id: string; status: string; unconfirmed: boolean } }> }>(
      stack.baseUrl,
      'GET',
      '/v1/events?types=vplat.publish.unconfirmed&limit=100',
      { key: tenant.apiKey },
    );
    expect(events.body.data.items.filter((e) => e.data.record_id === done.id)).toEqual([
      expect.objectContaining({
        type: 'vplat.publish.unconfirmed',
        data: expect.objectContaining({ status: 'submitted', unconfirmed: true }),
      }),
    ]);
    await eventually(acceptedPosts, (n) => n === before + 1, 10_000);
    const retry = await publish({ fileId: file.fileId });
    expect(retry.body).toMatchObject({ code: 2001, message: expect.stringContaining('upload the video again') });
    expect(await acceptedPosts()).toBe(before + 1);
  });

  it('sends once when the worker process is killed between the post and the record update', async () => {
    const file = await fileId();
    const before = await acceptedPosts();
    // The post is made by a worker in a process of its own, which is killed while the shop takes
    // 3 s to answer: the shop accepts the post, and no record update ever happens.
    await env.worker.stop();
    const child = spawnVps(['serve', '--role', 'worker'], childWorkerEnv(env, {}));
    try {
      await child.waitFor(/worker polling/, 60_000);
      await env.sb.control('POST', '/_sandbox/faults', { kind: 'hang', count: 1, hangMs: 3_000, platform: 'shop', pathPrefix: POSTS });
      const res = call<RecordJson>(stack.baseUrl, 'POST', '/v1/publish/tts', {
        key: tenant.apiKey,
        json: { accountId: creator.openId, productId: product.id, title: 'worker killed', productTitle: 'Great deal', fileId: file.fileId },
      });
      // The fault is taken when the post arrives: the worker has sent it and waits for the answer.
      await eventually(
        async () => (await env.sb.control<{ faults: unknown[] }>('GET', '/_sandbox/faults')).faults.length,
        (n) => n === 0,
        20_000,
      );
      await child.stop('SIGKILL');
      const accepted = await res;
      await eventually(acceptedPosts, (n) => n === before + 1, 10_000);
      env.worker = await startStackWorker(stack, env.taskQueue, env.sb.upstream);
      // The submit is retried once its time is up; it finds the claim and never posts again.
      const done = await eventually(
        () => recordOf(accepted.body.data.id),
        (r) => r?.unconfirmed === true,
        30_000,
        200,
      );
      // The shop's video id never came: the record keeps the service's handle to poll with.
      expect(done).toMatchObject({ shareId: expect.stringMatching(/^vpsh_/), status: 'submitted' });
      expect(await acceptedPosts()).toBe(before + 1);
    } finally {
      await child.stop('SIGKILL');
    }
  }, 120_000);

  it('frees the file id when the shop refused the post outright, for a corrected post', async () => {
    const file = await fileId();
    const refused = await publish({ fileId: file.fileId, productId: '999999999' });
    const failed = await until(refused.body.data.id, (r) => r.status === 'publish_failed');
    expect(failed.reason).toBeTruthy();
    // The spec's failReason carries the same text for code written against it.
    expect(failed.failReason).toBe(failed.reason);
    const corrected = await publish({ fileId: file.fileId });
    expect(corrected.body.data).toMatchObject({ earlierAttempt: false });
    expect(corrected.body.data.id).not.toBe(refused.body.data.id);
    expect((await until(corrected.body.data.id, (r) => r.status === 'publish_complete')).status).toBe('publish_complete');
  });

  it('tells a post whose file id was consumed by a failed post to upload again', async () => {
    const file = await fileId();
    await env.sb.control('POST', `/_sandbox/accounts/${creator.openId}/next-publish`, { outcome: 'failed', reason: 'x' });
    const res = await publish({ fileId: file.fileId });
    await until(res.body.data.id, (r) => r.status === 'publish_failed');
    const again = await publish({ fileId: file.fileId });
    expect(again.status).toBe(422);
    expect(again.body).toMatchObject({ code: 2001, message: expect.stringMatching(/^fileId: .* already used by publish record/) });
  });

  describe('check order and id kinds', () => {
    it('checks the account (1007) before the file id (1005), then the video (2005)', async () => {
      expect((await publish({ accountId: 'not-a-creator-of-mine', fileId: 'unknown' })).body.code).toBe(1007);
      const unknown = await publish({ fileId: 'unknown-file-id' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe(1005);
      const { seatId: otherSeat } = await bindSandboxSeat(env, tenant, 'shop');
      const otherFile = await fileId(otherSeat);
      expect((await publish({ fileId: otherFile.fileId })).body).toMatchObject({
        code: 1005,
        message: expect.stringContaining('another seat'),
      });
      const deleted = await fileId();
      await call(stack.baseUrl, 'DELETE', `/v1/videos/${deleted.videoId}`, { key: tenant.apiKey });
      const gone = await publish({ fileId: deleted.fileId });
      expect(gone.status).toBe(422);
      expect(gone.body.code).toBe(2005);
    });

    it('refuses wrong id kinds on the status query with 1005, and looks up an unknown video id with the account', async () => {
      const file = await fileId();
      const res = await publish({ fileId: file.fileId });
      for (const wrong of [file.videoId, res.body.data.id]) {
        const st = await call(stack.baseUrl, 'GET', `/v1/publish/tts/status?videoId=${wrong}`, { key: tenant.apiKey });
        expect(st.status).toBe(404);
        expect(st.body.code).toBe(1005);
      }
      const direct = await postVideo(env.sb.upstream.shop, creator.tokens.access_token, {
        video_info: { file_id: (await fileId()).fileId, title: 'posted elsewhere' },
        product_link_info: { product_id: product.id, title: 'Elsewhere' },
      });
      const noAccount = await call(stack.baseUrl, 'GET', `/v1/publish/tts/status?videoId=${direct.video.id}`, { key: tenant.apiKey });
      expect(noAccount.body).toMatchObject({ code: 2001, message: expect.stringContaining('accountId') });
      const lookup = await call(stack.baseUrl, 'GET', `/v1/publish/tts/status?videoId=${direct.video.id}&accountId=${creator.openId}`, {
        key: tenant.apiKey,
      });
      expect(lookup.body).toMatchObject({
        code: 0,
        data: { publishId: direct.video.id, matchedRecord: false, status: expect.stringMatching(/^publish_/) },
      });
    });
  });

  describe('validation', () => {
    it.each([
      ['a missing title', { title: undefined }, 'title'],
      ['anchor text with punctuation', { productTitle: 'Great deal!' }, 'productTitle'],
      ['anchor text of 31 characters', { productTitle: 'a'.repeat(31) }, 'productTitle'],
      ['a negative cover frame', { coverTimestampMs: -1 }, 'coverTimestampMs'],
      ['a boolean as a string', { isAiGenerated: 'yes' }, 'isAiGenerated'],
      ['an unknown field', { caption: 'x' }, 'caption'],
    ])('refuses %s with 2001 naming the field', async (_name, change, field) => {
      const res = await publish({ fileId: 'any', ...change });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 2001, message: expect.stringContaining(field) });
    });
  });
});
