/**
 * Account insights (official-api.md §4): business/get (profile, daily metrics, demographics),
 * business/video/list (the account's posts with their metrics, including posts published during
 * the run) and business/benchmark (category averages).
 *
 * Interpretations of the reference:
 * - business/get: `metrics[]` is returned when `fields` names a daily metric, over start_date..end_date
 *   with the official defaults (today-7 .. today-1, UTC, virtual clock). Today has no data yet
 *   (figures land T+24-48 h), so a range reaching today ends at yesterday. end_date may not be
 *   after today; start_date may not be more than 60 days back.
 * - Demographics are always returned: sandbox accounts have more than 100 followers.
 * - video/list: `comments` is the live count of the emulator's comments on the post (the platform
 *   lags by a day or two); other metrics are stable pseudo-random figures.
 * - video/list: `filters.video_ids` naming posts the account does not have simply returns fewer
 *   posts; `ad_post_only` is ignored without `video_ids`, as the reference says.
 * - video/list cursor: the response cursor is the create time (ms) of the last post returned, and
 *   the next page lists posts created strictly before it.
 */
import type { FastifyInstance } from 'fastify';
import { officialRoute, requireOwnBusiness, type SandboxContext } from '../context';
import { BUSINESS } from '../official-error';
import type { Params } from '../params';
import { commentStoreOf, pictureUrl } from './comment-store';
import {
  ACCOUNT_FIELDS,
  addDays,
  BUSINESS_CATEGORIES,
  benchmark,
  DAILY_FIELDS,
  dailyMetrics,
  demographics,
  DEMOGRAPHIC_FIELDS,
  followersNow,
  followingCount,
  isAdPost,
  VIDEO_FIELDS,
  videoField,
  videoLikes,
} from './insight-data';

const API = '/open_api/v1.3/business';
const MAX_LOOKBACK_DAYS = 60;

function dateParam(q: Params, name: string): string | undefined {
  const value = q.string(name);
  if (value === undefined) return undefined;
  const parsed = Date.parse(`${value}T00:00:00Z`);
  // Date.parse rolls 2024-02-30 over to March rather than failing: compare the round trip.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(parsed) || new Date(parsed).toISOString().slice(0, 10) !== value) {
    throw BUSINESS.invalid(name, 'Must be a date in the format YYYY-MM-DD.');
  }
  return value;
}

function fieldsParam(q: Params, allowed: readonly string[], defaults: string[]): string[] {
  const fields = q.stringArray('fields') ?? defaults;
  if (fields.length === 0) throw BUSINESS.invalid('fields', 'Must name at least one field.');
  const unknown = fields.find((f) => !allowed.includes(f));
  if (unknown !== undefined) throw BUSINESS.invalid('fields', `Unknown field "${unknown}".`);
  return [...new Set(fields)];
}

export function registerInsights(app: FastifyInstance, ctx: SandboxContext): void {
  const comments = commentStoreOf(ctx);
  const today = () => new Date(ctx.clock.now()).toISOString().slice(0, 10);

  officialRoute(app, ctx, 'business', 'GET', `${API}/get/`, (call) => {
    const account = requireOwnBusiness(call, 'query');
    const fields = fieldsParam(call.query, ACCOUNT_FIELDS, ['display_name', 'profile_image']);
    const now = today();
    const start = dateParam(call.query, 'start_date') ?? addDays(now, -7);
    const end = dateParam(call.query, 'end_date') ?? addDays(now, -1);
    if (end < start) throw BUSINESS.invalid('end_date', 'Must not be earlier than start_date.');
    if (end > now) throw BUSINESS.invalid('end_date', 'Must not be later than today (UTC).');
    if (start < addDays(now, -MAX_LOOKBACK_DAYS))
      throw BUSINESS.invalid('start_date', `Must be at most ${MAX_LOOKBACK_DAYS} days before today (UTC).`);

    const posts = ctx.posts.list(account.openId);
    const profile: Record<string, () => unknown> = {
      is_business_account: () => true,
      profile_image: () => pictureUrl(ctx, `avatar:${account.openId}`),
      username: () => account.username,
      profile_deep_link: () => `https://www.tiktok.com/@${account.username}`,
      display_name: () => account.displayName,
      bio_description: () => '',
      is_verified: () => false,
      following_count: () => followingCount(account.openId),
      followers_count: () => followersNow(account.openId),
      total_likes: () => posts.reduce((sum, p) => sum + videoLikes(p), 0),
      videos_count: () => posts.length,
    };
    const data: Record<string, unknown> = {};
    for (const field of fields) {
      if (profile[field]) data[field] = profile[field]();
      else if ((DEMOGRAPHIC_FIELDS as readonly string[]).includes(field)) data[field] = demographics(account.openId, field);
    }
    const daily = fields.filter((f) => (DAILY_FIELDS as readonly string[]).includes(f));
    if (daily.length > 0) {
      const metrics = [];
      for (let date = start; date <= end && date < now; date = addDays(date, 1))
        metrics.push(dailyMetrics(account.openId, date, now, daily));
      data.metrics = metrics;
    }
    return data;
  });

  officialRoute(app, ctx, 'business', 'GET', `${API}/video/list/`, (call) => {
    const account = requireOwnBusiness(call, 'query');
    const fields = fieldsParam(call.query, VIDEO_FIELDS, ['item_id']);
    if (!fields.includes('item_id')) throw BUSINESS.invalid('fields', 'Must include "item_id" when requesting other fields.');
    const { videoIds, adPostOnly } = videoFilters(call.query.object('filters') ?? {});
    const cursor = call.query.integer('cursor', { min: 0 }) ?? Math.floor(ctx.clock.now());
    const maxCount = call.query.integer('max_count', { min: 1, max: 20 }) ?? 10;

    const candidates = ctx.posts
      .list(account.openId)
      .filter((p) => p.createTime * 1000 < cursor)
      .filter((p) => !videoIds || (videoIds.includes(p.itemId) && (!adPostOnly || isAdPost(p))));
    const page = candidates.slice(0, maxCount);
    const videos = page.map((post) => {
      const extra = {
        comments: comments.count(account.openId, post.itemId),
        shareUrl: `https://www.tiktok.com/@${account.username}/video/${post.itemId}`,
        embedUrl: `https://www.tiktok.com/player/v1/${post.itemId}`,
        thumbnailUrl: pictureUrl(ctx, `thumbnail:${post.itemId}`),
      };
      return Object.fromEntries(fields.map((field) => [field, videoField(post, field, extra)]));
    });
    const last = page[page.length - 1];
    return { videos, cursor: last ? last.createTime * 1000 : cursor, has_more: candidates.length > page.length };
  });

  officialRoute(app, ctx, 'business', 'GET', `${API}/benchmark/`, (call) => {
    requireOwnBusiness(call, 'query');
    const category = call.query.requiredString('business_category', { oneOf: BUSINESS_CATEGORIES });
    return benchmark(category);
  });
}

/** video/list `filters`: `{ video_ids?: string[], ad_post_only?: boolean }`, named in errors as `filters.<key>`. */
function videoFilters(raw: Record<string, unknown>): { videoIds?: string[]; adPostOnly: boolean } {
  const ids = raw.video_ids;
  if (ids !== undefined && (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string'))) {
    throw BUSINESS.invalid('filters.video_ids', 'Not a valid list of strings.');
  }
  if (raw.ad_post_only !== undefined && typeof raw.ad_post_only !== 'boolean')
    throw BUSINESS.invalid('filters.ad_post_only', 'Not a valid boolean.');
  return { ...(ids ? { videoIds: ids as string[] } : {}), adPostOnly: raw.ad_post_only === true };
}
