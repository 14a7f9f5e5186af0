/**
 * Business API comment endpoints on the account's own posts (official-api.md §5), one typed
 * function each, in the official wire shapes (snake_case). Ids are strings here; only the
 * `comment.update` webhook carries them as numbers. Nothing here retries: a create or reply is
 * not idempotent, and failures arrive as UpstreamError from the transport.
 */
import { FormData } from '../http';
import type { VplatClient } from './client';

export type CommentStatus = 'PUBLIC' | 'HIDDEN';

/** A comment as the create endpoints answer it; list items add counts, state and author. */
export interface CommentCreateData {
  comment_id: string;
  video_id: string;
  /** Deprecated by the platform; prefer unique_identifier. */
  user_id: string;
  unique_identifier: string;
  /** Unix seconds, as a string. */
  create_time: string;
  text: string;
  /** Non-expiring URL of the comment's image, when it has one. */
  image_url?: string;
  /** Replies only. */
  parent_comment_id?: string;
}

export interface Comment extends CommentCreateData {
  likes: number;
  replies: number;
  /** Written by the owner of the post (the account itself). */
  owner: boolean;
  /** Liked by the owner of the post. */
  liked: boolean;
  pinned: boolean;
  status: CommentStatus;
  username: string;
  display_name: string;
  profile_image: string;
  /** Top-level comments only, when include_replies was true: at most 3. */
  reply_list?: Comment[];
}

export interface CommentListPaging {
  /** `ALL` (default) includes hidden comments. */
  status?: 'PUBLIC' | 'ALL';
  /** Without it the order is the platform's own. */
  sort_field?: 'likes' | 'replies' | 'create_time';
  sort_order?: 'asc' | 'desc' | 'smart';
  /** The `cursor` of the previous page; 0 for the first. */
  cursor?: number;
  /** 1–30, default 20. */
  max_count?: number;
}

export interface CommentListQuery extends CommentListPaging {
  business_id: string;
  video_id: string;
  /** At most 30; may name replies too. */
  comment_ids?: string[];
  include_replies?: boolean;
}

export interface CommentReplyListQuery extends CommentListPaging {
  business_id: string;
  video_id: string;
  /** A top-level, visible comment. */
  comment_id: string;
}

export interface CommentListData {
  comments: Comment[];
  cursor: number;
  has_more: boolean;
}

/** Text, an uploaded image (image_uri with its size), or both. */
export interface CommentContent {
  /** At most 1,200 characters (older documentation: 150). */
  text?: string;
  image_uri?: string;
  image_width?: number;
  image_height?: number;
}

export interface CommentCreateRequest extends CommentContent {
  business_id: string;
  video_id: string;
}

export interface CommentReplyCreateRequest extends CommentContent {
  business_id: string;
  video_id: string;
  comment_id: string;
  /** A verified public URL of a JPG, JPEG, WebP or PNG image. */
  reply_image_url?: string;
}

export interface CommentImageFile {
  bytes: Uint8Array;
  fileName: string;
  /** image/jpeg, image/png or image/webp. */
  contentType: string;
}

export interface CommentImageUploadData {
  image_uri: string;
  width: number;
  height: number;
}

export function listComments(client: VplatClient, accessToken: string, query: CommentListQuery): Promise<CommentListData> {
  return client.get<CommentListData>('business/comment/list/', accessToken, { ...query });
}

export function listCommentReplies(client: VplatClient, accessToken: string, query: CommentReplyListQuery): Promise<CommentListData> {
  return client.get<CommentListData>('business/comment/reply/list/', accessToken, { ...query });
}

export function createComment(client: VplatClient, accessToken: string, body: CommentCreateRequest): Promise<CommentCreateData> {
  return client.post<CommentCreateData>('business/comment/create/', accessToken, body);
}

export function createCommentReply(client: VplatClient, accessToken: string, body: CommentReplyCreateRequest): Promise<CommentCreateData> {
  return client.post<CommentCreateData>('business/comment/reply/create/', accessToken, body);
}

export function likeComment(
  client: VplatClient,
  accessToken: string,
  body: { business_id: string; comment_id: string; action: 'LIKE' | 'UNLIKE' },
): Promise<Record<string, never>> {
  return client.post<Record<string, never>>('business/comment/like/', accessToken, body);
}

export function hideComment(
  client: VplatClient,
  accessToken: string,
  body: { business_id: string; video_id: string; comment_id: string; action: 'HIDE' | 'UNHIDE' },
): Promise<Record<string, never>> {
  return client.post<Record<string, never>>('business/comment/hide/', accessToken, body);
}

/** Only the account's own comments can be deleted; others' can be hidden. */
export function deleteComment(
  client: VplatClient,
  accessToken: string,
  body: { business_id: string; comment_id: string },
): Promise<Record<string, never>> {
  return client.post<Record<string, never>>('business/comment/delete/', accessToken, body);
}

/** JPG, JPEG, WebP or PNG, at most 5 MB, from 360x360 up to 1080x1920 (or 1920x1080) pixels. */
export function uploadCommentImage(
  client: VplatClient,
  accessToken: string,
  businessId: string,
  file: CommentImageFile,
): Promise<CommentImageUploadData> {
  const form = new FormData();
  form.append('business_id', businessId);
  form.append('image_file', new Blob([file.bytes], { type: file.contentType }), file.fileName);
  return client.upload<CommentImageUploadData>('business/comment/image/upload/', accessToken, form);
}
