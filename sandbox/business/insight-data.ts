/**
 * The numbers behind the insight endpoints: every metric is derived from a seed (account, date,
 * post, field) with stableNumber, so repeated calls agree and tests can compare two responses.
 * Field names and enumerations are those of official-api.md §4.
 */
import { stableNumber, type Post } from '../posts';

/** business/get fields answered once, for the account as it is now. */
export const PROFILE_FIELDS = [
  'is_business_account',
  'profile_image',
  'username',
  'profile_deep_link',
  'display_name',
  'bio_description',
  'is_verified',
  'following_count',
  'followers_count',
  'total_likes',
  'videos_count',
] as const;

/** business/get fields answered per day in `metrics[]` (followers_count is both, as officially). */
export const DAILY_FIELDS = [
  'video_views',
  'unique_video_views',
  'profile_views',
  'likes',
  'comments',
  'shares',
  'phone_number_clicks',
  'lead_submissions',
  'app_download_clicks',
  'bio_link_clicks',
  'email_clicks',
  'address_clicks',
  'daily_total_followers',
  'daily_new_followers',
  'daily_lost_followers',
  'followers_count',
  'audience_activity',
  'engaged_audience',
] as const;

export const DEMOGRAPHIC_FIELDS = ['audience_ages', 'audience_genders', 'audience_countries', 'audience_cities'] as const;

export const ACCOUNT_FIELDS: readonly string[] = [...new Set<string>([...PROFILE_FIELDS, ...DAILY_FIELDS, ...DEMOGRAPHIC_FIELDS])];

export const VIDEO_FIELDS = [
  'item_id',
  'media_type',
  'is_ad',
  'thumbnail_url',
  'share_url',
  'embed_url',
  'caption',
  'video_duration',
  'likes',
  'comments',
  'shares',
  'favorites',
  'create_time',
  'reach',
  'video_views',
  'total_time_watched',
  'average_time_watched',
  'full_video_watched_rate',
  'new_followers',
  'profile_views',
  'website_clicks',
  'phone_number_clicks',
  'lead_submissions',
  'app_download_clicks',
  'email_clicks',
  'address_clicks',
  'video_view_retention',
  'impression_sources',
  'audience_genders',
  'audience_countries',
  'audience_cities',
  'audience_types',
  'engagement_likes',
] as const;

/** The official 25 categories, as the service keeps them: one list for both sides of the wire. */
export { BUSINESS_CATEGORIES } from '../../core/upstream/vplat/insights';

const round = (n: number, digits = 4) => Number(n.toFixed(digits));

/** A fraction in [min, max) from a seed, to 4 decimals. */
function fraction(seed: string, min = 0, max = 1): number {
  return round(min + (stableNumber(seed, 10_000) / 10_000) * (max - min));
}

/** Shares that add up to 1 over the given labels, largest first. */
function distribution<K extends string>(
  seed: string,
  labels: readonly string[],
  key: K,
): Array<Record<K, string> & { percentage: number }> {
  const weights = labels.map((label) => 1 + stableNumber(`${seed}:${label}`, 100));
  const total = weights.reduce((a, b) => a + b, 0);
  return labels
    .map((label, i) => ({ [key]: label, percentage: round(weights[i]! / total) }) as Record<K, string> & { percentage: number })
    .sort((a, b) => b.percentage - a.percentage);
}

const AGES = ['18-24', '25-34', '35-44', '45-54', '55+'];
const GENDERS = ['Female', 'Male', 'Other'];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'BR'];
const CITIES = ['New York', 'London', 'Berlin', 'Paris', 'São Paulo'];
const IMPRESSION_SOURCES = ['For You', 'Follow', 'Sound', 'Personal Profile', 'Search', 'Others', 'Direct Message'];

export function demographics(seed: string, field: string): unknown {
  switch (field) {
    case 'audience_ages':
      return distribution(`${seed}:ages`, AGES, 'age');
    case 'audience_genders':
      return distribution(`${seed}:genders`, GENDERS, 'gender');
    case 'audience_countries':
      return distribution(`${seed}:countries`, COUNTRIES, 'country');
    case 'audience_cities':
      return distribution(`${seed}:cities`, CITIES, 'city_name');
    default:
      throw new Error(`not a demographic field: ${field}`);
  }
}

/** Upper bounds of the daily counters; follower fields are derived from new and lost followers. */
const DAILY_RANGES: Record<string, number> = {
  video_views: 5000,
  profile_views: 300,
  likes: 800,
  comments: 80,
  shares: 60,
  phone_number_clicks: 6,
  lead_submissions: 4,
  app_download_clicks: 6,
  bio_link_clicks: 25,
  email_clicks: 6,
  address_clicks: 6,
  daily_new_followers: 60,
  daily_lost_followers: 12,
  engaged_audience: 400,
};

export function followersNow(openId: string): number {
  return 1_000 + stableNumber(`${openId}:followers`, 50_000);
}

export function followingCount(openId: string): number {
  return stableNumber(`${openId}:following`, 500);
}

function dailyCount(openId: string, date: string, field: string): number {
  return stableNumber(`${openId}:${date}:${field}`, DAILY_RANGES[field]!);
}

function netFollowers(openId: string, date: string): number {
  return dailyCount(openId, date, 'daily_new_followers') - dailyCount(openId, date, 'daily_lost_followers');
}

/** YYYY-MM-DD of a UTC day `offset` days after `date`. */
export function addDays(date: string, offset: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
}

/**
 * One day's `metrics[]` entry with the requested daily fields. The day's follower total is today's
 * total less the net growth of the days after it, so the series and the lifetime figure agree.
 */
