/**
 * The spec's field-mapping tables (service field → official field), plus the fields of the same
 * endpoints the spec leaves unnamed, each listed in docs/decisions/publishing.md and engagement.md. One table per endpoint.
 */
import type { FieldTable } from './mapping';

/** POST /v1/vplat/v1.3/business/video/publish → business/video/publish/. `account` resolves to business_id. */
export const VIDEO_PUBLISH_FIELDS: FieldTable = [
  ['videoUrl', 'video_url'],
  ['caption', 'post_info.caption'],
  ['isBrandOrganic', 'post_info.is_brand_organic'],
  ['isBrandedContent', 'post_info.is_branded_content'],
  ['disableComment', 'post_info.disable_comment'],
  ['disableDuet', 'post_info.disable_duet'],
  ['disableStitch', 'post_info.disable_stitch'],
  ['thumbnailOffset', 'post_info.thumbnail_offset'],
  // Beyond the spec's table: the official options a best-in-class wrapper should not hide.
  ['customThumbnailUrl', 'custom_thumbnail_url'],
  ['isAiGenerated', 'post_info.is_ai_generated'],
  ['draft', 'post_info.upload_to_draft'],
  ['locationId', 'post_info.location_id'],
  ['locationName', 'post_info.location_name'],
  ['musicSoundId', 'post_info.music_sound_info.music_sound_id'],
  ['musicSoundVolume', 'post_info.music_sound_info.music_sound_volume'],
  ['videoOriginalSoundVolume', 'post_info.music_sound_info.video_original_sound_volume'],
];

/** POST /v1/vplat/v1.3/business/photo/publish → business/photo/publish/. */
export const PHOTO_PUBLISH_FIELDS: FieldTable = [
  ['photoUrls', 'photo_images'],
  ['photoCoverIndex', 'photo_cover_index'],
  ['privacyLevel', 'post_info.privacy_level'],
  ['title', 'post_info.title'],
  ['caption', 'post_info.caption'],
  ['autoAddMusic', 'post_info.auto_add_music'],
  ['isBrandOrganic', 'post_info.is_brand_organic'],
  ['isBrandedContent', 'post_info.is_branded_content'],
  ['disableComment', 'post_info.disable_comment'],
  ['draft', 'post_info.is_draft'],
  ['musicSoundId', 'post_info.music_sound_info.music_sound_id'],
  ['locationId', 'post_info.location_id'],
  ['locationName', 'post_info.location_name'],
];

/** POST /v1/publish/tts → affiliate_creator/202607/videos. `accountId` selects the seat's token. */
export const SHOP_PUBLISH_FIELDS: FieldTable = [
  ['fileId', 'video_info.file_id'],
  ['title', 'video_info.title'],
  ['isAiGenerated', 'video_info.is_ai_generated'],
  ['coverUri', 'video_info.cover_uri'],
  ['coverTimestampMs', 'video_info.cover_timestamp_ms'],
  ['musicId', 'video_info.music_id'],
  ['productId', 'product_link_info.product_id'],
  ['productTitle', 'product_link_info.title'],
];

/** Publish status: the official status query's answer in service fields. */
export const PUBLISH_STATUS_FIELDS: FieldTable = [
  ['officialStatus', 'status'],
  ['postIds', 'post_ids'],
  ['reason', 'reason'],
];
