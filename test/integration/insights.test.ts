/**
 * Insights through real HTTP against the emulator: each route's answer is the official answer
 * (read directly with the account's own token) flattened through the endpoint's field table, plus
 * our own rules: the daily series only for a date range, the range's limits, page sizes, the post
 * filter, the 25 categories, the deprecated stats route, seats, plans and upstream failures.
 */
import { fromOfficial, type FieldTable } from '../../core/upstream/mapping';
import {
  ACCOUNT_FIELDS,
  BENCHMARK_FIELDS,
  DAILY_METRIC_FIELDS,
  DAILY_ONLY_FIELDS,
  REQUESTABLE_ACCOUNT_FIELDS,
  VIDEO_FIELDS,
  VIDEO_SETTINGS_FIELDS,
} from '../../core/upstream/vplat/insight-fields';
import { BUSINESS_CATEGORIES } from '../../core/upstream/vplat/insights';
import { insightRoutes } from '../../gateway/routes/v1/insights';
import { call } from '../helpers/http';
import { official, withoutUrlExpiry } from '../helpers/sandbox';
import { createTenant, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

type Json = Record<string, unknown>;
interface VideoPage {
  items: Array<Json & { itemId: string }>;
  nextCursor: string | null;
  hasMore: boolean;
}

const BUSINESS = '/v1/vplat/v1.3/business';
const DAY_MS = 86_400_000;
const day = (offset: number) => new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);

/** Temporary picture URLs carry their expiry to the second; two reads a moment apart differ only there. */
const stable = withoutUrlExpiry;

