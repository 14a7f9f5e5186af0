/**
 * The comment endpoints of the Business API (official-api.md §5) on the account's own posts, the
 * `comment.update` webhook each change pushes (§7.4), the control route that injects a viewer's
 * comment, and the public addresses of comment images and placeholder pictures.
 *
 * Interpretations of the reference, where it is silent or conflicting:
 * - Text limit: 1,200 characters (current docs); older docs and SDKs say 150.
 * - No sort_field means "random" officially: a stable pseudo-random order here, so pages do not
 *   shift between calls. `smart` sorts descending by the sort_field when one is given.
 * - `cursor` is an offset into the ordered list; `max_count` pages never come back short.
 * - A reply to a reply is attached to the top-level comment, as the app threads them.
 * - Replies of a hidden comment cannot be listed or added to (40002 naming comment_id).
 * - HIDE on a hidden comment (or UNHIDE on a public one) succeeds without a webhook; LIKE and
 *   UNLIKE never push one (comment.update has no such action).
 * - Deleting a top-level comment removes its replies too, with one `delete` event for the comment.
 */
import type { FastifyInstance } from 'fastify';
import type { Account } from '../accounts';
import { officialRoute, requireOwnBusiness, type SandboxContext } from '../context';
import { ControlError, controlRoutes, requireAccount } from '../control';
import { objectBody } from '../params';
import { BUSINESS, OfficialError } from '../official-error';
import { Params } from '../params';
import { stableNumber } from '../posts';
import { IMAGE_CONTENT_TYPES, imageInfo, type ImageFormat } from '../../core/media/formats';
import { solidPng } from '../solid-png';
import { commentStoreOf, personFrom, pictureUrl, type CommentStore, type StoredComment } from './comment-store';
import { pushSummary, type PushRecord } from '../webhooks';
import { readMultipart } from './uploads';

const API = '/open_api/v1.3/business/comment';
const MAX_TEXT = 1200;
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const COMMENT_IMAGE_FORMATS: readonly ImageFormat[] = ['JPEG', 'PNG', 'WEBP'];
const SORT_FIELDS = ['likes', 'replies', 'create_time'] as const;
type SortField = (typeof SORT_FIELDS)[number];
type CommentAction = 'insert' | 'delete' | 'set_to_hidden' | 'set_to_public';

interface ListView {
  status: 'PUBLIC' | 'ALL';
  sortField?: SortField;
  sortOrder: 'asc' | 'desc' | 'smart';
  cursor: number;
  maxCount: number;
}

function listView(q: Params): ListView {
  return {
    status: (q.string('status', { oneOf: ['PUBLIC', 'ALL'] }) ?? 'ALL') as ListView['status'],
    sortField: q.string('sort_field', { oneOf: SORT_FIELDS }) as SortField | undefined,
    sortOrder: (q.string('sort_order', { oneOf: ['asc', 'desc', 'smart'] }) ?? 'smart') as ListView['sortOrder'],
    cursor: q.integer('cursor', { min: 0 }) ?? 0,
    maxCount: q.integer('max_count', { min: 1, max: 30 }) ?? 20,
  };
}

function requiredInteger(p: Params, name: string, opts: { min?: number; max?: number }): number {
  const v = p.integer(name, opts);
  if (v === undefined) throw BUSINESS.missing(name);
  return v;
}

