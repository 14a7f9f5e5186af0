/**
 * Business API account insights (official-api.md §4): the account's profile with daily metrics
 * and demographics, its posts with their metrics, and category benchmarks. Typed in the official
 * wire shapes (snake_case); every field is optional because `fields` picks what comes back.
 */
import type { VplatClient } from './client';
import type { BusinessCategory } from '../../vocabulary';

export type AudienceAge = { age: '18-24' | '25-34' | '35-44' | '45-54' | '55+'; percentage: number };
export type AudienceGender = { gender: 'Female' | 'Male' | 'Other'; percentage: number };
export type AudienceCountry = { country: string; percentage: number };
export type AudienceCity = { city_name: string; percentage: number };

/** business/get `fields` (daily ones land in `metrics[]`; `followers_count` is both). */
export type BusinessField =
  | 'is_business_account'
  | 'profile_image'
  | 'username'
  | 'profile_deep_link'
  | 'display_name'
  | 'bio_description'
  | 'is_verified'
  | 'following_count'
  | 'followers_count'
  | 'total_likes'
  | 'videos_count'
  | 'video_views'
  | 'unique_video_views'
  | 'profile_views'
  | 'likes'
  | 'comments'
  | 'shares'
  | 'phone_number_clicks'
  | 'lead_submissions'
  | 'app_download_clicks'
  | 'bio_link_clicks'
  | 'email_clicks'
  | 'address_clicks'
  | 'daily_total_followers'
  | 'daily_new_followers'
  | 'daily_lost_followers'
  | 'audience_activity'
  | 'engaged_audience'
  | 'audience_ages'
  | 'audience_genders'
  | 'audience_countries'
  | 'audience_cities';

export interface BusinessGetQuery {
  business_id: string;
  /** YYYY-MM-DD, UTC, inclusive; default today-7; at most 60 days back. */
  start_date?: string;
  /** YYYY-MM-DD, UTC, inclusive; default today-1. */
  end_date?: string;
  /** Default ["display_name", "profile_image"]. */
  fields?: BusinessField[];
}

export interface DailyMetrics {
  /** YYYY-MM-DD (UTC). */
  date: string;
  video_views?: number;
  unique_video_views?: number;
  profile_views?: number;
  likes?: number;
  comments?: number;
  shares?: number;
  phone_number_clicks?: number;
  lead_submissions?: number;
  app_download_clicks?: number;
  bio_link_clicks?: number;
  email_clicks?: number;
  address_clicks?: number;
  daily_total_followers?: number;
  daily_new_followers?: number;
  daily_lost_followers?: number;
  followers_count?: number;
  audience_activity?: Array<{ hour: string; count: number }>;
  engaged_audience?: number;
}

export interface BusinessGetData {
  is_business_account?: boolean;
  /** Temporary URL (x-expires). */
  profile_image?: string;
  username?: string;
  profile_deep_link?: string;
  display_name?: string;
  bio_description?: string;
  is_verified?: boolean;
  following_count?: number;
  followers_count?: number;
  total_likes?: number;
  videos_count?: number;
  /** Present when a daily field was requested. */
  metrics?: DailyMetrics[];
  audience_ages?: AudienceAge[];
  audience_genders?: AudienceGender[];
  audience_countries?: AudienceCountry[];
  audience_cities?: AudienceCity[];
}

export type VideoField =
  | 'item_id'
  | 'media_type'
  | 'is_ad'
  | 'thumbnail_url'
  | 'share_url'
  | 'embed_url'
  | 'caption'
  | 'video_duration'
  | 'likes'
  | 'comments'
  | 'shares'
  | 'favorites'
  | 'create_time'
  | 'reach'
  | 'video_views'
  | 'total_time_watched'
  | 'average_time_watched'
  | 'full_video_watched_rate'
  | 'new_followers'
  | 'profile_views'
  | 'website_clicks'
  | 'phone_number_clicks'
  | 'lead_submissions'
  | 'app_download_clicks'
  | 'email_clicks'
  | 'address_clicks'
  | 'video_view_retention'
  | 'impression_sources'
  | 'audience_genders'
  | 'audience_countries'
  | 'audience_cities'
  | 'audience_types'
  | 'engagement_likes';

export interface VideoListQuery {
  business_id: string;
  /** Default ["item_id"]; must include item_id when asking for others. */
  fields?: VideoField[];
  /** `ad_post_only` applies only together with `video_ids`. */
  filters?: { video_ids?: string[]; ad_post_only?: boolean };
  /** UTC milliseconds; posts created before it. Default now. */
  cursor?: number;
  /** Default 10, at most 20; a page may be shorter even with has_more. */
  max_count?: number;
}

export interface Video {
  item_id: string;
  media_type?: 'VIDEO' | 'PHOTO';
  is_ad?: boolean;
  thumbnail_url?: string;
  share_url?: string;
  embed_url?: string;
  caption?: string;
  /** Seconds, 3 decimals. */
  video_duration?: number;
  likes?: number;
  comments?: number;
  shares?: number;
  favorites?: number;
  /** Unix seconds, as a string. */
  create_time?: string;
  reach?: number;
  video_views?: number;
  total_time_watched?: number;
  average_time_watched?: number;
  full_video_watched_rate?: number;
  new_followers?: number;
  profile_views?: number;
  website_clicks?: number;
  phone_number_clicks?: number;
  lead_submissions?: number;
  app_download_clicks?: number;
  email_clicks?: number;
  address_clicks?: number;
  video_view_retention?: Array<{ second: string; percentage: number }>;
  impression_sources?: Array<{ impression_source: string; percentage: number }>;
  audience_genders?: AudienceGender[];
  audience_countries?: AudienceCountry[];
  audience_cities?: AudienceCity[];
  audience_types?: Array<{ type: 'NEW_VIEWER' | 'RETURN_VIEWER' | 'FOLLOWER_PERCENT' | 'NON_FOLLOWER_PERCENT'; percentage: number }>;
  engagement_likes?: Array<{ second: string; percentage: number }>;
}

export interface VideoListData {
  videos: Video[];
  /** Pass back as `cursor` for the next (older) page. */
  cursor: number;
  has_more: boolean;
}

export { BUSINESS_CATEGORIES, type BusinessCategory } from '../../vocabulary';

export interface BenchmarkData {
  business_category: BusinessCategory;
  average_likes: number;
  average_comments: number;
  average_shares: number;
  average_video_count: number;
  average_follower_count: number;
  /** Over the last 30 days. */
  average_follower_growth: number;
  average_engagement_rate: number;
  average_video_views: number;
}

export function getBusinessAccount(client: VplatClient, accessToken: string, query: BusinessGetQuery): Promise<BusinessGetData> {
  return client.get<BusinessGetData>('business/get/', accessToken, { ...query });
}

export function listVideos(client: VplatClient, accessToken: string, query: VideoListQuery): Promise<VideoListData> {
  return client.get<VideoListData>('business/video/list/', accessToken, { ...query });
}

export function getBenchmark(
  client: VplatClient,
  accessToken: string,
  query: { business_id: string; business_category: BusinessCategory },
): Promise<BenchmarkData> {
  return client.get<BenchmarkData>('business/benchmark/', accessToken, { ...query });
}
