import { CommentService } from '../../../gen/vps/engagement/v1/comment_pb';
import { defineRoute, type RpcRoute } from '../../rpc-route';
import { okEnvelope } from '../../schemas/common';
import {
  CommentCreateBody,
  CommentCreatedJson,
  CommentDeleteBody,
  CommentHideBody,
  CommentLikeBody,
  CommentListQuery,
  CommentPageJson,
  CommentReplyCreateBody,
  CommentReplyListQuery,
  EmptyJson,
} from '../../schemas/comments';
import { BUSINESS } from './paths';

const COMMENT = `${BUSINESS}/comment`;

/** The answer is the official `data`, flattened by core's field table; nothing is reshaped here. */
const data = (res: { data?: Record<string, unknown> }) => res.data ?? {};

/** The comment routes under /v1/vplat/v1.3/business/, one per official endpoint. */
export const commentRoutes: RpcRoute[] = [
  defineRoute({
    method: 'GET',
    url: `${COMMENT}/list`,
    summary: "List the comments of one of the account's posts",
    rpc: CommentService.method.listComments,
    schema: { querystring: CommentListQuery, response: { 200: okEnvelope(CommentPageJson) } },
    toRequest: (req) => {
      const q = req.query;
      return { ...q, status: q.status ?? '', sortField: q.sortField ?? '', sortOrder: q.sortOrder ?? '', commentIds: q.commentIds ?? [] };
    },
    toData: data,
  }),
  defineRoute({
    method: 'GET',
    url: `${COMMENT}/reply/list`,
    summary: 'List the replies to a top-level comment',
    rpc: CommentService.method.listCommentReplies,
    schema: { querystring: CommentReplyListQuery, response: { 200: okEnvelope(CommentPageJson) } },
    toRequest: (req) => {
      const q = req.query;
      return { ...q, status: q.status ?? '', sortField: q.sortField ?? '', sortOrder: q.sortOrder ?? '' };
    },
    toData: data,
  }),
  defineRoute({
    method: 'POST',
    url: `${COMMENT}/create`,
    summary: 'Post a top-level comment as the account',
    rpc: CommentService.method.createComment,
    schema: { body: CommentCreateBody, response: { 200: okEnvelope(CommentCreatedJson) } },
    toRequest: (req) => req.body,
    toData: data,
  }),
  defineRoute({
    method: 'POST',
    url: `${COMMENT}/reply/create`,
    summary: 'Reply to a comment as the account',
    rpc: CommentService.method.createCommentReply,
    schema: { body: CommentReplyCreateBody, response: { 200: okEnvelope(CommentCreatedJson) } },
    toRequest: (req) => req.body,
    toData: data,
  }),
  defineRoute({
    method: 'POST',
    url: `${COMMENT}/like`,
    summary: 'Like (LIKE) or unlike (UNLIKE) a comment',
    rpc: CommentService.method.likeComment,
    schema: { body: CommentLikeBody, response: { 200: okEnvelope(EmptyJson) } },
    toRequest: (req) => req.body,
    toData: data,
  }),
  defineRoute({
    method: 'POST',
    url: `${COMMENT}/hide`,
    summary: 'Hide (HIDE) or restore (UNHIDE) a comment',
    rpc: CommentService.method.hideComment,
    schema: { body: CommentHideBody, response: { 200: okEnvelope(EmptyJson) } },
    toRequest: (req) => req.body,
    toData: data,
  }),
  defineRoute({
    method: 'POST',
    url: `${COMMENT}/delete`,
    summary: "Delete one of the account's own comments (others' can only be hidden)",
    rpc: CommentService.method.deleteComment,
    schema: { body: CommentDeleteBody, response: { 200: okEnvelope(EmptyJson) } },
    toRequest: (req) => req.body,
    toData: data,
  }),
];
