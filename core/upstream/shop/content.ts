/**
 * The creator shoppable-content endpoints of the shop platform, one typed function each, with the
 * official request and response field names. Flow: products (and optionally music, a cover photo
 * and a precheck) → upload the video → post (v202607) → poll the status. Every failure arrives as
 * an UpstreamError from the transport; nothing here retries, because a post consumes its file id
 * and must not be sent twice blindly.
 */
import type { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { FormData } from '../http';
import { streamedFileForm, type StreamedForm } from '../streamed-form';
import type { ShopClient } from './client';

export const SHOP_CONTENT_PATHS = {
  videoFiles: '/affiliate_creator/202505/videos/video_files',
  photoFiles: '/affiliate_creator/202511/photos/photo_files',
  shopProducts: '/affiliate_creator/202509/shop_products',
  musicSearch: '/affiliate_creator/202602/music/search',
  precheckTask: '/affiliate_creator/202511/videos/precheck_task',
  precheckTasks: '/affiliate_creator/202601/videos/precheck_tasks',
  videos: '/affiliate_creator/202607/videos',
  videoStatus: (videoId: string) => `/affiliate_creator/202509/videos/${encodeURIComponent(videoId)}/status`,
  profiles: '/affiliate_creator/202508/profiles',
} as const;

/** A file to upload: whole in memory, or streamed (then `size`, if known, avoids chunked encoding). */
export type UploadFile =
  | { fileName: string; contentType?: string; bytes: Uint8Array }
  | { fileName: string; contentType?: string; stream: Readable | ReadableStream<Uint8Array>; size?: number };

export interface UploadOptions {
  /** Total time allowed for the upload, overriding the client's default (large videos take longer). */
  totalMs?: number;
}

/** The form of one file in the field `data`; a streamed file is sent as it arrives, never held whole. */
function formWith(file: UploadFile): FormData | StreamedForm {
  const contentType = file.contentType ?? 'application/octet-stream';
  if ('stream' in file) return streamedFileForm('data', { ...file, contentType });
  const form = new FormData();
  form.append('data', new Blob([file.bytes], { type: contentType }), file.fileName);
  return form;
}

// ---- a. Upload Shoppable Video File (202505) ----

export interface UploadVideoFileData {
  /** `id` is the `file_id` a post consumes (once). `md5` is upper-case hex. */
  video_file: { id: string; md5: string };
}

/** MP4, MOV, MKV, WMV, WEBM, AVI, 3GP, FLV or MPEG, at most 100 MB. */
export function uploadVideoFile(
  client: ShopClient,
  accessToken: string,
  file: UploadFile,
  opts: UploadOptions = {},
): Promise<UploadVideoFileData> {
  return client.upload<UploadVideoFileData>(SHOP_CONTENT_PATHS.videoFiles, accessToken, formWith(file), opts.totalMs);
}

// ---- c. Upload Shoppable Photo File (202511) ----

export interface UploadPhotoFileData {
  /** `photo_uri` is the post's `video_info.cover_uri`. */
  photo_file: { photo_uri: string };
}

/** JPG, PNG, WEBP, HEIC or BMP, at most 10 MB, aspect ratio 9:16 to 16:9. */
export function uploadPhotoFile(
  client: ShopClient,
  accessToken: string,
  file: UploadFile,
  opts: UploadOptions = {},
): Promise<UploadPhotoFileData> {
  return client.upload<UploadPhotoFileData>(SHOP_CONTENT_PATHS.photoFiles, accessToken, formWith(file), opts.totalMs);
}

// ---- d. Get Shop Products (202509) ----

export type ShopProductSortField = 'PRODUCT_ID' | 'PRICE' | 'SALE';
export type AddedStatus = 'ADDABLE' | 'ADDED' | 'REJECTED';

export interface GetShopProductsQuery {
  /** 1 to 100. */
  page_size: number;
  page_token?: string;
  title_keyword?: string;
  /** Default PRODUCT_ID. */
  sort_field?: ShopProductSortField;
  /** Default DESC. */
  sort_order?: 'ASC' | 'DESC';
}

export interface ShopProduct {
  id: string;
  title: string;
  /** `amount` has two decimals. */
  price: { amount: string; currency: string };
  added_status: AddedStatus;
  brand_name: string;
  images: Array<{ url: string; width: number; height: number }>;
  sales_count: number;
}

export interface GetShopProductsData {
  products: ShopProduct[];
  total_count: number;
  /** Empty on the last page. */
  next_page_token: string;
}

export function getShopProducts(client: ShopClient, accessToken: string, query: GetShopProductsQuery): Promise<GetShopProductsData> {
  return client.get<GetShopProductsData>(SHOP_CONTENT_PATHS.shopProducts, accessToken, {
    page_size: String(query.page_size),
    page_token: query.page_token,
    title_keyword: query.title_keyword,
    sort_field: query.sort_field,
    sort_order: query.sort_order,
  });
}

// ---- f. Search Music (202602) ----

export interface SearchMusicQuery {
  keyword: string;
  /** From the first page; required with `page_token` on every later page. */
  search_id?: string;
  page_token?: string;
  /** Sent as a string, as the platform declares it. */
  page_size?: number | string;
  /** ISO 3166-1 alpha-2. */
  region?: string;
  /** BCP 47. */
  language?: string;
}

export interface Music {
  id: string;
  title: string;
  author: string;
  cover_thumb: { url_list: string[] };
  /** Seconds, as a string. */
  duration: string;
  play_url: { url_list: string[] };
}

/**
 * Pages are irregular: one may hold fewer items than `page_size` while `has_more` is true, the last
 * may repeat an item of the previous one, and `next_page_token` may be set when `has_more` is
 * false. Page on `has_more` and de-duplicate by `id`.
 */
export interface SearchMusicData {
  music: Music[];
  next_page_token: string;
  has_more: boolean;
  search_id: string;
}

export function searchMusic(client: ShopClient, accessToken: string, query: SearchMusicQuery): Promise<SearchMusicData> {
  return client.get<SearchMusicData>(SHOP_CONTENT_PATHS.musicSearch, accessToken, {
    keyword: query.keyword,
    search_id: query.search_id,
    page_token: query.page_token,
    page_size: query.page_size === undefined ? undefined : String(query.page_size),
    region: query.region,
    language: query.language,
  });
}

// ---- g. Precheck Video Content (202511) ----

export interface PrecheckVideoContentBody {
  video_info: { file_id: string };
  /** `title` is the anchor text: at most 30 characters, no punctuation or emoji. */
  product_link_info: { product_id: string; title: string };
}

export interface PrecheckVideoContentData {
  precheck: { task_id: string };
}

/** Does not consume the file id; limited to 50 a day per creator (170001019). */
export function submitPrecheck(client: ShopClient, accessToken: string, body: PrecheckVideoContentBody): Promise<PrecheckVideoContentData> {
  return client.post<PrecheckVideoContentData>(SHOP_CONTENT_PATHS.precheckTask, accessToken, body);
}

// ---- h. Get Shoppable Video Precheck Result (202601) ----

export type CheckStatus = 'PROCESSING' | 'SUCCESS' | 'FAIL';

export interface PrecheckResultData {
  precheck_task: {
    id: string;
    violation_check_result: { status: CheckStatus; issues?: Array<{ risk?: string; suggestions?: string }> };
    good_quality_check_result: { status: CheckStatus; issues?: Array<{ code?: string; suggestions?: string }> };
  };
}

export function getPrecheckResult(client: ShopClient, accessToken: string, taskId: string): Promise<PrecheckResultData> {
  return client.get<PrecheckResultData>(`${SHOP_CONTENT_PATHS.precheckTasks}/${encodeURIComponent(taskId)}`, accessToken);
}

// ---- i. Post Shoppable Video (202607) ----

export interface PostVideoBody {
  video_info: {
    file_id: string;
    /** The caption, at most 4,000 UTF-16 code units. */
    title: string;
    /** From uploadPhotoFile; wins over `cover_timestamp_ms` when both are sent. */
    cover_uri?: string;
    cover_timestamp_ms?: number;
    /** From searchMusic. */
    music_id?: string;
    is_ai_generated?: boolean;
  };
  product_link_info: { product_id: string; title: string };
}

export interface PostVideoData {
  /** The handle of getVideoStatus. */
  video: { id: string };
  /** Free text such as "3/day"; absent when no quota applies. */
  quota?: string;
}

/** Consumes the file id, even when the post later fails: never resend the same body blindly. */
export function postVideo(client: ShopClient, accessToken: string, body: PostVideoBody): Promise<PostVideoData> {
  return client.post<PostVideoData>(SHOP_CONTENT_PATHS.videos, accessToken, body);
}

// ---- k. Get Shoppable Video Status (202509) ----

export interface VideoStatusData {
  video: {
    id: string;
    post_status: 'PROCESSING' | 'SUCCESS' | 'FAIL';
    /** Unix seconds, when SUCCESS. */
    post_time?: number;
  };
}

export function getVideoStatus(client: ShopClient, accessToken: string, videoId: string): Promise<VideoStatusData> {
  return client.get<VideoStatusData>(SHOP_CONTENT_PATHS.videoStatus(videoId), accessToken);
}

// ---- l. Get Creator Profile (202508) ----

export interface CreatorProfileData {
  avatar?: { url: string; width: number; height: number };
  username: string;
  selection_region?: string;
  register_region?: string;
  seller_type?: string;
  permissions?: string[];
  user_type?: string;
  creator_user_open_id: string;
}

export function getCreatorProfile(client: ShopClient, accessToken: string): Promise<CreatorProfileData> {
  return client.get<CreatorProfileData>(SHOP_CONTENT_PATHS.profiles, accessToken);
}
