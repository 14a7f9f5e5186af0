/**
 * Request and response schemas of the comment routes: the official parameters of §5 in flat
 * camelCase (business_id becomes `account`, which names the seat), typed so a wrong type is 2001
 * naming the field. Limits the schema cannot count (text in UTF-16 units) are checked by core.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  HIDE_ACTIONS,
  LIKE_ACTIONS,
  LIST_STATUSES,
  MAX_COMMENT_IDS,
  MAX_COMMENT_TEXT,
  MAX_LIST_COUNT,
  SORT_FIELDS,
  SORT_ORDERS,
} from '../../core/services/comment.service';

const literals = <T extends string>(values: readonly T[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );

const Account = Type.String({ minLength: 1, maxLength: 200, description: 'The bound account: username or businessId' });
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });
const VideoId = Id('The post: its official video_id (the post id)');

const listPaging = {
  status: Type.Optional(literals(LIST_STATUSES, 'PUBLIC, or ALL (the official default) to include hidden comments')),
  sortField: Type.Optional(literals(SORT_FIELDS, "Order by; without it the platform's own order")),
  sortOrder: Type.Optional(literals(SORT_ORDERS, 'smart (the official default), asc or desc')),
  cursor: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, description: 'The cursor of the previous page; 0 for the first' }),
  ),
  maxCount: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_LIST_COUNT, description: `Page size, 1 to ${MAX_LIST_COUNT}; the official default is 20` }),
  ),
};

const content = {
  // Code points here, UTF-16 units in core: the schema bound only keeps absurd input out.
  text: Type.Optional(
    Type.String({ maxLength: MAX_COMMENT_TEXT * 2, description: `At most ${MAX_COMMENT_TEXT} characters; text or imageUri is required` }),
  ),
  imageUri: Type.Optional(
    Type.String({ minLength: 1, maxLength: 500, description: 'An image_uri from the official comment image upload' }),
  ),
  imageWidth: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100_000, description: "The uploaded image's width; required with imageUri" }),
  ),
  imageHeight: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100_000, description: "The uploaded image's height; required with imageUri" }),
  ),
};

export const CommentListQuery = Type.Object(
  {
    account: Account,
    videoId: VideoId,
    commentIds: Type.Optional(
      Type.Array(Id('A comment or reply id'), {
        maxItems: MAX_COMMENT_IDS,
        description: `At most ${MAX_COMMENT_IDS} ids, the parameter repeated`,
      }),
    ),
    includeReplies: Type.Optional(Type.Boolean({ description: 'Up to 3 replies under each top-level comment (default false)' })),
    ...listPaging,
  },
  { additionalProperties: false },
);
export type CommentListQuery = Static<typeof CommentListQuery>;

export const CommentReplyListQuery = Type.Object(
  { account: Account, videoId: VideoId, commentId: Id('A top-level, visible comment'), ...listPaging },
  { additionalProperties: false },
);
export type CommentReplyListQuery = Static<typeof CommentReplyListQuery>;

export const CommentCreateBody = Type.Object({ account: Account, videoId: VideoId, ...content }, { additionalProperties: false });
export type CommentCreateBody = Static<typeof CommentCreateBody>;

export const CommentReplyCreateBody = Type.Object(
  {
    account: Account,
    videoId: VideoId,
    commentId: Id('The comment to reply to; a reply to a reply attaches to its top-level comment'),
    ...content,
    replyImageUrl: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'A public JPG, JPEG, WebP or PNG URL to attach' }),
    ),
  },
  { additionalProperties: false },
);
export type CommentReplyCreateBody = Static<typeof CommentReplyCreateBody>;

export const CommentLikeBody = Type.Object(
  { account: Account, commentId: Id('The comment'), action: literals(LIKE_ACTIONS, 'LIKE or UNLIKE') },
  { additionalProperties: false },
);
export type CommentLikeBody = Static<typeof CommentLikeBody>;

export const CommentHideBody = Type.Object(
  { account: Account, videoId: VideoId, commentId: Id('The comment'), action: literals(HIDE_ACTIONS, 'HIDE, or UNHIDE to restore') },
  { additionalProperties: false },
);
export type CommentHideBody = Static<typeof CommentHideBody>;

export const CommentDeleteBody = Type.Object(
  { account: Account, commentId: Id("One of the account's own comments") },
  { additionalProperties: false },
);
export type CommentDeleteBody = Static<typeof CommentDeleteBody>;

/** The fields both create answers share; list items add counts, state and author. */
const createdFields = {
  commentId: Type.String(),
  videoId: Type.String(),
  userId: Type.String({ description: 'Deprecated by the platform; prefer uniqueIdentifier' }),
  uniqueIdentifier: Type.String(),
  createTime: Type.String({ description: 'Unix seconds, as a string (the official type)' }),
  text: Type.String(),
  imageUrl: Type.Optional(Type.String({ description: "Non-expiring URL of the comment's image" })),
  parentCommentId: Type.Optional(Type.String({ description: 'Replies only' })),
};

/** Open objects: a field the platform adds later still reaches the caller, flattened. */
const open = <T extends Record<string, TSchema>>(fields: T, description?: string) =>
  Type.Object(fields, { additionalProperties: true, ...(description ? { description } : {}) });

export const CommentCreatedJson = open(createdFields);

const listItemFields = {
  ...createdFields,
  likes: Type.Integer(),
  replies: Type.Integer(),
  owner: Type.Boolean({ description: 'Written by the account itself' }),
  liked: Type.Boolean({ description: 'Liked by the account' }),
  pinned: Type.Boolean(),
  status: Type.String({ description: 'PUBLIC or HIDDEN' }),
  username: Type.String(),
  displayName: Type.String(),
  profileImage: Type.String(),
};

export const CommentJson = open({
  ...listItemFields,
  replyList: Type.Optional(Type.Array(open(listItemFields), { description: 'With includeReplies: at most 3' })),
});

export const CommentPageJson = open({
  comments: Type.Array(CommentJson),
  cursor: Type.Integer({ description: 'Pass as cursor for the next page' }),
  hasMore: Type.Boolean(),
});

/** Like, hide and delete answer the official `{}`. */
export const EmptyJson = open({});
