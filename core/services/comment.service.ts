/**
 * Comments on the account's own posts (official-api.md §5), one pass-through per RPC: the
 * request's rules first (2001 naming our field, so a request the platform would refuse never
 * spends an upstream call), then the account's video seat (1007), then the official call with the
 * seat's token, its answer flattened by the endpoint's field table. Nothing here retries: creating
 * a comment is not idempotent, and an upstream failure (3001 with the official message, 3002 on
 * timeout) reaches the caller as it came.
 */
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  CommentService,
  CreateCommentReplyRequest,
  CreateCommentRequest,
  DeleteCommentRequest,
  HideCommentRequest,
  LikeCommentRequest,
  ListCommentRepliesRequest,
  ListCommentsRequest,
} from '../../gen/vps/engagement/v1/comment_pb';
import { customerOf } from '../context';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import { passThrough } from '../engagement/pass-through';
import { invalidField, type ApiError } from '../errors';
import type { Upstream } from '../upstream';
import type { FieldTable } from '../upstream/mapping';
import { toOfficial } from '../upstream/mapping';
import * as comments from '../upstream/vplat/comments';
import {
  COMMENT_CREATE_FIELDS,
  COMMENT_DELETE_FIELDS,
  COMMENT_HIDE_FIELDS,
  COMMENT_LIKE_FIELDS,
  COMMENT_LIST_FIELDS,
  COMMENT_REPLY_CREATE_FIELDS,
  COMMENT_REPLY_LIST_FIELDS,
} from '../upstream/vplat/comment-fields';

/**
 * 1,200 by the current official documents (older ones say 150); counted in UTF-16 code units,
 * as the emulator counts, so a text we accept is never refused upstream for its length.
 */
export const MAX_COMMENT_TEXT = 1200;
/** Official page size bounds: 1 to 30, default 20 (left to the platform when not given). */
export const MAX_LIST_COUNT = 30;
export const MAX_COMMENT_IDS = 30;
export const LIST_STATUSES = ['PUBLIC', 'ALL'] as const;
export const SORT_FIELDS = ['likes', 'replies', 'create_time'] as const;
export const SORT_ORDERS = ['asc', 'desc', 'smart'] as const;
export const LIKE_ACTIONS = ['LIKE', 'UNLIKE'] as const;
export const HIDE_ACTIONS = ['HIDE', 'UNHIDE'] as const;

/** One check of a request: the problem, naming the service field, or undefined. */
export type Rule = () => ApiError | undefined;

export function firstProblem(rules: Rule[]): ApiError | undefined {
  for (const rule of rules) {
    const problem = rule();
    if (problem) return problem;
  }
  return undefined;
}

export const required =
  (field: string, value: string): Rule =>
  () =>
    value === '' ? invalidField(field, 'is required') : undefined;

export const oneOf =
  (field: string, value: string, allowed: readonly string[], optional = false): Rule =>
  () =>
    (optional && value === '') || allowed.includes(value) ? undefined : invalidField(field, `must be one of ${allowed.join(', ')}`);

export const intRange =
  (field: string, value: number | undefined, min: number, max: number): Rule =>
  () =>
    value === undefined || (Number.isInteger(value) && value >= min && value <= max)
      ? undefined
      : invalidField(field, `must be an integer from ${min} to ${max}`);

/** Paging and ordering of both list endpoints. */
export function listRules(req: { status: string; sortField: string; sortOrder: string; cursor?: number; maxCount?: number }): Rule[] {
  return [
    oneOf('status', req.status, LIST_STATUSES, true),
    oneOf('sortField', req.sortField, SORT_FIELDS, true),
    oneOf('sortOrder', req.sortOrder, SORT_ORDERS, true),
    intRange('cursor', req.cursor, 0, 2 ** 31 - 1),
    intRange('maxCount', req.maxCount, 1, MAX_LIST_COUNT),
  ];
}

/** Text, an uploaded image with its size, or both (a reply may carry a public image URL instead). */
export function contentRules(
  req: { text: string; imageUri: string; imageWidth?: number; imageHeight?: number },
  replyImageUrl = '',
): Rule[] {
  return [
    () => (req.text.length > MAX_COMMENT_TEXT ? invalidField('text', `must be at most ${MAX_COMMENT_TEXT} characters`) : undefined),
    () =>
      req.text === '' && req.imageUri === '' && replyImageUrl === '' ? invalidField('text', 'text or imageUri is required') : undefined,
    () => (req.imageUri !== '' && req.imageWidth === undefined ? invalidField('imageWidth', 'is required with imageUri') : undefined),
    () => (req.imageUri !== '' && req.imageHeight === undefined ? invalidField('imageHeight', 'is required with imageUri') : undefined),
    intRange('imageWidth', req.imageWidth, 1, 100_000),
    intRange('imageHeight', req.imageHeight, 1, 100_000),
  ];
}