describe('insights', () => {
  let env: WorkingStack;
  let tenant: Tenant;
  let account: SandboxAccount;

  beforeAll(async () => {
    env = await startWorkingStack('insights');
    tenant = await createTenant(env.stack);
    ({ account } = await bindSandboxSeat(env, tenant, 'business'));
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });
  afterEach(() => env.sb.control('DELETE', '/_sandbox/faults'));

  const get = <T = Json>(path: string, key = tenant.apiKey) => call<T>(env.stack.baseUrl, 'GET', path, { key });
  const q = (params: Record<string, string | number>) =>
    new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

  /** The official answer's data, read with the account's own token. */
  async function officialData(endpoint: string, query: Record<string, unknown>, who = account): Promise<Json> {
    const encoded = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    const res = await official(env.sb.url, 'GET', `/open_api/v1.3/${endpoint}`, {
      token: who.tokens.access_token,
      query: { business_id: who.openId, ...encoded },
    });
    expect(res.body.code).toBe(0);
    return res.body.data;
  }
  const through = (table: FieldTable, data: Json) => fromOfficial(table, data);
  const officialNames = (table: FieldTable) => table.map(([, o]) => o);

  describe('GET business/get', () => {
    it('answers the account with its demographics, flattened by the table, and no daily series without a date range', async () => {
      const res = await get(`${BUSINESS}/get?${q({ account: account.username })}`);
      expect(res.status).toBe(200);
      expect(res.body.code).toBe(0);
      const fields = officialNames(REQUESTABLE_ACCOUNT_FIELDS).filter((f) => !DAILY_ONLY_FIELDS.has(f));
      const { metrics: _ignored, ...expected } = await officialData('business/get/', { fields });
      expect(stable(res.body.data)).toEqual(stable(through(ACCOUNT_FIELDS, expected)));
      expect(res.body.data).toMatchObject({
        username: account.username,
        followersCount: expect.any(Number),
        audienceAges: expect.any(Array),
      });
      expect(res.body.data).not.toHaveProperty('metrics');
    });

    it('adds the daily series, one entry a day, when a date range is given', async () => {
      const range = { startDate: day(-10), endDate: day(-1) };
      const res = await get(`${BUSINESS}/get?${q({ account: account.openId, ...range })}`);
      expect(res.body.code).toBe(0);
      const data = await officialData('business/get/', {
        fields: officialNames(REQUESTABLE_ACCOUNT_FIELDS),
        start_date: range.startDate,
        end_date: range.endDate,
      });
      const expected = through(ACCOUNT_FIELDS, { ...data, metrics: (data.metrics as Json[]).map((m) => through(DAILY_METRIC_FIELDS, m)) });
      expect(stable(res.body.data)).toEqual(stable(expected));
      const metrics = res.body.data.metrics as Json[];
      expect(metrics.map((m) => m.date)).toEqual(Array.from({ length: 10 }, (_, i) => day(i - 10)));
      expect(metrics[0]).toMatchObject({
        videoViews: expect.any(Number),
        dailyNewFollowers: expect.any(Number),
        audienceActivity: expect.any(Array),
      });
    });

    it('takes fields by their service or official names', async () => {
      const res = await get(
        `${BUSINESS}/get?${q({ account: account.username, fields: 'displayName,followers_count,videoViews', startDate: day(-2), endDate: day(-1) })}`,
      );
      expect(res.body.code).toBe(0);
      expect(Object.keys(res.body.data).sort()).toEqual(['displayName', 'followersCount', 'metrics']);
      expect(res.body.data.metrics).toEqual([
        expect.objectContaining({ date: day(-2), videoViews: expect.any(Number), followersCount: expect.any(Number) }),
        expect.objectContaining({ date: day(-1) }),
      ]);
    });

    it.each([
      [{ fields: 'videoViews' }, 'fields: video_views is a daily metric: give startDate and endDate for the daily series'],
      [{ fields: 'displayName,nope' }, 'fields: unknown field "nope"'],
      [{ startDate: day(-3) }, 'endDate: is required with startDate'],
      [{ endDate: day(-3) }, 'startDate: is required with endDate'],
      [{ startDate: '2026/11/01', endDate: day(-1) }, 'startDate: must be a date written YYYY-MM-DD'],
      [{ startDate: day(-5), endDate: '2026-02-30' }, 'endDate: must be a date written YYYY-MM-DD'],
      [{ startDate: day(-2), endDate: day(-3) }, 'endDate: must not be before startDate'],
      [{ startDate: day(-2), endDate: day(0) }, `endDate: must be ${day(-1)} or earlier`],
      [{ startDate: day(-61), endDate: day(-1) }, `startDate: must be ${day(-60)} or later`],
    ])('refuses %j with 2001 naming the field', async (params, message) => {
      const res = await get(`${BUSINESS}/get?${q({ account: account.username, ...params })}`);
      expect([res.status, res.body.code]).toEqual([422, 2001]);
      expect(res.body.message.startsWith(message)).toBe(true);
    });

    it('accepts the longest range the platform allows', async () => {
      const res = await get(`${BUSINESS}/get?${q({ account: account.username, fields: 'likes', startDate: day(-60), endDate: day(-1) })}`);
      expect(res.body.code).toBe(0);
      expect(res.body.data.metrics).toHaveLength(60);
    });
  });

  describe('GET business/video/list', () => {
    it("lists the account's posts with every field, as the official list flattened", async () => {
      const res = await get<VideoPage>(`${BUSINESS}/video/list?${q({ account: account.username })}`);
      expect(res.body.code).toBe(0);
      const data = await officialData('business/video/list/', { fields: officialNames(VIDEO_FIELDS), max_count: '20' });
      expect(stable(res.body.data.items)).toEqual(stable((data.videos as Json[]).map((v) => through(VIDEO_FIELDS, v))));
      expect(res.body.data.items).toHaveLength(3);
      expect(res.body.data).toMatchObject({ nextCursor: null, hasMore: false });
      expect(res.body.data.items[0]).toMatchObject({
        itemId: expect.stringMatching(/^\d{19}$/),
        videoViews: expect.any(Number),
        videoViewRetention: expect.any(Array),
      });
    });

    it("pages with maxCount and the previous page's nextCursor", async () => {
      const first = await get<VideoPage>(
        `${BUSINESS}/video/list?${q({ account: account.username, maxCount: 2, fields: 'itemId,createTime' })}`,
      );
      expect(first.body.data.items).toHaveLength(2);
      expect(first.body.data.hasMore).toBe(true);
      expect(first.body.data.nextCursor).toMatch(/^\d+$/);
      const second = await get<VideoPage>(
        `${BUSINESS}/video/list?${q({ account: account.username, maxCount: 2, fields: 'createTime', cursor: first.body.data.nextCursor! })}`,
      );
      expect(second.body.data).toMatchObject({ nextCursor: null, hasMore: false });
      expect(second.body.data.items).toHaveLength(1);
      // itemId is always returned: the platform needs it with any other field.
      expect(Object.keys(second.body.data.items[0]!).sort()).toEqual(['createTime', 'itemId']);
      const all = [...first.body.data.items, ...second.body.data.items].map((v) => v.itemId);
      expect(new Set(all).size).toBe(3);
    });

    it.each([0, 21, 'ten'])('refuses maxCount=%p with 2001', async (maxCount) => {
      const res = await get(`${BUSINESS}/video/list?${q({ account: account.username, maxCount })}`);
      expect([res.status, res.body.code]).toEqual([422, 2001]);
      expect(res.body.message).toMatch(/maxCount: /);
    });

    it('filters by videoIds, leaving out posts the account does not have', async () => {
      const all = await get<VideoPage>(`${BUSINESS}/video/list?${q({ account: account.username, fields: 'itemId' })}`);
      const [a, , c] = all.body.data.items.map((v) => v.itemId);
      const res = await get<VideoPage>(
        `${BUSINESS}/video/list?${q({ account: account.username, videoIds: `${a},${c},7000000000000000128`, fields: 'likes' })}`,
      );
      expect(res.body.code).toBe(0);
      expect(res.body.data.items.map((v) => v.itemId)).toEqual([a, c]);
      const data = await officialData('business/video/list/', { fields: ['item_id', 'likes'], filters: { video_ids: [a, c] } });
      expect(res.body.data.items).toEqual((data.videos as Json[]).map((v) => through(VIDEO_FIELDS, v)));
    });

    it('names a publish record id given as a post id (1005), and refuses other non-ids with 2001', async () => {
      const wrong = await get(`${BUSINESS}/video/list?${q({ account: account.username, videoIds: 'pub_123' })}`);
      expect([wrong.status, wrong.body.code]).toEqual([404, 1005]);
      expect(wrong.body.message).toMatch(/publish record id/);
      const bad = await get(`${BUSINESS}/video/list?${q({ account: account.username, videoIds: 'abc' })}`);
      expect(bad.body.code).toBe(2001);
    });
  });

  describe('GET business/benchmark', () => {
    it("answers the category's averages, flattened", async () => {
      const res = await get(`${BUSINESS}/benchmark?${q({ account: account.username, category: 'BEAUTY' })}`);
      expect(res.body.code).toBe(0);
      expect(res.body.data).toEqual(through(BENCHMARK_FIELDS, await officialData('business/benchmark/', { business_category: 'BEAUTY' })));
      expect(res.body.data).toMatchObject({
        category: 'BEAUTY',
        averageLikes: expect.any(Number),
        averageEngagementRate: expect.any(Number),
      });
    });

    it('accepts each of the official 25 categories', async () => {
      for (const category of BUSINESS_CATEGORIES) {
        const res = await get(`${BUSINESS}/benchmark?${q({ account: account.username, category })}`);
        expect([category, res.body.code, res.body.data.category]).toEqual([category, 0, category]);
      }
    });

    it('refuses another category with 2001 listing the allowed ones', async () => {
      const res = await get(`${BUSINESS}/benchmark?${q({ account: account.username, category: 'beauty' })}`);
      expect([res.status, res.body.code]).toEqual([422, 2001]);
      expect(res.body.message).toBe(`category: must be one of ${BUSINESS_CATEGORIES.join(', ')}`);
      const missing = await get(`${BUSINESS}/benchmark?${q({ account: account.username })}`);
      expect(missing.body.code).toBe(2001);
      expect(missing.body.message).toMatch(/category/);
    });
  });

  describe('GET business/video/settings', () => {
    it('answers what the account may publish, flattened', async () => {
      const res = await get(`${BUSINESS}/video/settings?${q({ account: account.username })}`);
      expect(res.body.code).toBe(0);
      expect(res.body.data).toEqual(through(VIDEO_SETTINGS_FIELDS, await officialData('business/video/settings/', {})));
      expect(res.body.data).toMatchObject({
        privacyLevelOptions: expect.arrayContaining(['SELF_ONLY']),
        maxVideoPostDurationSec: expect.any(Number),
      });
    });
  });

  describe('deprecated GET /v1/publish/stats', () => {
    it('answers as video/list?videoIds=<postId> does, with or without the account', async () => {
      const list = await get<VideoPage>(`${BUSINESS}/video/list?${q({ account: account.username, fields: 'itemId' })}`);
      const postId = list.body.data.items[1]!.itemId;
      const replacement = await get<VideoPage>(`${BUSINESS}/video/list?${q({ account: account.username, videoIds: postId })}`);
      expect(replacement.body.data.items).toHaveLength(1);

      const named = await get<VideoPage>(`/v1/publish/stats?${q({ itemId: postId, account: account.username })}`);
      const found = await get<VideoPage>(`/v1/publish/stats?${q({ itemId: postId })}`);
      expect(stable(named.body)).toEqual(stable(replacement.body));
      expect(stable(found.body)).toEqual(stable(replacement.body));
    });

    it("finds the post on whichever of the caller's video track seats has it; 1005 when none does", async () => {
      const two = await createTenant(env.stack);
      await bindSandboxSeat(env, two, 'business');
      const { account: second } = await bindSandboxSeat(env, two, 'business');
      const data = await officialData('business/video/list/', { fields: ['item_id'] }, second);
      const postId = (data.videos as Json[])[0]!.item_id as string;

      const found = await get<VideoPage>(`/v1/publish/stats?${q({ itemId: postId })}`, two.apiKey);
      expect(found.body.code).toBe(0);
      expect(found.body.data.items.map((v) => v.itemId)).toEqual([postId]);

      // Another customer's post is not found through this caller's seats.
      const foreign = await get(`/v1/publish/stats?${q({ itemId: postId })}`);
      expect([foreign.status, foreign.body.code]).toEqual([404, 1005]);
      const named = await get(`/v1/publish/stats?${q({ itemId: 'pub_abc' })}`);
      expect([named.body.code, named.body.message]).toEqual([1005, "itemId: pub_abc is a publish record id; pass the record's postId"]);
    });

    it('is marked deprecated in its route schema, and only it', () => {
      const flagged = insightRoutes.filter((r) => (r.schema as { deprecated?: boolean }).deprecated).map((r) => r.url);
      expect(flagged).toEqual(['/publish/stats']);
    });
  });

  describe('seats and plans', () => {
    it.each([
      ['get', {}],
      ['video/list', {}],
      ['benchmark', { category: 'PETS' }],
      ['video/settings', {}],
    ])('%s: an account no seat of the caller holds is 1007', async (route, extra) => {
      const res = await get(`${BUSINESS}/${route}?${q({ account: 'someone_else', ...extra })}`);
      expect([res.status, res.body.code]).toEqual([409, 1007]);
    });

    it('the deprecated route without account is 1007 when the caller has no bound video track seat', async () => {
      const empty = await createTenant(env.stack);
      const res = await get(`/v1/publish/stats?${q({ itemId: '7000000000000128000' })}`, empty.apiKey);
      expect(res.body.code).toBe(1007);
    });

    it('reads work on an expired plan', async () => {
      const expired = await createTenant(env.stack, { planExpiresAt: new Date(Date.now() - DAY_MS) });
      const { account: own } = await bindSandboxSeat(env, expired, 'business');
      for (const path of [
        `${BUSINESS}/get?${q({ account: own.username })}`,
        `${BUSINESS}/video/list?${q({ account: own.username })}`,
        `${BUSINESS}/benchmark?${q({ account: own.username, category: 'GAMING' })}`,
        `${BUSINESS}/video/settings?${q({ account: own.username })}`,
      ]) {
        const res = await get(path, expired.apiKey);
        expect([path, res.body.code]).toEqual([path, 0]);
      }
    });
  });

  describe('upstream failures', () => {
    it('a platform error is 3001 with the official code', async () => {
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        platform: 'business',
        pathPrefix: '/open_api/v1.3/business/get/',
        count: 5,
      });
      const res = await get(`${BUSINESS}/get?${q({ account: account.username })}`);
      expect([res.status, res.body.code]).toEqual([502, 3001]);
      expect(res.body.data).toMatchObject({ officialCode: expect.any(Number) });
    });

    it('a platform that does not answer in time is 3002', async () => {
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'hang',
        hangMs: 3_000,
        platform: 'business',
        pathPrefix: '/open_api/v1.3/business/video/list/',
      });
      const res = await get(`${BUSINESS}/video/list?${q({ account: account.username })}`);
      expect([res.status, res.body.code]).toEqual([504, 3002]);
    });

    it.each([
      ['benchmark', { category: 'PETS' }, 'invalid_token'],
      ['video/settings', {}, 'rate_limit'],
    ])('%s: an official refusal (%s) is 3001', async (route, extra, kind) => {
      await env.sb.control('POST', '/_sandbox/faults', { kind, platform: 'business', pathPrefix: `/open_api/v1.3/business/${route}/` });
      const res = await get(`${BUSINESS}/${route}?${q({ account: account.username, ...extra })}`);
      expect(res.body.code).toBe(3001);
    });

    it('the deprecated route answers with the failure when the post is not found elsewhere', async () => {
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        platform: 'business',
        pathPrefix: '/open_api/v1.3/business/video/list/',
        count: 5,
      });
      const res = await get(`/v1/publish/stats?${q({ itemId: '7000000000000128000' })}`);
      expect(res.body.code).toBe(3001);
    });
  });

  it('never answers bad input with 5000', async () => {
    const paths = [
      `${BUSINESS}/get`,
      `${BUSINESS}/get?${q({ account: account.username, extra: 'x' })}`,
      `${BUSINESS}/get?${q({ account: account.username, fields: ',,,' })}`,
      `${BUSINESS}/get?${q({ account: account.username, startDate: '9999-99-99', endDate: '0000-00-00' })}`,
      `${BUSINESS}/get?${q({ account: account.username, fields: 'display\u0000Name' })}`,
      `${BUSINESS}/video/list?${q({ account: account.username, cursor: 'abc' })}`,
      `${BUSINESS}/video/list?${q({ account: account.username, cursor: '99999999999999999999' })}`,
      `${BUSINESS}/video/list?${q({ account: account.username, videoIds: ',' })}`,
      `${BUSINESS}/video/list?${q({ account: account.username, videoIds: Array.from({ length: 21 }, (_, i) => String(i + 1)).join(',') })}`,
      `${BUSINESS}/video/list?${q({ account: account.username, maxCount: '1e3' })}`,
      `${BUSINESS}/video/list?account=${'a'.repeat(300)}`,
      `${BUSINESS}/benchmark?${q({ account: account.username, category: 'x'.repeat(100) })}`,
      `${BUSINESS}/video/settings`,
      `/v1/publish/stats`,
      `/v1/publish/stats?${q({ itemId: 'x'.repeat(100) })}`,
    ];
    for (const path of paths) {
      const res = await get(path);
      expect([path, res.status < 500, res.body.code !== 5000]).toEqual([path, true, true]);
      expect([path, res.body.code]).not.toEqual([path, 0]);
    }
  });
});