function checkUrl(field: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw BUSINESS.invalid(field, 'Not a valid URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw BUSINESS.invalid(field, 'Not a valid URL.');
}

export function registerComments(app: FastifyInstance, ctx: SandboxContext): void {
  const store = commentStoreOf(ctx);

  const replyCount = (openId: string, c: StoredComment) => (c.parentCommentId ? 0 : store.replies(openId, c).length);

  /** A comment as the create endpoints answer it; list items add counts, state and author. */
  const created = (c: StoredComment) => ({
    comment_id: c.commentId,
    video_id: c.videoId,
    user_id: c.author.userId,
    unique_identifier: c.author.uniqueIdentifier,
    create_time: String(c.createTime),
    text: c.text,
    ...(c.imageUrl ? { image_url: c.imageUrl } : {}),
    ...(c.parentCommentId ? { parent_comment_id: c.parentCommentId } : {}),
  });

  const wire = (openId: string, c: StoredComment, replyList?: StoredComment[]): Record<string, unknown> => ({
    ...created(c),
    likes: c.likes,
    replies: replyCount(openId, c),
    owner: c.owner,
    liked: c.liked,
    pinned: false,
    status: c.hidden ? 'HIDDEN' : 'PUBLIC',
    username: c.author.username,
    display_name: c.author.displayName,
    profile_image: pictureUrl(ctx, `avatar:${c.author.uniqueIdentifier}`),
    ...(replyList ? { reply_list: replyList.map((r) => wire(openId, r)) } : {}),
  });

  /** Filters, orders and pages comments as a list request asks. */
  const arrange = (openId: string, comments: StoredComment[], view: ListView) => {
    const visible = comments.filter((c) => !c.deleted && (view.status === 'ALL' || !c.hidden));
    const key: (c: StoredComment) => number = view.sortField
      ? {
          likes: (c: StoredComment) => c.likes,
          replies: (c: StoredComment) => replyCount(openId, c),
          create_time: (c: StoredComment) => c.createTime,
        }[view.sortField]
      : (c) => stableNumber(`order:${c.commentId}`, 2 ** 31);
    const direction = view.sortField && view.sortOrder === 'asc' ? 1 : -1;
    return visible.sort((a, b) => direction * (key(a) - key(b)) || a.commentId.localeCompare(b.commentId));
  };

  const page = (openId: string, ordered: StoredComment[], view: ListView, includeReplies: boolean) => {
    const slice = ordered.slice(view.cursor, view.cursor + view.maxCount);
    return {
      comments: slice.map((c) =>
        wire(openId, c, includeReplies && !c.parentCommentId ? arrange(openId, store.replies(openId, c), view).slice(0, 3) : undefined),
      ),
      cursor: view.cursor + slice.length,
      has_more: view.cursor + slice.length < ordered.length,
    };
  };

  const notify = (openId: string, c: StoredComment, action: CommentAction) =>
    ctx.webhooks.push(
      'comment.update',
      openId,
      {
        // Numbers, as the platform sends them; see the id note in comment-store.ts for why they stay exact.
        comment_id: Number(c.commentId),
        video_id: Number(c.videoId),
        // As the reference has it: replies only. The service's event gives a top-level comment 0.
        ...(c.parentCommentId ? { parent_comment_id: Number(c.parentCommentId) } : {}),
        comment_type: c.parentCommentId ? 'reply' : 'comment',
        comment_action: action,
        unique_identifier: c.author.uniqueIdentifier,
        timestamp: Math.floor(ctx.clock.now()),
        // Conflict: SK says the event has no text; PBW schemas and fixtures include it. Sent on inserts.
        ...(action === 'insert' ? { text: c.text } : {}),
      },
      { videoId: c.videoId },
    );

  const threadOf = (account: Account, videoId: string) => {
    const thread = store.thread(account.openId, videoId);
    if (!thread) throw BUSINESS.notFound(`Video ${videoId}`);
    return thread;
  };

  const commentOf = (account: Account, commentId: string, videoId?: string) => {
    const comment = store.find(account.openId, commentId);
    if (!comment || (videoId !== undefined && comment.videoId !== videoId)) {
      throw BUSINESS.notFound(videoId === undefined ? `Comment ${commentId}` : `Comment ${commentId} on video ${videoId}`);
    }
    return comment;
  };

  /** The text and image of a new comment or reply, as create and reply/create take them. */
  const content = (account: Account, b: Params, extraImageUrl?: string) => {
    const text = b.string('text', { max: MAX_TEXT });
    const imageUri = b.string('image_uri');
    let imageUrl = extraImageUrl;
    if (imageUri !== undefined) {
      requiredInteger(b, 'image_width', { min: 1 });
      requiredInteger(b, 'image_height', { min: 1 });
      if (!store.image(account.openId, imageUri)) {
        throw BUSINESS.invalid('image_uri', 'Unknown image_uri: upload the image with business/comment/image/upload/ first.');
      }
      imageUrl = `${ctx.baseUrl()}/_sandbox/cdn/comment-image/${imageUri}`;
    }
    if (text === undefined && imageUrl === undefined) throw BUSINESS.invalid('text', 'Either text or image_uri is required.');
    return { text: text ?? '', ...(imageUrl ? { imageUrl } : {}) };
  };

  const accountPerson = (account: Account) => personFrom(`account:${account.openId}`, account.username, account.displayName);

  officialRoute(app, ctx, 'business', 'GET', `${API}/list/`, (call) => {
    const account = requireOwnBusiness(call, 'query');
    const videoId = call.query.requiredString('video_id');
    const commentIds = call.query.stringArray('comment_ids', { max: 30 });
    const includeReplies = call.query.boolean('include_replies') ?? false;
    const view = listView(call.query);
    const thread = threadOf(account, videoId);
    // comment_ids may name replies as well as top-level comments; without it the list is the top level.
    const chosen = commentIds ? thread.filter((c) => commentIds.includes(c.commentId)) : thread.filter((c) => !c.parentCommentId);
    return page(account.openId, arrange(account.openId, chosen, view), view, includeReplies);
  });

  officialRoute(app, ctx, 'business', 'GET', `${API}/reply/list/`, (call) => {
    const account = requireOwnBusiness(call, 'query');
    const videoId = call.query.requiredString('video_id');
    const commentId = call.query.requiredString('comment_id');
    const view = listView(call.query);
    threadOf(account, videoId);
    const parent = commentOf(account, commentId, videoId);
    if (parent.parentCommentId) throw BUSINESS.invalid('comment_id', 'Must be a top-level comment, not a reply.');
    if (parent.hidden) throw BUSINESS.invalid('comment_id', 'Replies of a hidden comment cannot be listed.');
    return page(account.openId, arrange(account.openId, store.replies(account.openId, parent), view), view, false);
  });

  officialRoute(app, ctx, 'business', 'POST', `${API}/create/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const videoId = call.body.requiredString('video_id');
    const body = content(account, call.body);
    threadOf(account, videoId);
    const comment = store.add(account.openId, { videoId, author: accountPerson(account), owner: true, ...body });
    notify(account.openId, comment, 'insert');
    return created(comment);
  });

  officialRoute(app, ctx, 'business', 'POST', `${API}/reply/create/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const videoId = call.body.requiredString('video_id');
    const commentId = call.body.requiredString('comment_id');
    const replyImageUrl = call.body.string('reply_image_url');
    if (replyImageUrl !== undefined) checkUrl('reply_image_url', replyImageUrl);
    const body = content(account, call.body, replyImageUrl);
    threadOf(account, videoId);
    const target = commentOf(account, commentId, videoId);
    const parent = target.parentCommentId ? commentOf(account, target.parentCommentId, videoId) : target;
    if (parent.hidden) throw BUSINESS.invalid('comment_id', 'A hidden comment cannot be replied to.');
    const reply = store.add(account.openId, {
      videoId,
      parentCommentId: parent.commentId,
      author: accountPerson(account),
      owner: true,
      ...body,
    });
    notify(account.openId, reply, 'insert');
    return created(reply);
  });

  officialRoute(app, ctx, 'business', 'POST', `${API}/like/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const commentId = call.body.requiredString('comment_id');
    const action = call.body.requiredString('action', { oneOf: ['LIKE', 'UNLIKE'] });
    const comment = commentOf(account, commentId);
    const like = action === 'LIKE';
    // Likes are not among comment.update's actions: no webhook.
    if (comment.liked !== like) {
      comment.liked = like;
      comment.likes += like ? 1 : -1;
    }
    return {};
  });

  officialRoute(app, ctx, 'business', 'POST', `${API}/hide/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const videoId = call.body.requiredString('video_id');
    const commentId = call.body.requiredString('comment_id');
    const action = call.body.requiredString('action', { oneOf: ['HIDE', 'UNHIDE'] });
    threadOf(account, videoId);
    const comment = commentOf(account, commentId, videoId);
    const hide = action === 'HIDE';
    if (comment.hidden !== hide) {
      comment.hidden = hide;
      notify(account.openId, comment, hide ? 'set_to_hidden' : 'set_to_public');
    }
    return {};
  });

  officialRoute(app, ctx, 'business', 'POST', `${API}/delete/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const commentId = call.body.requiredString('comment_id');
    const comment = commentOf(account, commentId);
    if (!comment.owner) {
      throw BUSINESS.noPermission('Only comments created by the account can be deleted; hide comments of other users instead.');
    }
    // The thread goes with its comment; the platform sends no event per reply, and neither do we.
    for (const reply of store.replies(account.openId, comment)) reply.deleted = true;
    comment.deleted = true;
    notify(account.openId, comment, 'delete');
    return {};
  });

  officialRoute(app, ctx, 'business', 'POST', `${API}/image/upload/`, async (call) => {
    const { fields, files } = await readMultipart(call.request);
    const account = requireOwnBusiness({ ...call, body: new Params(fields, BUSINESS, true) }, 'body');
    const file = files.image_file;
    if (!file) throw BUSINESS.missing('image_file');
    if (file.bytes.length === 0) throw new OfficialError(40906, 'image_file: The file is empty.');
    if (file.bytes.length > MAX_IMAGE_BYTES) throw new OfficialError(40907, 'image_file: The file is larger than 5 MB.');
    const info = await imageInfo(file.bytes);
    if (!info?.size || !COMMENT_IMAGE_FORMATS.includes(info.format))
      throw new OfficialError(40908, 'image_file: Unsupported file type; use JPG, JPEG, WebP or PNG.');
    const image = { format: info.format, ...info.size };
    const [short, long] = [Math.min(image.width, image.height), Math.max(image.width, image.height)];
    if (short < 360 || short > 1080 || long > 1920) {
      throw new OfficialError(
        40915,
        `image_file: ${image.width}x${image.height} px is out of spec; allowed from 360x360 up to 1080x1920 or 1920x1080.`,
      );
    }
    const saved = store.saveImage(account.openId, {
      width: image.width,
      height: image.height,
      bytes: file.bytes,
      contentType: IMAGE_CONTENT_TYPES[image.format],
    });
    return { image_uri: saved.imageUri, width: saved.width, height: saved.height };
  });

  registerPublicFiles(app, store);
  registerCommentControl(app, ctx, store, notify);
}

let placeholder: Buffer | undefined;

/** The emulator's stand-in for the platform CDN: comment images (public, non-expiring) and placeholder pictures. */
function registerPublicFiles(app: FastifyInstance, store: CommentStore): void {
  app.get('/_sandbox/cdn/comment-image/*', async (request, reply) => {
    const image = store.publicImage((request.params as { '*': string })['*']);
    if (!image) return reply.code(404).send({ error: 'no such image' });
    return reply.type(image.contentType).send(image.bytes);
  });
  app.get('/_sandbox/cdn/picture/:name', async (_request, reply) => {
    placeholder ??= solidPng(360, 360);
    return reply.type('image/png').send(placeholder);
  });
}

/**
 * `POST /_sandbox/accounts/:openId/comments`: a viewer comments on (or replies under) a post of the
 * account. `reply: true` without a parent answers the post's newest visible top-level comment, so a
 * caller (`vps trigger reply`) needs no comment id: every post has seeded comments to answer.
 */
function registerCommentControl(
  app: FastifyInstance,
  ctx: SandboxContext,
  store: CommentStore,
  notify: (openId: string, c: StoredComment, action: CommentAction) => PushRecord | undefined,
): void {
  controlRoutes(app, ctx, (control) => {
    control.post('/_sandbox/accounts/:openId/comments', async (request) => {
      const account = requireAccount(ctx, (request.params as { openId: string }).openId);
      const b = objectBody(request.body);
      if (typeof b.text !== 'string' || b.text === '') throw new ControlError(400, 'text must be a non-empty string');
      if (b.text.length > MAX_TEXT) throw new ControlError(400, `text must be at most ${MAX_TEXT} characters`);
      let videoId = typeof b.videoId === 'string' && b.videoId ? b.videoId : undefined;
      let parentCommentId: string | undefined;
      if (b.parentCommentId !== undefined) {
        const parent = store.find(account.openId, String(b.parentCommentId));
        if (!parent) throw new ControlError(404, `no comment ${String(b.parentCommentId)} on the posts of ${account.openId}`);
        if (videoId !== undefined && videoId !== parent.videoId) throw new ControlError(400, 'parentCommentId is not on videoId');
        videoId = parent.videoId;
        parentCommentId = parent.parentCommentId ?? parent.commentId;
      }
      videoId ??= ctx.posts.list(account.openId)[0]?.itemId;
      const thread = videoId ? store.thread(account.openId, videoId) : undefined;
      if (!videoId || !thread) throw new ControlError(404, `no post ${videoId ?? ''} of ${account.openId}`);
      if (b.reply !== undefined && typeof b.reply !== 'boolean') throw new ControlError(400, 'reply must be true or false');
      if (b.reply === true && parentCommentId === undefined) {
        const newest = thread
          .filter((c) => !c.parentCommentId && !c.deleted && !c.hidden)
          .sort((x, y) => y.createTime - x.createTime || y.commentId.localeCompare(x.commentId))[0];
        if (!newest) throw new ControlError(404, `no visible comment to reply to on post ${videoId} of ${account.openId}`);
        parentCommentId = newest.commentId;
      }
      const username =
        typeof b.username === 'string' && b.username ? b.username : `viewer_${stableNumber(`${b.text}:${ctx.clock.now()}`, 1e6)}`;
      const comment = store.add(account.openId, {
        videoId,
        ...(parentCommentId ? { parentCommentId } : {}),
        author: personFrom(username, username),
        owner: false,
        text: b.text,
      });
      const push = notify(account.openId, comment, 'insert');
      return {
        commentId: comment.commentId,
        videoId: comment.videoId,
        ...(comment.parentCommentId ? { parentCommentId: comment.parentCommentId } : {}),
        text: comment.text,
        username: comment.author.username,
        uniqueIdentifier: comment.author.uniqueIdentifier,
        createTime: comment.createTime,
        webhookPush: pushSummary(push),
      };
    });
  });
}
