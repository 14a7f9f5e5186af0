/**
 * business/video/list for a shop track account, through real HTTP against the emulator: a creator
 * seat's published shop videos are found by title and by publish time, paged like the video
 * track's list, each read back from the shop's per-video status; a video track account's list is
 * the official one as before, whichever seats its customer also holds; bad parameters are 2001
 * naming the field. The shop has no list of a creator's videos, and the emulator offers none.
 */
import { createHash } from 'node:crypto';
import { getShopProducts } from '../../core/upstream/shop/content';
import { fromOfficial } from '../../core/upstream/mapping';
import { VIDEO_FIELDS } from '../../core/upstream/vplat/insight-fields';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { official, withoutUrlExpiry } from '../helpers/sandbox';
import { createTenant, type Tenant } from '../helpers/stack';
import { mp4Bytes, uploadMultipart } from '../helpers/videos';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

type Json = Record<string, unknown>;
interface ShopItem {
  track: 'shop';
  videoId: string;
  title: string;
  status: string;
  officialStatus: string | null;
  postTime: number | null;
  publishedAt: string;
  recordId: string;
}
interface Page<T = ShopItem> {
  items: T[];
  nextCursor: string | null;
  hasMore: boolean;
}
interface RecordJson {
  id: string;
  shareId: string | null;
  status: string;
}

const LIST = '/v1/vplat/v1.3/business/video/list';
const SPRING = 'Spring SALE on linen shirts #deal';
const AUTUMN = 'Autumn boots are back #deal';
const SECOND = 1000;

