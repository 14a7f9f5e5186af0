/** Business API publishing endpoints, in the official wire shapes (snake_case). */
import type { VplatClient } from './client';
import type { PrivacyLevel } from '../../vocabulary';

export interface MusicSoundInfo {
  music_sound_id: string;
  music_sound_volume?: number;
  music_sound_start?: number;
  music_sound_end?: number;
  video_original_sound_volume?: number;
}

export interface VideoPostInfo {
  caption?: string;
  is_brand_organic?: boolean;
  is_branded_content?: boolean;
  tto_invite_link?: string;
  disable_comment?: boolean;
  disable_duet?: boolean;
  disable_stitch?: boolean;
  thumbnail_offset?: number;
  is_ai_generated?: boolean;
  upload_to_draft?: boolean;
  location_id?: string;
  location_name?: string;
  is_ads_only?: boolean;
  music_sound_info?: MusicSoundInfo;
}

export interface VideoPublishRequest {
  business_id: string;
  video_url: string;
  custom_thumbnail_url?: string;
  post_info: VideoPostInfo;
}

export { PRIVACY_LEVELS, type PrivacyLevel } from '../../vocabulary';

export interface PhotoPublishRequest {
  business_id: string;
  photo_images: string[];
  photo_cover_index?: number;
  post_info: {
    privacy_level: PrivacyLevel;
    title?: string;
    caption?: string;
    auto_add_music?: boolean;
    is_brand_organic?: boolean;
    is_branded_content?: boolean;
    is_draft?: boolean;
    disable_comment?: boolean;
    music_sound_info?: { music_sound_id: string };
    location_id?: string;
    location_name?: string;
  };
}

export interface PublishResponse {
  share_id: string;
}

export type OfficialPublishStatus = 'PROCESSING_DOWNLOAD' | 'PUBLISH_COMPLETE' | 'FAILED' | 'SEND_TO_USER_INBOX' | (string & {});

export interface PublishStatusResponse {
  status: OfficialPublishStatus;
  post_ids?: string[];
  reason?: string;
}

export interface VideoSettingsResponse {
  privacy_level_options: PrivacyLevel[];
  comment_disabled: boolean;
  duet_disabled: boolean;
  stitch_disabled: boolean;
  max_video_post_duration_sec: number;
}

export interface HashtagSuggestionResponse {
  suggestions: Array<{ name: string; view_count: number }>;
}

export interface LocationSearchResponse {
  locations: Array<{ location_name: string; location_id: string; location_address: string }>;
}

export function publishVideo(client: VplatClient, accessToken: string, body: VideoPublishRequest): Promise<PublishResponse> {
  return client.post('business/video/publish/', accessToken, body);
}

export function publishPhoto(client: VplatClient, accessToken: string, body: PhotoPublishRequest): Promise<PublishResponse> {
  return client.post('business/photo/publish/', accessToken, body);
}

export function getPublishStatus(
  client: VplatClient,
  accessToken: string,
  query: { business_id: string; publish_id: string },
): Promise<PublishStatusResponse> {
  return client.get('business/publish/status/', accessToken, query);
}

export function getVideoSettings(client: VplatClient, accessToken: string, query: { business_id: string }): Promise<VideoSettingsResponse> {
  return client.get('business/video/settings/', accessToken, query);
}

export function suggestHashtags(
  client: VplatClient,
  accessToken: string,
  query: { business_id: string; keyword: string; language?: string },
): Promise<HashtagSuggestionResponse> {
  return client.get('business/hashtag/suggestion/', accessToken, query);
}

export function searchLocations(
  client: VplatClient,
  accessToken: string,
  query: { business_id: string; search_query: string },
): Promise<LocationSearchResponse> {
  return client.get('business/publish/location/', accessToken, query);
}
