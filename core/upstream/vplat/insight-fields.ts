/**
 * The field tables of the insight endpoints (official-api.md §4 and §3.4): service field (camelCase)
 * → official dotted path, one table per official object. They drive both the answer's flattening
 * and the `fields` a caller may ask for, which take either name (docs/decisions/engagement.md, "Insight fields").
 */
import type { FieldTable } from '../mapping';
import { fromOfficial } from '../mapping';

/** business/get: the account as it is now, its demographics, and the daily series under `metrics`. */
export const ACCOUNT_FIELDS: FieldTable = [
  ['isBusinessAccount', 'is_business_account'],
  ['profileImage', 'profile_image'],
  ['username', 'username'],
  ['profileDeepLink', 'profile_deep_link'],
  ['displayName', 'display_name'],
  ['bioDescription', 'bio_description'],
  ['isVerified', 'is_verified'],
  ['followingCount', 'following_count'],
  ['followersCount', 'followers_count'],
  ['totalLikes', 'total_likes'],
  ['videosCount', 'videos_count'],
  ['audienceAges', 'audience_ages'],
  ['audienceGenders', 'audience_genders'],
  ['audienceCountries', 'audience_countries'],
  ['audienceCities', 'audience_cities'],
  ['metrics', 'metrics'],
];

/** One day of business/get `metrics[]`. `followersCount` is also an account field, as officially. */
export const DAILY_METRIC_FIELDS: FieldTable = [
  ['date', 'date'],
  ['videoViews', 'video_views'],
  ['uniqueVideoViews', 'unique_video_views'],
  ['profileViews', 'profile_views'],
  ['likes', 'likes'],
  ['comments', 'comments'],
  ['shares', 'shares'],
  ['phoneNumberClicks', 'phone_number_clicks'],
  ['leadSubmissions', 'lead_submissions'],
  ['appDownloadClicks', 'app_download_clicks'],
  ['bioLinkClicks', 'bio_link_clicks'],
  ['emailClicks', 'email_clicks'],
  ['addressClicks', 'address_clicks'],
  ['dailyTotalFollowers', 'daily_total_followers'],
  ['dailyNewFollowers', 'daily_new_followers'],
  ['dailyLostFollowers', 'daily_lost_followers'],
  ['followersCount', 'followers_count'],
  ['audienceActivity', 'audience_activity'],
  ['engagedAudience', 'engaged_audience'],
];

/** One post of business/video/list `videos[]`. */
export const VIDEO_FIELDS: FieldTable = [
  ['itemId', 'item_id'],
  ['mediaType', 'media_type'],
  ['isAd', 'is_ad'],
  ['thumbnailUrl', 'thumbnail_url'],
  ['shareUrl', 'share_url'],
  ['embedUrl', 'embed_url'],
  ['caption', 'caption'],
  ['videoDuration', 'video_duration'],
  ['likes', 'likes'],
  ['comments', 'comments'],
  ['shares', 'shares'],
  ['favorites', 'favorites'],
  ['createTime', 'create_time'],
  ['reach', 'reach'],
  ['videoViews', 'video_views'],
  ['totalTimeWatched', 'total_time_watched'],
  ['averageTimeWatched', 'average_time_watched'],
  ['fullVideoWatchedRate', 'full_video_watched_rate'],
  ['newFollowers', 'new_followers'],
  ['profileViews', 'profile_views'],
  ['websiteClicks', 'website_clicks'],
  ['phoneNumberClicks', 'phone_number_clicks'],
  ['leadSubmissions', 'lead_submissions'],
  ['appDownloadClicks', 'app_download_clicks'],
  ['emailClicks', 'email_clicks'],
  ['addressClicks', 'address_clicks'],
  ['videoViewRetention', 'video_view_retention'],
  ['impressionSources', 'impression_sources'],
  ['audienceGenders', 'audience_genders'],
  ['audienceCountries', 'audience_countries'],
  ['audienceCities', 'audience_cities'],
  ['audienceTypes', 'audience_types'],
  ['engagementLikes', 'engagement_likes'],
];

/** business/video/list's page: the list convention's `items`, and a cursor that is null on the last page (set by the service). */
export const VIDEO_LIST_FIELDS: FieldTable = [
  ['items', 'videos'],
  ['nextCursor', 'cursor'],
  ['hasMore', 'has_more'],
];

/** business/benchmark. */
export const BENCHMARK_FIELDS: FieldTable = [
  ['category', 'business_category'],
  ['averageLikes', 'average_likes'],
  ['averageComments', 'average_comments'],
  ['averageShares', 'average_shares'],
  ['averageVideoCount', 'average_video_count'],
  ['averageFollowerCount', 'average_follower_count'],
  ['averageFollowerGrowth', 'average_follower_growth'],
  ['averageEngagementRate', 'average_engagement_rate'],
  ['averageVideoViews', 'average_video_views'],
];

/** business/video/settings (official-api.md §3.4). */
export const VIDEO_SETTINGS_FIELDS: FieldTable = [
  ['privacyLevelOptions', 'privacy_level_options'],
  ['commentDisabled', 'comment_disabled'],
  ['duetDisabled', 'duet_disabled'],
  ['stitchDisabled', 'stitch_disabled'],
  ['maxVideoPostDurationSec', 'max_video_post_duration_sec'],
];

/** Official fields of business/get that land in `metrics[]` only (followers_count is both). */
export const DAILY_ONLY_FIELDS: ReadonlySet<string> = new Set(
  DAILY_METRIC_FIELDS.map(([, official]) => official).filter(
    (official) => official !== 'date' && !ACCOUNT_FIELDS.some(([, a]) => a === official),
  ),
);

/** business/get fields a caller may ask for: the account table (less the `metrics` container) and the daily one (less `date`). */
export const REQUESTABLE_ACCOUNT_FIELDS: FieldTable = [
  ...ACCOUNT_FIELDS.filter(([, official]) => official !== 'metrics'),
  ...DAILY_METRIC_FIELDS.filter(([, official]) => official !== 'date' && !ACCOUNT_FIELDS.some(([, a]) => a === official)),
];

/** Flattens each element of an official list of objects through its table. */
export function fromOfficialList(table: FieldTable, list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((item) =>
    typeof item === 'object' && item !== null && !Array.isArray(item) ? fromOfficial(table, item as Record<string, unknown>) : item,
  );
}
