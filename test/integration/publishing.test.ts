/**
 * Video track publishing end to end: the v1.3 and deprecated routes, through core, a publish
 * workflow on the Temporal dev server and a real worker, to the emulator, which downloads the
 * media and processes the post. Status events, check order, wrong id kinds, and the submit's
 * once-only guarantee under worker loss, platform timeouts and refusals.
 */
import { listVideos } from '../../core/upstream/vplat/insights';
import { publishVideo } from '../../core/upstream/vplat/publishing';
import { call } from '../helpers/http';
import { eventually, startMediaServer, type MediaServer } from '../helpers/receivers';
import type { TestSandbox } from '../helpers/sandbox';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

type Record = {
  id: string;
  publishId: string;
  shareId: string;
  handle: string;
  status: string;
  postId: string | null;
  reason: string | null;
  failReason: string | null;
  unconfirmed: boolean;
  reasonCategory: string | null;
  channel: string;
  draft: boolean;
  workflowId: string;
  matchedRecord?: boolean;
};

describe('video track publishing', () => {
  let env: WorkingStack;
  let stack: Stack;
  let sb: TestSandbox;
  let media: MediaServer;
  let tenant: Tenant;
  let account: SandboxAccount;

  beforeAll(async () => {
    // Processing and the post id's delay long enough that polls see each stage.
    env = await startWorkingStack('publish', { sandbox: { publishProcessingMs: 2_000, postIdDelayMs: 800 } });
    ({ stack, sb } = env);
    media = await startMediaServer();
    ({ tenant, account } = await boundTenant());
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await media?.close();
  });

  /** A customer whose video seat holds a fresh emulator account with real tokens. */
  async function boundTenant(opts: { isPrivate?: boolean } = {}) {
    const t = await createTenant(stack);
    return { tenant: t, ...(await bindSandboxSeat(env, t, 'business', opts)) };
  }

  const api = <T = Record>(method: string, path: string, json?: unknown, t: Tenant = tenant) =>
    call<T>(stack.baseUrl, method, path, { key: t.apiKey, json });
  const publish = (body: object, t: Tenant = tenant) => api('POST', '/v1/vplat/v1.3/business/video/publish', body, t);
  const status = (publishId: string, extra = '', t: Tenant = tenant) =>
    api('GET', `/v1/vplat/v1.3/business/publish/status?publishId=${encodeURIComponent(publishId)}${extra}`, undefined, t);
  const record = async (id: string) => {
    const page = await api<{ items: Record[] }>('GET', '/v1/publish/records?limit=100');
    return page.body.data.items.find((r) => r.id === id)!;
  };
  const until = (id: string, done: (r: Record) => boolean, timeoutMs = 15_000) =>
    eventually(
      () => record(id),
      (r) => r !== undefined && done(r),
      timeoutMs,
    );
  /** The account's posts with a caption (the emulator seeds every account with a few of its own). */
  const postsOf = async (acct: typeof account, caption: string) =>
    (
      await listVideos(sb.upstream.vplat, acct.tokens.access_token, {
        business_id: acct.openId,
        fields: ['item_id', 'caption'],
        max_count: 20,
      })
    ).videos.filter((v) => v.caption === caption);
  const baseBody = (caption: string) => ({
    account: account.openId,
    videoUrl: `${media.url}/video.mp4`,
    caption,
    isBrandOrganic: false,
    isBrandedContent: false,
  });

  it('publishes to publish_complete with the post id, and logs each status change in order', async () => {
    const res = await publish(baseBody('first post #launch'));
    expect(res.status).toBe(200);
    expect(res.body.code).toBe(0);
    const accepted = res.body.data;
    expect(accepted).toMatchObject({
      status: expect.stringMatching(/^(submitted|publish_processing)$/),
      channel: 'v1.3',
      draft: false,
      workflowId: `publish-${accepted.id}`,
    });
    // The answer carries the handle to poll with, as the spec's response promises.
    expect(accepted.shareId).toMatch(/^v_pub_url~v1\.\d+$/);
    expect(accepted.publishId).toBe(accepted.shareId);

    const done = await until(accepted.id, (r) => r.postId !== null);
    expect(done).toMatchObject({ status: 'publish_complete', reason: null, shareId: accepted.shareId });
    expect((await postsOf(account, 'first post #launch')).map((p) => p.item_id)).toEqual([done.postId]);

    const events = await eventually(
      () =>
        api<{ items: Array<{ data: { record_id: string; status: string; previous_status: string; post_id: string | null } }> }>(
          'GET',
          '/v1/events?types=vplat.publish.status_changed&limit=100',
        ),
      (r) => r.body.data.items.filter((e) => e.data.record_id === accepted.id).some((e) => e.data.post_id !== null),
    );
    const mine = events.body.data.items
      .filter((e) => e.data.record_id === accepted.id)
      .map((e) => [e.data.previous_status, e.data.status, e.data.post_id !== null]);
    // Every change the polls saw, in order, each naming the status before it. Which changes they
    // see depends on when they run against the platform's clock: on a busy machine a poll can
    // come after the processing or the post id, and that change is then part of the next one.
    expect([
      [
        ['submitted', 'publish_processing', false],
        ['publish_processing', 'publish_complete', false],
        ['publish_complete', 'publish_complete', true],
      ],
      [
        ['submitted', 'publish_processing', false],
        ['publish_processing', 'publish_complete', true],
      ],
      [
        ['submitted', 'publish_complete', false],
        ['publish_complete', 'publish_complete', true],
      ],
      [['submitted', 'publish_complete', true]],
    ]).toContainEqual(mine);
  });

  it('accepts the username as the account and answers the status query with the refreshed record', async () => {
    const res = await publish({ ...baseBody('by username'), account: account.username });
    expect(res.body.code).toBe(0);
    const done = await until(res.body.data.id, (r) => r.postId !== null);
    const st = await status(done.shareId!);
    expect(st.body).toMatchObject({ code: 0, data: { id: done.id, status: 'publish_complete', postId: done.postId, matchedRecord: true } });
    // The deprecated status route answers the same.
    const legacy = await api('GET', `/v1/publish/vplat/status?shareId=${encodeURIComponent(done.shareId!)}`);
    expect(legacy.body).toEqual(st.body);
  });

  it("ends in publish_failed with the platform's reason and a category", async () => {
    await sb.control('POST', `/_sandbox/accounts/${account.openId}/next-publish`, { outcome: 'failed', reason: 'spam_risk_text' });
    const res = await publish(baseBody('will fail'));
    const done = await until(res.body.data.id, (r) => r.status === 'publish_failed');
    // failReason is the spec's field for the platform's reason; reason and its category stay.
    expect(done).toMatchObject({
      failReason: 'spam_risk_text',
      reason: 'spam_risk_text',
      reasonCategory: 'content_rejected',
      postId: null,
    });
    const st = await status(done.shareId!);
    expect(st.body.data).toMatchObject({ status: 'publish_failed', failReason: 'spam_risk_text', unconfirmed: false });
    const events = await api<{ items: Array<{ data: { [k: string]: unknown } }> }>(
      'GET',
      '/v1/events?types=vplat.publish.status_changed&limit=100',
    );
    const failed = events.body.data.items.find((e) => e.data.record_id === done.id && e.data.status === 'publish_failed');
    expect(failed?.data).toMatchObject({ fail_reason: 'spam_risk_text', unconfirmed: false });
  });

  it('sends both brand disclosures as false when the caller leaves them out, which the platform requires', async () => {
    const { isBrandOrganic: _organic, isBrandedContent: _branded, ...body } = baseBody('no disclosures given');
    const res = await publish(body);
    expect(res.body.code).toBe(0);
    const done = await until(res.body.data.id, (r) => r.postId !== null);
    expect(done.status).toBe('publish_complete');
  });

  it('publishes a draft to the inbox', async () => {
    const res = await publish({ ...baseBody('a draft'), draft: true });
    expect(res.body.data.draft).toBe(true);
    const done = await until(res.body.data.id, (r) => r.status === 'publish_draft_inbox');
    expect(done.postId).toBeNull();
  });

  it('behaves the same on the deprecated route, with accountId', async () => {
    const { account: _omit, ...rest } = baseBody('through the old route');
    const res = await api('POST', '/v1/publish/vplat', { ...rest, accountId: account.openId });
    expect(res.body.code).toBe(0);
    expect(res.body.data.channel).toBe('legacy');
    const done = await until(res.body.data.id, (r) => r.postId !== null);
    expect(done.status).toBe('publish_complete');
    // The old route names its own field; the new one's is refused there, and the reverse.
    expect((await api('POST', '/v1/publish/vplat', baseBody('x'))).body).toMatchObject({
      code: 2001,
      message: expect.stringContaining('account'),
    });
    expect((await publish({ ...rest, accountId: account.openId })).body).toMatchObject({
      code: 2001,
      message: expect.stringContaining('account'),
    });
  });

  it('publishes photos, and checks their limits', async () => {
    const photo = `${media.url}/photo.jpg`;
    const res = await api('POST', '/v1/vplat/v1.3/business/photo/publish', {
      account: account.openId,
      photoUrls: [photo, photo],
      privacyLevel: 'SELF_ONLY',
      title: 'two photos',
      isBrandOrganic: false,
      isBrandedContent: false,
    });
    expect(res.body.code).toBe(0);
    expect(res.body.data).toMatchObject({ kind: 'photo' });
    await until(res.body.data.id, (r) => r.status === 'publish_complete');

    const tooMany = await api('POST', '/v1/vplat/v1.3/business/photo/publish', {
      account: account.openId,
      photoUrls: Array(36).fill(photo),
      privacyLevel: 'SELF_ONLY',
    });
    expect(tooMany.body).toMatchObject({ code: 2001, message: expect.stringContaining('photoUrls') });
    const none = await api('POST', '/v1/vplat/v1.3/business/photo/publish', {
      account: account.openId,
      photoUrls: [],
      privacyLevel: 'SELF_ONLY',
    });
    expect(none.body).toMatchObject({ code: 2001, message: expect.stringContaining('photoUrls') });
    // A private account may not post publicly: refused before anything is sent, naming what it allows.
    const { tenant: privTenant, account: priv } = await boundTenant({ isPrivate: true });
    const publicPost = await api(
      'POST',
      '/v1/vplat/v1.3/business/photo/publish',
      { account: priv.openId, photoUrls: [photo], privacyLevel: 'PUBLIC_TO_EVERYONE' },
      privTenant,
    );
    expect(publicPost.body).toMatchObject({ code: 2001, message: expect.stringContaining('SELF_ONLY') });
    const noPrivacy = await api('POST', '/v1/vplat/v1.3/business/photo/publish', { account: account.openId, photoUrls: [photo] });
    expect(noPrivacy.body).toMatchObject({ code: 2001, message: expect.stringContaining('privacyLevel') });
  });

  it('takes a photo caption up to the official photo limit of 4,000 UTF-16 code units, beyond the video caption limit, and a title up to 90', async () => {
    const photo = `${media.url}/photo.jpg`;
    const body = (extra: object) => ({ account: account.openId, photoUrls: [photo], privacyLevel: 'SELF_ONLY', ...extra });
    // 2000 emoji outside the BMP are 4000 UTF-16 code units: the photo limit exactly, far past the video one.
    const long = await api('POST', '/v1/vplat/v1.3/business/photo/publish', body({ caption: '\u{1F600}'.repeat(2000) }));
    expect(long.body.code).toBe(0);
    expect((await until(long.body.data.id, (r) => r.status !== 'submitted' && r.status !== 'publish_processing')).status).toBe(
      'publish_complete',
    );
    const tooLong = await api('POST', '/v1/vplat/v1.3/business/photo/publish', body({ caption: `${'\u{1F600}'.repeat(2000)}a` }));
    expect(tooLong.body).toMatchObject({ code: 2001, message: 'caption: must be at most 4000 UTF-16 code units (got 4001)' });
    const title = await api('POST', '/v1/vplat/v1.3/business/photo/publish', body({ title: '\u{1F600}'.repeat(45) + 'a' }));
    expect(title.body).toMatchObject({ code: 2001, message: 'title: must be at most 90 UTF-16 code units (got 91)' });
  });

  describe('validation', () => {
    // 1100 emoji outside the BMP are 2200 UTF-16 code units: the limit exactly.
    const emoji = '\u{1F600}'.repeat(1100);
    const cases: Array<[string, object, string]> = [
      ['a caption of 2201 UTF-16 code units', { caption: `${emoji}a` }, 'caption'],
      ['31 mentions', { caption: Array.from({ length: 31 }, (_, i) => `@user${i}`).join(' ') }, 'caption'],
      ['a negative thumbnailOffset', { thumbnailOffset: -1 }, 'thumbnailOffset'],
      ['a fractional thumbnailOffset', { thumbnailOffset: 1.5 }, 'thumbnailOffset'],
      ['a boolean sent as a string', { disableComment: 'true' }, 'disableComment'],
      ['both videoUrl and videoId', { videoId: 'vid_x' }, 'videoUrl'],
      ['an unknown field', { cover: 'x' }, 'cover'],
    ];
    it.each(cases)('refuses %s with 2001 naming the field', async (_name, change, field) => {
      const res = await publish({ ...baseBody('v'), ...change });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe(2001);
      expect(res.body.message).toContain(field);
    });

    it('accepts a caption of exactly 2200 UTF-16 code units and 30 mentions', async () => {
      const atLimit = await publish({ ...baseBody(emoji), draft: true });
      expect(atLimit.body.code).toBe(0);
      const mentions = await publish({ ...baseBody(Array.from({ length: 30 }, (_, i) => `@user${i}`).join(' ')), draft: true });
      expect(mentions.body.code).toBe(0);
    });

    it('refuses a missing account', async () => {
      const { account: _omit, ...rest } = baseBody('x');
      expect((await publish(rest)).body).toMatchObject({ code: 2001, message: expect.stringContaining('account') });
    });
  });

  describe('check order and id kinds', () => {
    it('checks the account binding (1007) before the video (1005)', async () => {
      const unbound = await publish({ account: 'nobody-here', videoId: 'vid_unknown', caption: 'x' });
      expect(unbound.status).toBe(409);
      expect(unbound.body.code).toBe(1007);
      const unknownVideo = await publish({ account: account.openId, videoId: 'vid_unknown', caption: 'x' });
      expect(unknownVideo.status).toBe(404);
      expect(unknownVideo.body.code).toBe(1005);
    });

    it("refuses another customer's account with 1007", async () => {
      const other = await createTenant(stack);
      expect((await publish(baseBody('x'), other)).body.code).toBe(1007);
    });

    it('answers 1005 for a record id or a post id where a share id belongs', async () => {
      const res = await publish(baseBody('ids'));
      const done = await until(res.body.data.id, (r) => r.postId !== null);
      for (const wrong of [done.id, done.postId!]) {
        const st = await status(wrong, `&account=${account.openId}`);
        expect(st.status).toBe(404);
        expect(st.body.code).toBe(1005);
      }
    });

    it('looks up a share id it has no record of, with the account required', async () => {
      const direct = await publishVideo(sb.upstream.vplat, account.tokens.access_token, {
        business_id: account.openId,
        video_url: `${media.url}/video.mp4`,
        post_info: { caption: 'made elsewhere', is_brand_organic: false, is_branded_content: false },
      });
      const noAccount = await status(direct.share_id);
      expect(noAccount.body).toMatchObject({ code: 2001, message: expect.stringContaining('account') });
      const lookup = await status(direct.share_id, `&account=${account.openId}`);
      expect(lookup.body).toMatchObject({
        code: 0,
        data: { publishId: direct.share_id, matchedRecord: false, status: expect.stringMatching(/^publish_/) },
      });
    });
  });

  it('answers a repeated publish with the same Idempotency-Key with the first record, and posts once', async () => {
    const { tenant: t, account: a } = await boundTenant();
    const send = () =>
      call<Record>(stack.baseUrl, 'POST', '/v1/vplat/v1.3/business/video/publish', {
        key: t.apiKey,
        json: { ...baseBody('said twice'), account: a.openId },
        headers: { 'idempotency-key': 'publish-said-twice' },
      });
    const first = await send();
    const again = await send();
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const records = await eventually(
      () => api<{ items: Record[] }>('GET', '/v1/publish/records', undefined, t),
      (r) => r.body.data.items[0]?.postId != null,
      15_000,
    );
    expect(records.body.data.items).toHaveLength(1);
    expect(await postsOf(a, 'said twice')).toHaveLength(1);
  });

  it('pages the records, newest first, as a snapshot', async () => {
    const first = await api<{ items: Record[]; nextCursor: string | null }>('GET', '/v1/publish/records?limit=2');
    expect(first.body.data.items).toHaveLength(2);
    expect(first.body.data.nextCursor).toBe(first.body.data.items[1]!.id);
    const second = await api<{ items: Record[]; nextCursor: string | null }>(
      'GET',
      `/v1/publish/records?limit=2&cursor=${first.body.data.nextCursor}`,
    );
    expect(second.body.data.items[0]!.id < first.body.data.items[1]!.id).toBe(true);
    expect((await api('GET', '/v1/publish/records?limit=0')).body.code).toBe(2001);
    expect((await api('GET', '/v1/publish/records?cursor=bogus')).body.code).toBe(2001);
  });

  it('passes hashtag suggestions and location search through, flattened', async () => {
    const tags = await api<{ suggestions: Array<{ name: string; viewCount: number }> }>(
      'GET',
      `/v1/vplat/v1.3/business/hashtag/suggestion?account=${account.openId}&keyword=coffee`,
    );
    expect(tags.body.code).toBe(0);
    expect(tags.body.data.suggestions[0]).toEqual({ name: 'coffee', viewCount: expect.any(Number) });
    const places = await api<{ locations: Array<{ locationId: string; locationName: string }> }>(
      'GET',
      `/v1/vplat/v1.3/business/publish/location?account=${account.openId}&searchQuery=tower`,
    );
    expect(places.body.code).toBe(0);
    expect(places.body.data.locations.length).toBeGreaterThan(0);
    expect(places.body.data.locations[0]).toMatchObject({ locationId: expect.any(String), locationName: expect.any(String) });
  });

  describe('the submit happens once', () => {
    it('retries a submit the platform refused with a transient error, and posts once', async () => {
      const { tenant: t, account: a } = await boundTenant();
      await sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        count: 2,
        pathPrefix: '/open_api/v1.3/business/video/publish/',
      });
      const res = await publish({ ...baseBody('after two refusals'), account: a.openId }, t);
      expect(res.body.code).toBe(0);
      const done = await eventually(
        () => api<{ items: Record[] }>('GET', '/v1/publish/records', undefined, t),
        (r) => r.body.data.items[0]?.postId != null,
        15_000,
      );
      expect(done.body.data.items[0]!.status).toBe('publish_complete');
      expect(await postsOf(a, 'after two refusals')).toHaveLength(1);
    });

    it('ends in service_error when the platform keeps refusing', async () => {
      const { tenant: t, account: a } = await boundTenant();
      await sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        count: 5,
        pathPrefix: '/open_api/v1.3/business/video/publish/',
      });
      await publish({ ...baseBody('refused'), account: a.openId }, t);
      const done = await eventually(
        () => api<{ items: Record[] }>('GET', '/v1/publish/records', undefined, t),
        (r) => r.body.data.items[0]?.status === 'service_error',
        15_000,
      );
      // The platform never gave a share id: the record keeps the service's handle to poll with.
      const ended = done.body.data.items[0]!;
      expect(ended).toMatchObject({ reasonCategory: 'retryable', shareId: ended.handle, publishId: ended.handle });
      expect(await postsOf(a, 'refused')).toHaveLength(0);
    });

    it("never resends a submit that timed out: it finds the post among the account's posts", async () => {
      const { tenant: t, account: a } = await boundTenant();
      // Longer than the upstream client's 2 s timeout; the emulator then publishes all the same.
      await sb.control('POST', '/_sandbox/faults', {
        kind: 'hang',
        count: 1,
        hangMs: 3_000,
        pathPrefix: '/open_api/v1.3/business/video/publish/',
      });
      await publish({ ...baseBody('slow platform'), account: a.openId }, t);
      const done = await eventually(
        () => api<{ items: Record[] }>('GET', '/v1/publish/records', undefined, t),
        (r) => r.body.data.items[0]?.status === 'publish_complete',
        20_000,
      );
      const posts = await postsOf(a, 'slow platform');
      expect(posts).toHaveLength(1);
      // The platform's share id never came: the handle of the answer still finds the record.
      const found = done.body.data.items[0]!;
      expect(found).toMatchObject({ postId: posts[0]!.item_id, shareId: found.handle });
      expect((await status(found.handle, '', t)).body.data).toMatchObject({
        id: found.id,
        status: 'publish_complete',
        matchedRecord: true,
      });
    });

    it('survives the worker stopping mid-publish: a new worker finishes it, with one post', async () => {
      const { tenant: t, account: a } = await boundTenant();
      const res = await publish({ ...baseBody('worker restart'), account: a.openId }, t);
      expect(res.body.data.shareId).not.toBeNull();
      await env.restartWorker();
      const done = await eventually(
        () => api<{ items: Record[] }>('GET', '/v1/publish/records', undefined, t),
        (r) => r.body.data.items[0]?.postId != null,
        20_000,
      );
      expect(done.body.data.items[0]!.status).toBe('publish_complete');
      expect(await postsOf(a, 'worker restart')).toHaveLength(1);
    });
  });
});