/**
 * The official request from the service fields: proto3's empty strings are "not given" and are not
 * sent, so the platform applies its own defaults; business_id is the seat's account.
 */
export function officialRequest<T>(table: FieldTable, fields: Record<string, unknown>, businessId: string): T {
  const given = Object.fromEntries(
    Object.entries(fields).filter(([, v]) => v !== '' && v !== undefined && !(Array.isArray(v) && v.length === 0)),
  );
  return toOfficial(table, given, { business_id: businessId }) as T;
}

function check(rules: Rule[]): void {
  const problem = firstProblem(rules);
  if (problem) throw problem;
}

/** The request's own fields, without protobuf-es's `$typeName` and `account`. */
function fieldsOf(req: { account: string }): Record<string, unknown> {
  const { account: _account, $typeName: _typeName, ...fields } = req as { account: string; $typeName?: string } & Record<string, unknown>;
  return fields;
}

export class CommentHandlers implements ServiceImpl<typeof CommentService> {
  constructor(readonly deps: { db: Db; sealedBox: SealedBox; upstream: Upstream }) {}

  private run<T>(ctx: HandlerContext, req: { account: string }, table: FieldTable, call: (token: string, body: T) => Promise<object>) {
    const { customerId } = customerOf(ctx);
    return passThrough(
      this.deps,
      { customerId, account: req.account },
      (token, seat) => call(token, officialRequest<T>(table, fieldsOf(req), seat.accountId)),
      table,
    );
  }

  async listComments(req: ListCommentsRequest, ctx: HandlerContext) {
    check([
      required('videoId', req.videoId),
      () => (req.commentIds.length > MAX_COMMENT_IDS ? invalidField('commentIds', `must name at most ${MAX_COMMENT_IDS} ids`) : undefined),
      ...listRules(req),
    ]);
    return this.run<comments.CommentListQuery>(ctx, req, COMMENT_LIST_FIELDS, (token, q) =>
      comments.listComments(this.deps.upstream.vplat, token, q),
    );
  }

  async listCommentReplies(req: ListCommentRepliesRequest, ctx: HandlerContext) {
    check([required('videoId', req.videoId), required('commentId', req.commentId), ...listRules(req)]);
    return this.run<comments.CommentReplyListQuery>(ctx, req, COMMENT_REPLY_LIST_FIELDS, (token, q) =>
      comments.listCommentReplies(this.deps.upstream.vplat, token, q),
    );
  }

  async createComment(req: CreateCommentRequest, ctx: HandlerContext) {
    check([required('videoId', req.videoId), ...contentRules(req)]);
    return this.run<comments.CommentCreateRequest>(ctx, req, COMMENT_CREATE_FIELDS, (token, b) =>
      comments.createComment(this.deps.upstream.vplat, token, b),
    );
  }

  async createCommentReply(req: CreateCommentReplyRequest, ctx: HandlerContext) {
    check([required('videoId', req.videoId), required('commentId', req.commentId), ...contentRules(req, req.replyImageUrl)]);
    return this.run<comments.CommentReplyCreateRequest>(ctx, req, COMMENT_REPLY_CREATE_FIELDS, (token, b) =>
      comments.createCommentReply(this.deps.upstream.vplat, token, b),
    );
  }

  async likeComment(req: LikeCommentRequest, ctx: HandlerContext) {
    check([required('commentId', req.commentId), oneOf('action', req.action, LIKE_ACTIONS)]);
    return this.run<Parameters<typeof comments.likeComment>[2]>(ctx, req, COMMENT_LIKE_FIELDS, (token, b) =>
      comments.likeComment(this.deps.upstream.vplat, token, b),
    );
  }

  async hideComment(req: HideCommentRequest, ctx: HandlerContext) {
    check([required('videoId', req.videoId), required('commentId', req.commentId), oneOf('action', req.action, HIDE_ACTIONS)]);
    return this.run<Parameters<typeof comments.hideComment>[2]>(ctx, req, COMMENT_HIDE_FIELDS, (token, b) =>
      comments.hideComment(this.deps.upstream.vplat, token, b),
    );
  }

  /** Only the account's own comments: the platform refuses others' (3001 with its message); hide those instead. */
  async deleteComment(req: DeleteCommentRequest, ctx: HandlerContext) {
    check([required('commentId', req.commentId)]);
    return this.run<Parameters<typeof comments.deleteComment>[2]>(ctx, req, COMMENT_DELETE_FIELDS, (token, b) =>
      comments.deleteComment(this.deps.upstream.vplat, token, b),
    );
  }
}
