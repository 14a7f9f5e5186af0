/**
 * The comment endpoints' field tables (official-api.md §5): service camelCase field ↔ official
 * snake_case path, one table per endpoint, naming the request fields and the answer's top level.
 * `account` is not tabled: it resolves to the seat, whose account id is sent as business_id.
 * Comment objects inside `comments` are flattened by the joining rule (`display_name` →
 * `displayName`, `reply_list` → `replyList`), the same rule the tables spell out at the top.
 */
import type { FieldTable } from '../mapping';

/** Paging and ordering, shared by both list endpoints. */
const LIST_PAGING: FieldTable = [
  ['status', 'status'],
  ['sortField', 'sort_field'],
  ['sortOrder', 'sort_order'],
  ['cursor', 'cursor'],
  ['maxCount', 'max_count'],
];

/** A list answer: one page of comments and where the next starts. */
const LIST_ANSWER: FieldTable = [
  ['comments', 'comments'],
  ['cursor', 'cursor'],
  ['hasMore', 'has_more'],
];

/** The content of a new comment or reply: text, an uploaded image, or both. */
const CONTENT: FieldTable = [
  ['text', 'text'],
  ['imageUri', 'image_uri'],
  ['imageWidth', 'image_width'],
  ['imageHeight', 'image_height'],
];

/**
 * The answer of both create endpoints beyond what the request already names (video_id, text, and
 * on reply/create comment_id, which the answer reuses for the new reply's id).
 */
const CREATED_ANSWER: FieldTable = [
  ['userId', 'user_id'],
  ['uniqueIdentifier', 'unique_identifier'],
  ['createTime', 'create_time'],
  ['imageUrl', 'image_url'],
];

/** GET …/comment/list → business/comment/list/. */
export const COMMENT_LIST_FIELDS: FieldTable = [
  ['videoId', 'video_id'],
  ['commentIds', 'comment_ids'],
  ['includeReplies', 'include_replies'],
  ...LIST_PAGING,
  ...LIST_ANSWER.filter(([service]) => service !== 'cursor'),
];

/** GET …/comment/reply/list → business/comment/reply/list/. */
export const COMMENT_REPLY_LIST_FIELDS: FieldTable = [
  ['videoId', 'video_id'],
  ['commentId', 'comment_id'],
  ...LIST_PAGING,
  ...LIST_ANSWER.filter(([service]) => service !== 'cursor'),
];

/** POST …/comment/create → business/comment/create/. */
export const COMMENT_CREATE_FIELDS: FieldTable = [['videoId', 'video_id'], ...CONTENT, ['commentId', 'comment_id'], ...CREATED_ANSWER];

/** POST …/comment/reply/create → business/comment/reply/create/. */
export const COMMENT_REPLY_CREATE_FIELDS: FieldTable = [
  ['videoId', 'video_id'],
  ['commentId', 'comment_id'],
  ...CONTENT,
  ['replyImageUrl', 'reply_image_url'],
  ['parentCommentId', 'parent_comment_id'],
  ...CREATED_ANSWER,
];

/** POST …/comment/like → business/comment/like/ (answers `{}`). */
export const COMMENT_LIKE_FIELDS: FieldTable = [
  ['commentId', 'comment_id'],
  ['action', 'action'],
];

/** POST …/comment/hide → business/comment/hide/ (answers `{}`). */
export const COMMENT_HIDE_FIELDS: FieldTable = [
  ['videoId', 'video_id'],
  ['commentId', 'comment_id'],
  ['action', 'action'],
];

/** POST …/comment/delete → business/comment/delete/ (answers `{}`). */
export const COMMENT_DELETE_FIELDS: FieldTable = [['commentId', 'comment_id']];