describe('business/video/list for a shop track account', () => {
  let env: WorkingStack;
  let shopOnly: Tenant;
  let creator: SandboxAccount;
  let creatorSeat: string;
  let spring: RecordJson;
  let autumn: RecordJson;
  let before: Date;
  let after: Date;

  const get = <T = Json>(query: Record<string, string | number>, key = shopOnly.apiKey) =>
    call<T>(
      env.stack.baseUrl,
      'GET',
      `${LIST}?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`,
      { key },
    );
  const iso = (d: Date, offsetMs = 0) => new Date(d.getTime() + offsetMs).toISOString();

  async function publishShopVideo(t: Tenant, seatId: string, account: SandboxAccount, title: string): Promise<RecordJson> {
    const upload = await uploadMultipart<{ fileId: string }>(env.stack.baseUrl, t.apiKey, [
      { name: 'seatId', value: seatId },
      {
        name: 'file',
        value: { fileName: 'clip.mp4', bytes: Buffer.concat([mp4Bytes(4096), createHash('sha256').update(title).digest()]) },
      },
    ]);
    expect(upload.body.code).toBe(0);
    const product = (await getShopProducts(env.sb.upstream.shop, account.tokens.access_token, { page_size: 1 })).products[0]!;
    const res = await call<RecordJson>(env.stack.baseUrl, 'POST', '/v1/publish/tts', {
      key: t.apiKey,
      json: { accountId: account.openId, fileId: upload.body.data.fileId, productId: product.id, productTitle: 'Great deal', title },
    });
    expect(res.body.code).toBe(0);
    const records = () => call<{ items: RecordJson[] }>(env.stack.baseUrl, 'GET', '/v1/publish/records?limit=100', { key: t.apiKey });
    const done = await eventually(
      records,
      (r) => r.body.data.items.some((i) => i.id === res.body.data.id && i.status === 'publish_complete'),
      20_000,
    );
    return done.body.data.items.find((i) => i.id === res.body.data.id)!;
  }

  beforeAll(async () => {
    env = await startWorkingStack('insights-shop', { sandbox: { publishProcessingMs: 300 } });
    shopOnly = await createTenant(env.stack);
    ({ account: creator, seatId: creatorSeat } = await bindSandboxSeat(env, shopOnly, 'shop'));
    before = new Date();
    spring = await publishShopVideo(shopOnly, creatorSeat, creator, SPRING);
    autumn = await publishShopVideo(shopOnly, creatorSeat, creator, AUTUMN);
    after = new Date();
  }, 120_000);
  afterAll(() => env?.close());
  afterEach(() => env.sb.control('DELETE', '/_sandbox/faults'));

  it("lists a shop-only customer's shop videos, newest first, with what the shop says of each", async () => {
    const res = await get<Page>({ account: creator.openId });
    expect(res.body.code).toBe(0);
    expect(res.body.data).toMatchObject({ nextCursor: null, hasMore: false });
    expect(res.body.data.items).toEqual([
      expect.objectContaining({ track: 'shop', videoId: autumn.shareId, recordId: autumn.id, title: AUTUMN }),
      expect.objectContaining({ track: 'shop', videoId: spring.shareId, recordId: spring.id, title: SPRING }),
    ]);
    for (const item of res.body.data.items) {
      // The shop's own status call: SUCCESS, and the post time it reports with it.
      const shop = await env.sb.upstream.shop.get<{ video: { post_status: string; post_time: number } }>(
        `/affiliate_creator/202509/videos/${item.videoId}/status`,
        creator.tokens.access_token,
      );
      expect(item).toEqual({
        track: 'shop',
        videoId: item.videoId,
        title: item.title,
        status: 'publish_complete',
        officialStatus: 'SUCCESS',
        postTime: shop.video.post_time,
        publishedAt: expect.any(String),
        recordId: item.recordId,
      });
      expect(Date.parse(item.publishedAt)).toBeGreaterThanOrEqual(before.getTime());
      expect(Date.parse(item.publishedAt)).toBeLessThanOrEqual(after.getTime());
    }
  });

  it('finds one video by a part of its title, ignoring case', async () => {
    const res = await get<Page>({ account: creator.openId, title: 'spring sale' });
    expect(res.body.data.items.map((i) => i.videoId)).toEqual([spring.shareId]);
    const none = await get<Page>({ account: creator.openId, title: 'winter' });
    expect(none.body.data).toEqual({ items: [], nextCursor: null, hasMore: false });
  });

  it('finds both by a time range that holds them and none by ranges that do not', async () => {
    const both = await get<Page>({ account: creator.openId, from: iso(before, -SECOND), to: iso(after, SECOND) });
    expect(both.body.data.items.map((i) => i.videoId)).toEqual([autumn.shareId, spring.shareId]);
    // The same instants written with an offset.
    const plusOne = (d: Date) => new Date(d.getTime() + 3_600_000).toISOString().replace('Z', '+01:00');
    const offset = await get<Page>({
      account: creator.openId,
      from: plusOne(new Date(before.getTime() - SECOND)),
      to: plusOne(new Date(after.getTime() + SECOND)),
    });
    expect(offset.body.data.items).toHaveLength(2);
    const outside: Array<Record<string, string>> = [
      { to: iso(before, -SECOND) },
      { from: iso(after, SECOND) },
      { from: iso(before, -3_600 * SECOND), to: iso(before, -SECOND) },
    ];
    for (const range of outside) {
      const res = await get<Page>({ account: creator.openId, ...range });
      expect([range, res.body.code, res.body.data.items]).toEqual([range, 0, []]);
    }
    const titleAndTime = await get<Page>({ account: creator.openId, title: 'AUTUMN', from: iso(before, -SECOND) });
    expect(titleAndTime.body.data.items.map((i) => i.videoId)).toEqual([autumn.shareId]);
  });

  it('pages with maxCount and nextCursor as the video track does', async () => {
    const first = await get<Page>({ account: creator.openId, maxCount: 1 });
    expect(first.body.data).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    expect(first.body.data.items.map((i) => i.videoId)).toEqual([autumn.shareId]);
    const second = await get<Page>({ account: creator.openId, maxCount: 1, cursor: first.body.data.nextCursor! });
    expect(second.body.data).toMatchObject({ hasMore: false, nextCursor: null });
    expect(second.body.data.items.map((i) => i.videoId)).toEqual([spring.shareId]);
    const titled = await get<Page>({ account: creator.openId, maxCount: 1, title: '#DEAL', cursor: first.body.data.nextCursor! });
    expect(titled.body.data.items.map((i) => i.videoId)).toEqual([spring.shareId]);
  });

  it.each([
    [{ title: '   ' }, 'title'],
    [{ from: '2026-11-01' }, 'from'],
    [{ from: '1763000000' }, 'from'],
    [{ to: '2026-02-30T00:00:00Z' }, 'to'],
    [{ from: '2026-11-02T00:00:00Z', to: '2026-11-01T00:00:00Z' }, 'to'],
    [{ cursor: '1763000000000' }, 'cursor'],
    [{ maxCount: 21 }, 'maxCount'],
    [{ videoIds: '7000000000000128000' }, 'videoIds'],
    [{ fields: 'itemId' }, 'fields'],
  ])('refuses %j with 2001 naming %s', async (params, field) => {
    const res = await get({ account: creator.openId, ...params } as Record<string, string | number>);
    expect([res.status, res.body.code]).toEqual([422, 2001]);
    expect(res.body.message).toMatch(new RegExp(`^(query parameter )?${field}\\b`));
  });

  it('says how to send an offset whose "+" arrived as a space', async () => {
    const res = await call(env.stack.baseUrl, 'GET', `${LIST}?account=${creator.openId}&from=2026-11-01T10:30:00+01:00`, {
      key: shopOnly.apiKey,
    });
    expect(res.body).toMatchObject({ code: 2001, message: expect.stringContaining('%2B') });
  });

  it("is 1007 for an account none of the caller's seats holds, as a shop account when shop filters are given", async () => {
    const plain = await get({ account: 'someone_else' });
    expect([plain.status, plain.body.code]).toEqual([409, 1007]);
    const shop = await get({ account: 'someone_else', title: 'spring' });
    expect(shop.body).toMatchObject({ code: 1007, message: expect.stringContaining('shop track seats') });
    // Another customer's creator is not found through this caller either.
    const other = await createTenant(env.stack);
    const foreign = await get({ account: creator.openId }, other.apiKey);
    expect(foreign.body.code).toBe(1007);
  });

  it('fails as the shop does when the status read of the videos fails', async () => {
    await env.sb.control('POST', '/_sandbox/faults', {
      kind: 'server_error',
      platform: 'shop',
      pathPrefix: '/affiliate_creator/202509/videos/',
      count: 5,
    });
    const res = await get({ account: creator.openId });
    expect([res.status, res.body.code]).toEqual([502, 3001]);
    expect(res.body.data).toMatchObject({ platform: 'shop' });
  });

  it("the emulator, like the shop, answers no list of a creator's videos", async () => {
    const listed = env.sb.upstream.shop.get('/affiliate_creator/202607/videos', creator.tokens.access_token);
    await expect(listed).rejects.toMatchObject({ code: 3001, options: { data: expect.objectContaining({ officialCode: 36009009 }) } });
  });

  describe('video track accounts', () => {
    let both: Tenant;
    let business: SandboxAccount;
    let ownCreator: SandboxAccount;

    beforeAll(async () => {
      // A customer with a seat on each track picks the list by account.
      both = await createTenant(env.stack, { seatQuota: 5 });
      ({ account: business } = await bindSandboxSeat(env, both, 'business'));
      const shopSeat = await bindSandboxSeat(env, both, 'shop');
      ownCreator = shopSeat.account;
      await publishShopVideo(both, shopSeat.seatId, ownCreator, 'Only on the shop seat');
    }, 60_000);

    it('answers a video track account with the official list as before, beside a shop seat', async () => {
      const res = await get<Page<Json>>({ account: business.username }, both.apiKey);
      expect(res.body.code).toBe(0);
      const officialList = await official(env.sb.url, 'GET', '/open_api/v1.3/business/video/list/', {
        token: business.tokens.access_token,
        query: { business_id: business.openId, fields: JSON.stringify(VIDEO_FIELDS.map(([, o]) => o)), max_count: '20' },
      });
      const expected = (officialList.body.data.videos as Json[]).map((v) => fromOfficial(VIDEO_FIELDS, v));
      expect(withoutUrlExpiry(res.body.data.items)).toEqual(withoutUrlExpiry(expected));
      expect(res.body.data).toMatchObject({ nextCursor: null, hasMore: false });
      expect(res.body.data.items.every((i) => !('track' in i))).toBe(true);

      const shop = await get<Page>({ account: ownCreator.openId }, both.apiKey);
      expect(shop.body.data.items.map((i) => [i.track, i.title])).toEqual([['shop', 'Only on the shop seat']]);
    });

    it.each([
      [{ title: 'spring' }, 'title'],
      [{ from: '2026-11-01T00:00:00Z' }, 'from'],
      [{ to: '2026-11-01T00:00:00Z' }, 'to'],
    ])('refuses the shop filter %j on a video track account with 2001 naming %s', async (params, field) => {
      const res = await get({ account: business.username, ...params }, both.apiKey);
      expect([res.status, res.body.code]).toEqual([422, 2001]);
      expect(res.body.message.startsWith(`${field}: selects the videos of a shop track account`)).toBe(true);
    });
  });
});
