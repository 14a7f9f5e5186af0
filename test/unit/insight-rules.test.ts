import { ApiError } from '../../core/errors';
import {
  businessCategory,
  dateRange,
  instant,
  maxCount,
  postIds,
  resolveFields,
  shopVideoCursor,
  timeRange,
  titleFilter,
  titleMatches,
  videoCursor,
} from '../../core/engagement/insight-rules';
import { fromOfficial } from '../../core/upstream/mapping';
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
import {
  BUSINESS_CATEGORIES as EMULATOR_CATEGORIES,
  DAILY_FIELDS,
  VIDEO_FIELDS as EMULATOR_VIDEO_FIELDS,
  PROFILE_FIELDS,
  DEMOGRAPHIC_FIELDS,
} from '../../sandbox/business/insight-data';

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const NOW = Date.parse('2026-11-22T15:00:00Z');

describe('insight rules', () => {
  describe('business categories', () => {
    it('are the official 25 (official-api.md §4.3), the same list the emulator checks', () => {
      expect(BUSINESS_CATEGORIES).toHaveLength(25);
      expect(new Set(BUSINESS_CATEGORIES).size).toBe(25);
      expect([...BUSINESS_CATEGORIES]).toEqual([...EMULATOR_CATEGORIES]);
    });

    it.each(BUSINESS_CATEGORIES.map((c) => [c]))('accepts %s', (category) => {
      expect(businessCategory(category)).toBe(category);
    });

    it('refuses anything else with 2001 listing the allowed values', () => {
      for (const bad of ['beauty', 'COOKING', '']) {
        const err = refusal(() => businessCategory(bad));
        expect(err.code).toBe(2001);
        expect(err.message).toBe(`category: must be one of ${BUSINESS_CATEGORIES.join(', ')}`);
      }
    });
  });

  describe('field tables', () => {
    it('name every official field the emulator answers, each once', () => {
      const accountOfficial = REQUESTABLE_ACCOUNT_FIELDS.map(([, o]) => o).sort();
      expect(accountOfficial).toEqual([...new Set([...PROFILE_FIELDS, ...DAILY_FIELDS, ...DEMOGRAPHIC_FIELDS])].sort());
      expect(VIDEO_FIELDS.map(([, o]) => o).sort()).toEqual([...EMULATOR_VIDEO_FIELDS].sort());
      for (const table of [
        ACCOUNT_FIELDS,
        DAILY_METRIC_FIELDS,
        VIDEO_FIELDS,
        BENCHMARK_FIELDS,
        VIDEO_SETTINGS_FIELDS,
        REQUESTABLE_ACCOUNT_FIELDS,
      ]) {
        expect(new Set(table.map(([s]) => s)).size).toBe(table.length);
      }
      expect([...DAILY_ONLY_FIELDS]).not.toContain('followers_count');
      expect(DAILY_ONLY_FIELDS.has('video_views')).toBe(true);
    });

    it('flatten the official answer to camelCase', () => {
      expect(fromOfficial(BENCHMARK_FIELDS, { business_category: 'BEAUTY', average_likes: 1.5 })).toEqual({
        category: 'BEAUTY',
        averageLikes: 1.5,
      });
      expect(fromOfficial(VIDEO_SETTINGS_FIELDS, { privacy_level_options: ['SELF_ONLY'], max_video_post_duration_sec: 600 })).toEqual({
        privacyLevelOptions: ['SELF_ONLY'],
        maxVideoPostDurationSec: 600,
      });
    });
  });

  describe('fields', () => {
    it('takes service or official names, dropping duplicates; none means the default', () => {
      expect(resolveFields(['displayName', 'display_name', 'videoViews', 'audience_ages'], REQUESTABLE_ACCOUNT_FIELDS)).toEqual([
        'display_name',
        'video_views',
        'audience_ages',
      ]);
      expect(resolveFields([], VIDEO_FIELDS)).toBeUndefined();
    });

    it('refuses an unknown name with 2001 listing the service names', () => {
      const err = refusal(() => resolveFields(['likes', 'nope'], VIDEO_FIELDS));
      expect(err.code).toBe(2001);
      expect(err.message).toMatch(/^fields: unknown field "nope"; allowed: itemId, mediaType, /);
      expect(refusal(() => resolveFields(['likes', ''], VIDEO_FIELDS)).message).toBe(
        'fields: a field name is empty (fields are separated by single commas)',
      );
    });
  });

  describe('date range', () => {
    it('is optional, but both dates or neither', () => {
      expect(dateRange('', '', NOW)).toBeUndefined();
      expect(refusal(() => dateRange('2026-11-01', '', NOW)).message).toMatch(/^endDate: is required/);
      expect(refusal(() => dateRange('', '2026-11-01', NOW)).message).toMatch(/^startDate: is required/);
    });

    it('takes calendar dates written YYYY-MM-DD', () => {
      expect(dateRange('2026-11-01', '2026-11-07', NOW)).toEqual({ start: '2026-11-01', end: '2026-11-07' });
      for (const bad of ['2026-02-30', '2026-1-01', '01/11/2026', '2026-11-01T00:00:00Z']) {
        const err = refusal(() => dateRange(bad, '2026-11-07', NOW));
        expect([err.code, err.message]).toEqual([2001, 'startDate: must be a date written YYYY-MM-DD']);
      }
    });

    it('runs forward, ends yesterday at the latest and starts at most 60 days back (UTC)', () => {
      expect(refusal(() => dateRange('2026-11-08', '2026-11-07', NOW)).message).toBe('endDate: must not be before startDate (2026-11-08)');
      expect(dateRange('2026-11-21', '2026-11-21', NOW)).toBeDefined();
      expect(refusal(() => dateRange('2026-11-21', '2026-11-22', NOW)).message).toMatch(/^endDate: must be 2026-11-21 or earlier/);
      expect(dateRange('2026-09-23', '2026-09-30', NOW)).toBeDefined();
      expect(refusal(() => dateRange('2026-09-22', '2026-09-30', NOW)).message).toMatch(/^startDate: must be 2026-09-23 or later/);
    });
  });

  describe('video list parameters', () => {
    it('maxCount is 1 to 20, default 20', () => {
      expect(maxCount(undefined)).toBe(20);
      expect(maxCount(1)).toBe(1);
      expect(maxCount(20)).toBe(20);
      for (const bad of [0, 21, -1, 2.5]) expect(refusal(() => maxCount(bad)).code).toBe(2001);
    });

    it('videoIds are post ids, at most 20; record ids are 1005 naming their kind', () => {
      expect(postIds([' 7000000000000128000', '7000000000000128000', '7000000000000256000'])).toEqual([
        '7000000000000128000',
        '7000000000000256000',
      ]);
      expect(refusal(() => postIds(['abc'])).code).toBe(2001);
      expect(refusal(() => postIds(Array.from({ length: 21 }, (_, i) => String(i)))).message).toBe('videoIds: at most 20 post ids');
      const wrong = refusal(() => postIds(['pub_123']));
      expect([wrong.code, wrong.message]).toEqual([1005, "videoIds: pub_123 is a publish record id; pass the record's postId"]);
      expect(refusal(() => postIds(['vid_123'])).code).toBe(1005);
      expect(refusal(() => postIds(['1', ''])).message).toBe('videoIds: a post id is empty (ids are separated by single commas)');
    });

    it("cursor is the previous page's nextCursor (milliseconds)", () => {
      expect(videoCursor('')).toBeUndefined();
      expect(videoCursor('1763000000000')).toBe(1763000000000);
      expect(refusal(() => videoCursor('abc')).code).toBe(2001);
    });
  });

  describe('shop video list parameters', () => {
    it('matches the title as a case-insensitive substring, composed accents alike', () => {
      expect(titleFilter('')).toBeUndefined();
      expect(titleFilter('  Spring Sale ')).toBe('Spring Sale');
      expect(titleMatches('Our SPRING sale is on #deal', 'spring sale')).toBe(true);
      expect(titleMatches('Crème brûlée', 'CRE\u0300ME')).toBe(true);
      expect(titleMatches('Autumn sale', 'spring')).toBe(false);
      expect(refusal(() => titleFilter('   '))).toMatchObject({ code: 2001, message: expect.stringMatching(/^title: /) });
    });

    it.each([
      ['2026-11-01T09:30:00Z', '2026-11-01T09:30:00.000Z'],
      ['2026-11-01T09:30Z', '2026-11-01T09:30:00.000Z'],
      ['2026-11-01T10:30:00.1234+01:00', '2026-11-01T09:30:00.123Z'],
      ['2026-11-01t04:00:00-05:30', '2026-11-01T09:30:00.000Z'],
      ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ])('reads %s as an instant', (written, iso) => {
      expect(instant('from', written).toISOString()).toBe(iso);
    });

    it.each([
      ['1763000000', 'must be an ISO 8601 date and time with a zone'],
      ['2026-11-01', 'must be an ISO 8601 date and time with a zone'],
      ['2026-11-01T09:30:00', 'must be an ISO 8601 date and time with a zone'],
      ['2026-02-29T00:00:00Z', 'is not a calendar date'],
      ['2026-11-01T24:00:00Z', 'is not a time of day'],
      ['2026-11-01T09:30:00+24:00', 'is not a time of day'],
      ['0050-01-01T00:00:00Z', 'is before 1970'],
    ])('refuses %s with 2001 naming the field', (written, why) => {
      expect(refusal(() => instant('to', written))).toMatchObject({
        code: 2001,
        message: expect.stringContaining(`to: ${why}`),
        options: { data: { field: 'to' } },
      });
    });

    it('points at an offset whose "+" arrived as a space', () => {
      expect(refusal(() => instant('from', '2026-11-01T10:30:00 01:00')).message).toContain('%2B');
    });

    it('takes either end of the range open, and refuses an empty range naming to', () => {
      expect(timeRange('', '')).toEqual({});
      expect(timeRange('2026-11-01T00:00:00Z', '')).toEqual({ from: new Date('2026-11-01T00:00:00Z') });
      expect(refusal(() => timeRange('2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z'))).toMatchObject({
        code: 2001,
        options: { data: { field: 'to' } },
      });
    });

    it('takes only a publish record id as cursor', () => {
      expect(shopVideoCursor('')).toBeUndefined();
      expect(shopVideoCursor('pub_01jc9z3v8h0000000000000000')).toBe('pub_01jc9z3v8h0000000000000000');
      expect(refusal(() => shopVideoCursor('1763000000000'))).toMatchObject({ code: 2001, options: { data: { field: 'cursor' } } });
    });
  });
});