export function dailyMetrics(openId: string, date: string, today: string, fields: readonly string[]): Record<string, unknown> {
  const entry: Record<string, unknown> = { date };
  for (const field of fields) {
    if (field === 'daily_total_followers') entry[field] = netFollowers(openId, date);
    else if (field === 'followers_count') {
      let total = followersNow(openId);
      for (let d = addDays(date, 1); d < today; d = addDays(d, 1)) total -= netFollowers(openId, d);
      entry[field] = total;
    } else if (field === 'unique_video_views')
      entry[field] = Math.floor(dailyCount(openId, date, 'video_views') * fraction(`${openId}:${date}:unique`, 0.4, 0.9));
    else if (field === 'audience_activity') {
      entry[field] = Array.from({ length: 24 }, (_, hour) => ({
        hour: String(hour),
        count: stableNumber(`${openId}:${date}:activity:${hour}`, 200),
      }));
    } else entry[field] = dailyCount(openId, date, field);
  }
  return entry;
}

/** Whether the post is promoted as a Spark Ad: one post in five, by its id. */
export function isAdPost(post: Post): boolean {
  return stableNumber(`${post.itemId}:ad`, 5) === 0;
}

export function videoViews(post: Post): number {
  return 100 + stableNumber(`${post.itemId}:views`, 20_000);
}

export function videoLikes(post: Post): number {
  return Math.floor(videoViews(post) * fraction(`${post.itemId}:like-rate`, 0.02, 0.12));
}

/** Per-second series up to the post's length (at most 60 points), decreasing from near 1. */
function perSecond(seed: string, seconds: number, decay: boolean): Array<{ second: string; percentage: number }> {
  let level = 1;
  return Array.from({ length: Math.max(1, Math.min(60, Math.round(seconds))) }, (_, second) => {
    level = decay ? level * fraction(`${seed}:${second}`, 0.9, 1) : fraction(`${seed}:${second}`, 0, 0.05);
    return { second: String(second), percentage: round(level) };
  });
}

/** One video/list field for a post; `comments` is the live count the caller passes in. */
export function videoField(
  post: Post,
  field: string,
  extra: { comments: number; shareUrl: string; embedUrl: string; thumbnailUrl: string },
): unknown {
  const id = post.itemId;
  const views = videoViews(post);
  const averageWatched = round(post.durationSeconds * fraction(`${id}:watch`, 0.2, 0.9), 3);
  const values: Record<string, () => unknown> = {
    item_id: () => id,
    media_type: () => post.mediaType,
    is_ad: () => isAdPost(post),
    thumbnail_url: () => extra.thumbnailUrl,
    share_url: () => extra.shareUrl,
    embed_url: () => extra.embedUrl,
    caption: () => post.caption,
    video_duration: () => round(post.durationSeconds, 3),
    likes: () => videoLikes(post),
    comments: () => extra.comments,
    shares: () => stableNumber(`${id}:shares`, 200),
    favorites: () => stableNumber(`${id}:favorites`, 300),
    create_time: () => String(post.createTime),
    reach: () => Math.floor(views * fraction(`${id}:reach`, 0.5, 0.95)),
    video_views: () => views,
    total_time_watched: () => round(averageWatched * views, 3),
    average_time_watched: () => averageWatched,
    full_video_watched_rate: () => fraction(`${id}:full`, 0, 0.5),
    new_followers: () => stableNumber(`${id}:new_followers`, 100),
    profile_views: () => stableNumber(`${id}:profile_views`, 400),
    website_clicks: () => stableNumber(`${id}:website_clicks`, 30),
    phone_number_clicks: () => stableNumber(`${id}:phone_number_clicks`, 10),
    lead_submissions: () => stableNumber(`${id}:lead_submissions`, 5),
    app_download_clicks: () => stableNumber(`${id}:app_download_clicks`, 10),
    email_clicks: () => stableNumber(`${id}:email_clicks`, 10),
    address_clicks: () => stableNumber(`${id}:address_clicks`, 10),
    video_view_retention: () => perSecond(`${id}:retention`, post.durationSeconds, true),
    impression_sources: () => distribution(`${id}:sources`, IMPRESSION_SOURCES, 'impression_source'),
    audience_genders: () => demographics(id, 'audience_genders'),
    audience_countries: () => demographics(id, 'audience_countries'),
    audience_cities: () => demographics(id, 'audience_cities'),
    audience_types: () => {
      const fresh = fraction(`${id}:new_viewers`, 0.5, 1);
      const followers = fraction(`${id}:followers`, 0, 0.5);
      return [
        { type: 'NEW_VIEWER', percentage: fresh },
        { type: 'RETURN_VIEWER', percentage: round(1 - fresh) },
        { type: 'FOLLOWER_PERCENT', percentage: followers },
        { type: 'NON_FOLLOWER_PERCENT', percentage: round(1 - followers) },
      ];
    },
    engagement_likes: () => perSecond(`${id}:engagement`, post.durationSeconds, false),
  };
  const value = values[field];
  if (!value) throw new Error(`not a video field: ${field}`);
  return value();
}

/** Category averages; floats as the reference shows them (e.g. 22618.7106). */
export function benchmark(category: string): Record<string, unknown> {
  const n = (field: string, range: number) => round(stableNumber(`${category}:${field}`, range * 10_000) / 10_000 + range / 10);
  return {
    business_category: category,
    average_likes: n('likes', 30_000),
    average_comments: n('comments', 1_000),
    average_shares: n('shares', 800),
    average_video_count: n('videos', 300),
    average_follower_count: n('followers', 200_000),
    average_follower_growth: n('growth', 5_000),
    average_engagement_rate: fraction(`${category}:engagement`, 0.01, 0.12),
    average_video_views: n('views', 500_000),
  };
}
