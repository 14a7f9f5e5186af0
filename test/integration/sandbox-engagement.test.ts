/**
 * Contract of the emulated Business API's comment, messaging and insight paths, called raw
 * (shapes, envelope, errors, webhooks) and through the service's typed client.
 */
import { UpstreamError } from '../../core/upstream/failures';
import {
  createComment,
  createCommentReply,
  deleteComment,
  hideComment,
  likeComment,
  listCommentReplies,
  listComments,
  uploadCommentImage,
  type Comment,
} from '../../core/upstream/vplat/comments';
import { getBenchmark, getBusinessAccount, listVideos } from '../../core/upstream/vplat/insights';
import {
  createAutoMessage,
  deleteAutoMessage,
  getAutoMessages,
  getMessageMediaDownload,
  getMessagingCapabilities,
  listConversations,
  listMessages,
  sendMessage,
  sortAutoMessages,
  updateAutoMessage,
  updateAutoMessageStatus,
  uploadMessageMedia,
} from '../../core/upstream/vplat/messages';
import { updateWebhook } from '../../core/upstream/vplat/webhooks';
import { solidPng } from '../../sandbox/solid-png';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers';
import { official, startTestSandbox, type TestSandbox } from '../helpers/sandbox';

type Account = Awaited<ReturnType<TestSandbox['account']>>;
type Content = Record<string, unknown>;

const V = '/open_api/v1.3/';
const HOUR = 3_600_000;

describe('sandbox: Business API comments, messages and insights', () => {
  let sb: TestSandbox;
  let receiver: WebhookReceiver;
  let account: Account;
  let other: Account;
  let videoId: string;

  beforeAll(async () => {
    sb = await startTestSandbox();
    receiver = await startWebhookReceiver();
    account = await sb.account('business');
    other = await sb.account('business');
    await updateWebhook(sb.upstream.vplat, { eventType: 'COMMENT', callbackUrl: receiver.url });
    await updateWebhook(sb.upstream.vplat, { eventType: 'DIRECT_MESSAGE', callbackUrl: receiver.url });
    const { videos } = await listVideos(sb.upstream.vplat, account.tokens.access_token, { business_id: account.openId });
    videoId = videos[0]!.item_id;
  });
  afterAll(async () => {
    await sb?.close();
    await receiver?.close();
  });

  const vplat = () => sb.upstream.vplat;
  const token = () => account.tokens.access_token;
  const get = (path: string, query: Record<string, string>, t: string | undefined = token()) =>
    official(sb.url, 'GET', `${V}${path}`, { ...(t ? { token: t } : {}), query });
  const post = (path: string, json: unknown, t: string = token()) => official(sb.url, 'POST', `${V}${path}`, { token: t, json });

  /** A multipart call as a client sends it, raw. */
  const upload = async (
    path: string,
    fields: Record<string, string>,
    file?: { field: string; bytes: Buffer; type: string; name?: string },
  ) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    if (file) form.append(file.field, new Blob([file.bytes], { type: file.type }), file.name ?? 'upload.bin');
    const res = await fetch(`${sb.url}${V}${path}`, { method: 'POST', headers: { 'access-token': token() }, body: form });
    return { status: res.status, body: (await res.json()) as { code: number; message: string; request_id: string; data: Content } };
  };

  /** Moves the emulator's clock; tokens live 24 h of it, so the account gets a fresh pair. */
  const advance = async (ms: number) => {
    await sb.control('POST', '/_sandbox/clock', { advanceMs: ms });
    const { tokens } = await sb.control<{ tokens: Account['tokens'] }>('POST', `/_sandbox/accounts/${account.openId}/tokens`);
    account.tokens = tokens;
  };

  /** The parsed `content` of the first push of `event` whose content matches. */
  const pushed = async (event: string, match: (c: Content) => boolean): Promise<{ raw: string; envelope: Content; content: Content }> => {
    const parse = (body: string) => JSON.parse(body) as { event: string; content: string };
    const [push] = await receiver.waitFor(1, (p) => parse(p.body).event === event && match(JSON.parse(parse(p.body).content) as Content));
    const envelope = parse(push!.body);
    return { raw: push!.body, envelope, content: JSON.parse(envelope.content) as Content };
  };

  const clientError = async (promise: Promise<unknown>): Promise<UpstreamError> => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamError);
    return err as UpstreamError;
  };

  describe('errors in the official envelope', () => {
    it('answers a missing token with HTTP 200 and code 40104', async () => {
      const res = await get('business/comment/list/', { business_id: account.openId, video_id: videoId }, '');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ code: 40104, message: expect.stringContaining('Access-Token'), request_id: expect.any(String), data: {} });
    });

    it.each([
      ['GET', 'business/comment/list/'],
      ['GET', 'business/message/conversation/list/'],
      ['GET', 'business/get/'],
      ['POST', 'business/message/send/'],
    ])('refuses a business_id that is not the token owner on %s %s', async (method, path) => {
      const res = method === 'GET' ? await get(path, { business_id: other.openId }) : await post(path, { business_id: other.openId });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ code: 40001, message: expect.stringContaining('business_id'), data: {} });
    });

    it.each([
      ['business/comment/list/', {}, 'video_id'],
      ['business/comment/reply/list/', { video_id: '1' }, 'comment_id'],
      ['business/message/conversation/list/', {}, 'conversation_type'],
      ['business/message/content/list/', {}, 'conversation_id'],
      ['business/message/capabilities/get/', {}, 'capability_types'],
      ['business/message/auto_message/get/', {}, 'auto_message_type'],
      ['business/benchmark/', {}, 'business_category'],
    ])('names the missing field on GET %s', async (path, query, field) => {
      const res = await get(path, { business_id: account.openId, ...query });
      expect(res.body).toEqual({
        code: 40002,
        message: `${field}: Missing data for required field.`,
        request_id: expect.any(String),
        data: {},
      });
    });

    it('names a mistyped field', async () => {
      const res = await get('business/comment/list/', { business_id: account.openId, video_id: videoId, max_count: '31' });
      expect(res.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^max_count: /) });
      const sort = await get('business/comment/list/', { business_id: account.openId, video_id: videoId, sort_field: 'views' });
      expect(sort.body).toMatchObject({
        code: 40002,
        message: expect.stringMatching(/^sort_field: Must be one of: likes, replies, create_time/),
      });
    });

    it('surfaces an official error through the client as 3001 with the official code and message', async () => {
      const err = await clientError(listComments(vplat(), token(), { business_id: account.openId, video_id: '7000000000000000001' }));
      expect(err.code).toBe(3001);
      expect(err.message).toBe('Video 7000000000000000001 does not exist.');
      expect(err.failure).toMatchObject({ officialCode: 40007, failureClass: 'not_found', retryable: false });
    });
  });

  describe('comments', () => {
    const list = (query: Partial<Parameters<typeof listComments>[2]> = {}) =>
      listComments(vplat(), token(), { business_id: account.openId, video_id: videoId, ...query });

    it('lists the seeded comments of a post in the documented shape', async () => {
      const res = await get('business/comment/list/', { business_id: account.openId, video_id: videoId });
      expect(res.body).toMatchObject({ code: 0, message: 'OK', request_id: expect.any(String) });
      const data = res.body.data as { comments: Comment[]; cursor: number; has_more: boolean };
      expect(data).toEqual({ comments: expect.any(Array), cursor: data.comments.length, has_more: false });
      expect(data.comments.length).toBeGreaterThanOrEqual(2);
      for (const c of data.comments) {
        expect(c).toEqual({
          comment_id: expect.stringMatching(/^\d{19}$/),
          video_id: videoId,
          user_id: expect.stringMatching(/^[0-9a-f]{64}$/),
          unique_identifier: expect.any(String),
          create_time: expect.stringMatching(/^\d{10}$/),
          text: expect.any(String),
          likes: expect.any(Number),
          replies: expect.any(Number),
          owner: false,
          liked: false,
          pinned: false,
          status: 'PUBLIC',
          username: expect.any(String),
          display_name: expect.any(String),
          profile_image: expect.stringContaining('x-expires='),
        });
      }
    });

    it('serves the profile image it links to', async () => {
      const { comments } = await list();
      const res = await fetch(comments[0]!.profile_image);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
    });

    it('includes up to 3 replies with include_replies, and lists them with reply/list', async () => {
      const { comments } = await list({ include_replies: true });
      const parent = comments.find((c) => c.replies > 0)!;
      expect(parent.reply_list).toHaveLength(parent.replies);
      expect(parent.reply_list![0]).toMatchObject({ parent_comment_id: parent.comment_id, video_id: videoId });
      expect(comments.filter((c) => c.replies === 0).every((c) => Array.isArray(c.reply_list) && c.reply_list.length === 0)).toBe(true);

      const replies = await listCommentReplies(vplat(), token(), {
        business_id: account.openId,
        video_id: videoId,
        comment_id: parent.comment_id,
      });
      expect(replies).toEqual({
        comments: [expect.objectContaining({ parent_comment_id: parent.comment_id })],
        cursor: 1,
        has_more: false,
      });
      expect(replies.comments[0]).not.toHaveProperty('reply_list');
    });

    it('pages with cursor and max_count, sorts by a field, and filters by comment_ids', async () => {
      const all = await list({ sort_field: 'create_time', sort_order: 'asc' });
      const first = await list({ sort_field: 'create_time', sort_order: 'asc', max_count: 1 });
      expect(first).toEqual({ comments: [all.comments[0]], cursor: 1, has_more: true });
      const second = await list({ sort_field: 'create_time', sort_order: 'asc', max_count: 1, cursor: first.cursor });
      expect(second.comments[0]!.comment_id).toBe(all.comments[1]!.comment_id);
      const times = all.comments.map((c) => Number(c.create_time));
      expect(times).toEqual([...times].sort((a, b) => a - b));

      const byLikes = await list({ sort_field: 'likes', sort_order: 'desc' });
      const likes = byLikes.comments.map((c) => c.likes);
      expect(likes).toEqual([...likes].sort((a, b) => b - a));

      const picked = await list({ comment_ids: [all.comments[1]!.comment_id] });
      expect(picked.comments.map((c) => c.comment_id)).toEqual([all.comments[1]!.comment_id]);
      const tooMany = await get('business/comment/list/', {
        business_id: account.openId,
        video_id: videoId,
        comment_ids: JSON.stringify(Array.from({ length: 31 }, (_, i) => String(i))),
      });
      expect(tooMany.body.code).toBe(40011);
    });

    it('answers an unknown video, and a video of another account, with 40007', async () => {
      const { videos } = await listVideos(vplat(), other.tokens.access_token, { business_id: other.openId });
      const res = await get('business/comment/list/', { business_id: account.openId, video_id: videos[0]!.item_id });
      expect(res.body).toMatchObject({ code: 40007, data: {} });
    });

    it('creates a comment as the account and pushes comment.update with exact numeric ids', async () => {
      const created = await createComment(vplat(), token(), {
        business_id: account.openId,
        video_id: videoId,
        text: 'Thanks for watching!',
      });
      expect(created).toEqual({
        comment_id: expect.stringMatching(/^\d{19}$/),
        video_id: videoId,
        user_id: expect.any(String),
        unique_identifier: expect.any(String),
        create_time: expect.stringMatching(/^\d{10}$/),
        text: 'Thanks for watching!',
      });
      const { comments } = await list({ comment_ids: [created.comment_id] });
      expect(comments[0]).toMatchObject({ owner: true, username: account.username, status: 'PUBLIC' });

      const { raw, envelope, content } = await pushed('comment.update', (c) => c.text === 'Thanks for watching!');
      expect(envelope).toMatchObject({
        event: 'comment.update',
        user_openid: account.openId,
        client_key: expect.any(String),
        create_time: expect.any(Number),
      });
      expect(content).toEqual({
        comment_id: expect.any(Number),
        video_id: expect.any(Number),
        // The official push names a parent for replies only.
        comment_type: 'comment',
        comment_action: 'insert',
        unique_identifier: created.unique_identifier,
        timestamp: expect.any(Number),
        text: 'Thanks for watching!',
      });
      // The id travels as a JSON number whose digits are exactly the REST id.
      expect(JSON.parse(raw).content).toContain(`"comment_id":${created.comment_id}`);
      expect(String(content.comment_id)).toBe(created.comment_id);
    });

    it('refuses text over 1,200 characters and a body with neither text nor image', async () => {
      const long = await post('business/comment/create/', { business_id: account.openId, video_id: videoId, text: 'x'.repeat(1201) });
      expect(long.body).toMatchObject({ code: 40002, message: 'text: Length must be at most 1200.' });
      const empty = await post('business/comment/create/', { business_id: account.openId, video_id: videoId });
      expect(empty.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^text: /) });
    });

    it('replies to a comment and pushes a reply insert with its parent', async () => {
      const { comments } = await list();
      const parent = comments.find((c) => !c.owner)!;
      const reply = await createCommentReply(vplat(), token(), {
        business_id: account.openId,
        video_id: videoId,
        comment_id: parent.comment_id,
        text: 'Glad you like it',
      });
      expect(reply).toMatchObject({ parent_comment_id: parent.comment_id, video_id: videoId, text: 'Glad you like it' });
      const { content } = await pushed('comment.update', (c) => c.text === 'Glad you like it');
      expect(content).toMatchObject({ comment_type: 'reply', comment_action: 'insert' });
      expect(String(content.parent_comment_id)).toBe(parent.comment_id);
      const { comments: after } = await list({ comment_ids: [parent.comment_id] });
      expect(after[0]!.replies).toBe(parent.replies + 1);
    });

    it('likes and unlikes a comment', async () => {
      const [target] = (await list({ sort_field: 'create_time', sort_order: 'asc' })).comments;
      await likeComment(vplat(), token(), { business_id: account.openId, comment_id: target!.comment_id, action: 'LIKE' });
      let [now] = (await list({ comment_ids: [target!.comment_id] })).comments;
      expect(now).toMatchObject({ liked: true, likes: target!.likes + 1 });
      await likeComment(vplat(), token(), { business_id: account.openId, comment_id: target!.comment_id, action: 'UNLIKE' });
      [now] = (await list({ comment_ids: [target!.comment_id] })).comments;
      expect(now).toMatchObject({ liked: false, likes: target!.likes });
      const bad = await post('business/comment/like/', { business_id: account.openId, comment_id: target!.comment_id, action: 'LOVE' });
      expect(bad.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^action: /) });
    });

    it('hides and unhides a comment, with webhooks and the PUBLIC filter', async () => {
      const { comment_id } = await sb
        .control<{ commentId: string }>('POST', `/_sandbox/accounts/${account.openId}/comments`, { videoId, text: 'spam spam' })
        .then((c) => ({ comment_id: c.commentId }));
      await hideComment(vplat(), token(), { business_id: account.openId, video_id: videoId, comment_id, action: 'HIDE' });
      expect((await list({ comment_ids: [comment_id] })).comments[0]!.status).toBe('HIDDEN');
      expect((await list({ status: 'PUBLIC' })).comments.map((c) => c.comment_id)).not.toContain(comment_id);
      const hidden = await pushed('comment.update', (c) => String(c.comment_id) === comment_id && c.comment_action === 'set_to_hidden');
      expect(hidden.content).not.toHaveProperty('text');

      const replies = await get('business/comment/reply/list/', { business_id: account.openId, video_id: videoId, comment_id });
      expect(replies.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^comment_id: .*hidden/) });

      await hideComment(vplat(), token(), { business_id: account.openId, video_id: videoId, comment_id, action: 'UNHIDE' });
      await pushed('comment.update', (c) => String(c.comment_id) === comment_id && c.comment_action === 'set_to_public');
      expect((await list({ status: 'PUBLIC' })).comments.map((c) => c.comment_id)).toContain(comment_id);
    });

    it("deletes the account's own comment but refuses someone else's", async () => {
      const mine = await createComment(vplat(), token(), { business_id: account.openId, video_id: videoId, text: 'to be deleted' });
      const reply = await sb.control<{ commentId: string }>('POST', `/_sandbox/accounts/${account.openId}/comments`, {
        text: 'a reply',
        parentCommentId: mine.comment_id,
      });
      await deleteComment(vplat(), token(), { business_id: account.openId, comment_id: mine.comment_id });
      expect((await list({ comment_ids: [mine.comment_id, reply.commentId] })).comments).toEqual([]);
      const { content } = await pushed('comment.update', (c) => String(c.comment_id) === mine.comment_id && c.comment_action === 'delete');
      expect(content).toMatchObject({ comment_type: 'comment' });
      expect(content).not.toHaveProperty('parent_comment_id');

      const theirs = (await list()).comments.find((c) => !c.owner)!;
      const res = await post('business/comment/delete/', { business_id: account.openId, comment_id: theirs.comment_id });
      expect(res.body).toEqual({
        code: 40001,
        message: expect.stringContaining('Only comments created by the account can be deleted'),
        request_id: expect.any(String),
        data: {},
      });
      const gone = await post('business/comment/delete/', { business_id: account.openId, comment_id: mine.comment_id });
      expect(gone.body.code).toBe(40007);
    });

    it('uploads a comment image and comments with it', async () => {
      const uploaded = await uploadCommentImage(vplat(), token(), account.openId, {
        bytes: solidPng(400, 500),
        fileName: 'pic.png',
        contentType: 'image/png',
      });
      expect(uploaded).toEqual({ image_uri: expect.any(String), width: 400, height: 500 });
      const created = await createComment(vplat(), token(), {
        business_id: account.openId,
        video_id: videoId,
        image_uri: uploaded.image_uri,
        image_width: 400,
        image_height: 500,
      });
      expect(created.image_url).toEqual(expect.stringContaining(sb.url));
      const image = await fetch(created.image_url!);
      expect(image.status).toBe(200);
      expect(Buffer.from(await image.arrayBuffer()).equals(solidPng(400, 500))).toBe(true);

      const noSize = await post('business/comment/create/', {
        business_id: account.openId,
        video_id: videoId,
        image_uri: uploaded.image_uri,
      });
      expect(noSize.body).toMatchObject({ code: 40002, message: 'image_width: Missing data for required field.' });
      const unknown = await post('business/comment/create/', {
        business_id: account.openId,
        video_id: videoId,
        image_uri: 'nope',
        image_width: 1,
        image_height: 1,
      });
      expect(unknown.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^image_uri: /) });
    });

    it.each([
      ['a picture below 360x360', solidPng(200, 200), 'image/png', 40915],
      ['a picture above 1080x1920', solidPng(1200, 1200), 'image/png', 40915],
      ['a file that is not an image', Buffer.from('GIF89a not supported'), 'image/gif', 40908],
      ['an empty file', Buffer.alloc(0), 'image/png', 40906],
    ])('refuses %s on comment image upload', async (_name, bytes, type, code) => {
      const res = await upload('business/comment/image/upload/', { business_id: account.openId }, { field: 'image_file', bytes, type });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ code, data: {} });
    });

    it('checks the multipart business_id and file field', async () => {
      const missing = await upload('business/comment/image/upload/', { business_id: account.openId });
      expect(missing.body).toMatchObject({ code: 40002, message: 'image_file: Missing data for required field.' });
      const stranger = await upload(
        'business/comment/image/upload/',
        { business_id: other.openId },
        { field: 'image_file', bytes: solidPng(400, 400), type: 'image/png' },
      );
      expect(stranger.body.code).toBe(40001);
    });

    it('lets a test inject a viewer comment and a reply through the control API', async () => {
      const injected = await sb.control<{ commentId: string; videoId: string; username: string }>(
        'POST',
        `/_sandbox/accounts/${account.openId}/comments`,
        {
          text: 'Injected question?',
          username: 'viewer_one',
        },
      );
      expect(injected).toMatchObject({ commentId: expect.stringMatching(/^\d{19}$/), videoId: expect.any(String), username: 'viewer_one' });
      const pushedInsert = await pushed('comment.update', (c) => c.text === 'Injected question?');
      expect(pushedInsert.content).toMatchObject({ comment_action: 'insert', comment_type: 'comment' });
      const reply = await sb.control<{ commentId: string; parentCommentId: string }>(
        'POST',
        `/_sandbox/accounts/${account.openId}/comments`,
        {
          text: 'Same question',
          parentCommentId: injected.commentId,
        },
      );
      expect(reply.parentCommentId).toBe(injected.commentId);
      await expect(sb.control('POST', `/_sandbox/accounts/${account.openId}/comments`, { text: 'x', videoId: '1' })).rejects.toThrow(
        /HTTP 404/,
      );
      await expect(sb.control('POST', `/_sandbox/accounts/${account.openId}/comments`, {})).rejects.toThrow(/HTTP 400/);
    });
  });

  describe('insights', () => {
    const today = async () => (await sb.control<{ now: string }>('GET', '/_sandbox/clock')).now.slice(0, 10);
    const dayBefore = (date: string, days: number) =>
      new Date(Date.parse(`${date}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);

    it('returns the default profile fields', async () => {
      const res = await get('business/get/', { business_id: account.openId });
      expect(res.body.data).toEqual({ display_name: expect.any(String), profile_image: expect.stringContaining('x-expires=') });
    });

    it('returns profile, daily metrics over the date range and demographics, stable across calls', async () => {
      const end = dayBefore(await today(), 1);
      const start = dayBefore(end, 2);
      const query = {
        business_id: account.openId,
        start_date: start,
        end_date: end,
        fields: [
          'username',
          'followers_count',
          'videos_count',
          'is_business_account',
          'video_views',
          'daily_new_followers',
          'audience_activity',
          'audience_genders',
        ] as const,
      };
      const data = await getBusinessAccount(vplat(), token(), { ...query, fields: [...query.fields] });
      expect(data).toEqual({
        username: account.username,
        followers_count: expect.any(Number),
        videos_count: 3,
        is_business_account: true,
        audience_genders: expect.arrayContaining([{ gender: 'Female', percentage: expect.any(Number) }]),
        metrics: [0, 1, 2].map(() => ({
          date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
          video_views: expect.any(Number),
          daily_new_followers: expect.any(Number),
          followers_count: expect.any(Number),
          audience_activity: expect.arrayContaining([{ hour: '0', count: expect.any(Number) }]),
        })),
      });
      expect(data.metrics!.map((m) => m.date)).toEqual([start, dayBefore(end, 1), end]);
      expect(await getBusinessAccount(vplat(), token(), { ...query, fields: [...query.fields] })).toEqual(data);
    });

    it('refuses bad dates and unknown fields, naming the field', async () => {
      const now = await today();
      const cases: Array<[Record<string, string>, RegExp]> = [
        [{ start_date: '2024-13-01' }, /^start_date: /],
        [{ end_date: '2024-02-30' }, /^end_date: Must be a date/],
        [{ start_date: dayBefore(now, 2), end_date: dayBefore(now, 3) }, /^end_date: Must not be earlier than start_date/],
        [{ start_date: dayBefore(now, 61), end_date: dayBefore(now, 1) }, /^start_date: .*60 days/],
        [{ fields: '["followers"]' }, /^fields: Unknown field "followers"/],
        [{ fields: 'display_name' }, /^fields: Not a valid JSON/],
      ];
      for (const [query, message] of cases) {
        const res = await get('business/get/', { business_id: account.openId, ...query });
        expect(res.body).toMatchObject({ code: 40002, message: expect.stringMatching(message), data: {} });
      }
    });

    it('lists videos with the requested fields, newest first, paging by cursor', async () => {
      const raw = await get('business/video/list/', { business_id: account.openId });
      expect(raw.body.data).toEqual({ videos: expect.any(Array), cursor: expect.any(Number), has_more: false });
      expect((raw.body.data.videos as unknown[])[0]).toEqual({ item_id: expect.stringMatching(/^\d{19}$/) });

      const fields = [
        'item_id',
        'create_time',
        'media_type',
        'likes',
        'comments',
        'video_duration',
        'share_url',
        'thumbnail_url',
        'impression_sources',
        'audience_types',
      ] as const;
      const page1 = await listVideos(vplat(), token(), { business_id: account.openId, fields: [...fields], max_count: 2 });
      expect(page1.videos).toHaveLength(2);
      expect(page1.has_more).toBe(true);
      expect(page1.videos[0]).toEqual({
        item_id: expect.any(String),
        create_time: expect.stringMatching(/^\d{10}$/),
        media_type: 'VIDEO',
        likes: expect.any(Number),
        comments: expect.any(Number),
        video_duration: expect.any(Number),
        share_url: expect.stringContaining(page1.videos[0]!.item_id),
        thumbnail_url: expect.stringContaining('x-expires='),
        impression_sources: expect.arrayContaining([{ impression_source: 'For You', percentage: expect.any(Number) }]),
        audience_types: expect.arrayContaining([{ type: 'NEW_VIEWER', percentage: expect.any(Number) }]),
      });
      expect(Number(page1.videos[0]!.create_time)).toBeGreaterThan(Number(page1.videos[1]!.create_time));
      expect(page1.cursor).toBe(Number(page1.videos[1]!.create_time) * 1000);
      const page2 = await listVideos(vplat(), token(), { business_id: account.openId, cursor: page1.cursor, max_count: 2 });
      expect(page2.videos).toHaveLength(1);
      expect(page2.has_more).toBe(false);
    });

    it('counts the live comments of a post', async () => {
      const before = (
        await listVideos(vplat(), token(), {
          business_id: account.openId,
          fields: ['item_id', 'comments'],
          filters: { video_ids: [videoId] },
        })
      ).videos[0]!;
      await createComment(vplat(), token(), { business_id: account.openId, video_id: videoId, text: 'one more' });
      const after = (
        await listVideos(vplat(), token(), {
          business_id: account.openId,
          fields: ['item_id', 'comments'],
          filters: { video_ids: [videoId] },
        })
      ).videos[0]!;
      expect(after.comments).toBe(before.comments! + 1);
    });

    it('includes posts published during the run', async () => {
      const post = sb.sandbox.context.posts.add({
        openId: other.openId,
        mediaType: 'PHOTO',
        caption: 'fresh',
        createTime: Math.floor(sb.sandbox.context.clock.now() / 1000),
        durationSeconds: 0,
      });
      const { videos } = await listVideos(vplat(), other.tokens.access_token, {
        business_id: other.openId,
        fields: ['item_id', 'media_type', 'caption'],
      });
      expect(videos[0]).toEqual({ item_id: post.itemId, media_type: 'PHOTO', caption: 'fresh' });
    });

    it('refuses fields without item_id, too large a page and mistyped filters', async () => {
      const cases: Array<[Record<string, string>, RegExp]> = [
        [{ fields: '["likes"]' }, /^fields: Must include "item_id"/],
        [{ max_count: '21' }, /^max_count: /],
        [{ filters: '{"video_ids":"1"}' }, /^filters\.video_ids: /],
        [{ filters: '[1]' }, /^filters: /],
      ];
      for (const [query, message] of cases) {
        const res = await get('business/video/list/', { business_id: account.openId, ...query });
        expect(res.body).toMatchObject({ code: 40002, message: expect.stringMatching(message) });
      }
    });

    it('returns category benchmarks and refuses an unknown category', async () => {
      const data = await getBenchmark(vplat(), token(), { business_id: account.openId, business_category: 'BEAUTY' });
      expect(data).toEqual({
        business_category: 'BEAUTY',
        average_likes: expect.any(Number),
        average_comments: expect.any(Number),
        average_shares: expect.any(Number),
        average_video_count: expect.any(Number),
        average_follower_count: expect.any(Number),
        average_follower_growth: expect.any(Number),
        average_engagement_rate: expect.any(Number),
        average_video_views: expect.any(Number),
      });
      const res = await get('business/benchmark/', { business_id: account.openId, business_category: 'COOKING' });
      expect(res.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^business_category: Must be one of: ART_AND_CRAFTS/) });
    });
  });

  describe('messages', () => {
    const inject = (body: Record<string, unknown>) =>
      sb.control<{ conversationId: string; messageId: string; from: string }>(
        'POST',
        `/_sandbox/accounts/${account.openId}/messages`,
        body,
      );
    const sendText = (conversationId: string, body: string) =>
      sendMessage(vplat(), token(), {
        business_id: account.openId,
        recipient_type: 'CONVERSATION',
        recipient: conversationId,
        message_type: 'TEXT',
        text: { body },
      });
    const send = (json: Record<string, unknown>) =>
      post('business/message/send/', { business_id: account.openId, recipient_type: 'CONVERSATION', ...json });

    let conversationId: string;
    let userId: string;

    it('opens a STRANGER conversation when a user writes, and pushes im_receive_msg', async () => {
      const injected = await inject({ text: 'Hi, is this in stock?', username: 'shopper_1', isFollower: true });
      ({ conversationId, from: userId } = injected);
      expect(conversationId).toContain('+');
      const { envelope, content } = await pushed('im_receive_msg', (c) => c.message_id === injected.messageId);
      expect(envelope).toMatchObject({ event: 'im_receive_msg', user_openid: account.openId });
      expect(content).toEqual({
        from: 'shopper_1',
        to: account.username,
        unique_identifier: userId,
        from_user: { id: userId, role: 'personal_account' },
        to_user: { id: account.openId, role: 'business_account' },
        conversation_id: conversationId,
        message_id: injected.messageId,
        timestamp: expect.any(Number),
        type: 'text',
        text: { body: 'Hi, is this in stock?' },
        message_tag: { source: 'APP' },
        is_follower: true,
      });

      const strangers = await listConversations(vplat(), token(), { business_id: account.openId, conversation_type: 'STRANGER' });
      expect(strangers).toEqual({
        conversations: [{ conversation_id: conversationId, update_time: expect.any(Number) }],
        has_more: false,
        cursor: 1,
      });
      expect(
        (await listConversations(vplat(), token(), { business_id: account.openId, conversation_type: 'SINGLE' })).conversations,
      ).toEqual([]);
    });

    it('lists the messages and participants of a conversation', async () => {
      const data = await listMessages(vplat(), token(), { business_id: account.openId, conversation_id: conversationId });
      expect(data).toEqual({
        messages: [
          {
            sender: 'shopper_1',
            recipient: account.username,
            conversation_id: conversationId,
            message_id: expect.any(String),
            timestamp: expect.any(Number),
            message_tag: { source: 'APP' },
            message_type: 'TEXT',
            text: { body: 'Hi, is this in stock?' },
            from_user: { role: 'PERSONAL_ACCOUNT', id: userId },
            to_user: { role: 'BUSINESS_ACCOUNT', id: account.openId },
          },
        ],
        participants: [
          { role: 'BUSINESS_ACCOUNT', id: account.openId, display_name: expect.any(String), profile_image: expect.any(String) },
          { role: 'PERSONAL_ACCOUNT', id: userId, display_name: 'shopper_1', profile_image: expect.any(String), is_follower: true },
        ],
      });
    });

    it('treats an unencoded + in conversation_id as a different (invalid) conversation', async () => {
      const res = await fetch(
        `${sb.url}${V}business/message/content/list/?business_id=${account.openId}&conversation_id=${conversationId}`,
        { headers: { 'access-token': token() } },
      );
      expect(await res.json()).toMatchObject({ code: 40002, message: 'Param conversation_id is invalid.' });
    });

    it('sends a text reply, moves the conversation to SINGLE and pushes im_send_msg', async () => {
      const { message } = await sendText(conversationId, 'Yes, it is!');
      expect(message.message_id).toMatch(/^\d{19}$/);
      const { content } = await pushed('im_send_msg', (c) => c.message_id === message.message_id);
      expect(content).toMatchObject({
        from: account.username,
        to: 'shopper_1',
        from_user: { id: account.openId, role: 'business_account' },
        to_user: { id: userId, role: 'personal_account' },
        type: 'text',
        text: { body: 'Yes, it is!' },
        message_tag: { source: 'API' },
      });
      const singles = await listConversations(vplat(), token(), { business_id: account.openId, conversation_type: 'SINGLE' });
      expect(singles.conversations.map((c) => c.conversation_id)).toEqual([conversationId]);
      const { messages } = await listMessages(vplat(), token(), { business_id: account.openId, conversation_id: conversationId });
      expect(messages[0]).toMatchObject({
        message_id: message.message_id,
        sender: account.username,
        from_user: { role: 'BUSINESS_ACCOUNT' },
        message_tag: { source: 'API' },
      });
    });

    it('sends a quoted reply, a shared post and a template card', async () => {
      const { messages } = await listMessages(vplat(), token(), { business_id: account.openId, conversation_id: conversationId });
      const userMessage = messages.find((m) => m.from_user.role === 'PERSONAL_ACCOUNT')!;
      const quoted = await send({
        recipient: conversationId,
        message_type: 'TEXT',
        text: { body: 'About that:' },
        referenced_message_info: { referenced_message_id: userMessage.message_id },
      });
      expect(quoted.body.code).toBe(0);
      const shared = await sendMessage(vplat(), token(), {
        business_id: account.openId,
        recipient_type: 'CONVERSATION',
        recipient: conversationId,
        message_type: 'SHARE_POST',
        share_post: { item_id: videoId },
      });
      const sharedPush = await pushed('im_send_msg', (c) => c.message_id === shared.message.message_id);
      expect(sharedPush.content).toMatchObject({
        type: 'share_post',
        share_post: { embed_url: expect.stringContaining(videoId), video_id: videoId },
      });
      const card = await sendMessage(vplat(), token(), {
        business_id: account.openId,
        recipient_type: 'CONVERSATION',
        recipient: conversationId,
        message_type: 'TEMPLATE',
        template: {
          type: 'QA_BUTTON_CARD',
          title: 'Which size?',
          buttons: [
            { type: 'REPLY', title: 'Small', id: 's' },
            { type: 'REPLY', title: 'Large' },
          ],
        },
      });
      const cardPush = await pushed('im_send_msg', (c) => c.message_id === card.message.message_id);
      expect(cardPush.content).toMatchObject({
        type: 'template',
        template: {
          type: 'qa_button_card',
          elements: [
            {
              title: 'Which size?',
              buttons: [
                { text: 'Small', type: 'REPLY', id: 's' },
                { text: 'Large', type: 'REPLY' },
              ],
            },
          ],
        },
      });
      const after = await listMessages(vplat(), token(), { business_id: account.openId, conversation_id: conversationId });
      expect(after.messages[0]).toMatchObject({ message_type: 'TEMPLATE', template: { type: 'QA_BUTTON_CARD', title: 'Which size?' } });
      expect(after.messages[1]).toMatchObject({ message_type: 'SHARE_POST', share_post: { embed_url: expect.any(String) } });
      expect(after.messages[2]).toMatchObject({
        message_type: 'TEXT',
        referenced_message_info: { referenced_message_id: userMessage.message_id },
      });
    });

    it('answers sender actions with an empty message_id', async () => {
      for (const action of ['TYPING', 'MARK_READ'] as const) {
        const res = await sendMessage(vplat(), token(), {
          business_id: account.openId,
          recipient_type: 'CONVERSATION',
          recipient: conversationId,
          message_type: 'SENDER_ACTION',
          sender_action: action,
        });
        expect(res).toEqual({ message: { message_id: '' } });
      }
    });

    it.each<[string, Record<string, unknown>, number, RegExp]>([
      [
        'an unknown conversation',
        { recipient: '0+nope', message_type: 'TEXT', text: { body: 'x' } },
        40002,
        /^Param conversation_id is invalid\.$/,
      ],
      [
        'text and image together',
        { message_type: 'TEXT', text: { body: 'x' }, image: { media_id: 'm' } },
        40002,
        /^image: Not allowed with message_type TEXT/,
      ],
      ['TEXT without text.body', { message_type: 'TEXT' }, 40002, /^text\.body: Missing data/],
      [
        'text over 6,000 characters',
        { message_type: 'TEXT', text: { body: 'x'.repeat(6001) } },
        40002,
        /^text\.body: Length must be at most 6000/,
      ],
      [
        'a missing recipient_type',
        { recipient_type: undefined, message_type: 'TEXT', text: { body: 'x' } },
        40002,
        /^recipient_type: Missing/,
      ],
      ['an unknown message_type', { message_type: 'VIDEO' }, 40002, /^message_type: Must be one of/],
      [
        'a quote on a non-text message',
        { message_type: 'SHARE_POST', share_post: { item_id: '1' }, referenced_message_info: { referenced_message_id: '1' } },
        40002,
        /^referenced_message_info: /,
      ],
      [
        "sharing a post that is not the account's",
        { message_type: 'SHARE_POST', share_post: { item_id: '7000000000000000001' } },
        40007,
        /does not exist/,
      ],
      ['an unknown media_id', { message_type: 'IMAGE', image: { media_id: 'unknown' } }, 40002, /^image\.media_id: /],
      [
        'four template buttons',
        {
          message_type: 'TEMPLATE',
          template: { type: 'QA_LINK_CARD', title: 'Q', buttons: [1, 2, 3, 4].map((n) => ({ type: 'REPLY', title: `b${n}` })) },
        },
        40002,
        /^template\.buttons: Must hold 1 to 3/,
      ],
      [
        'a button title over 20 on a button card',
        { message_type: 'TEMPLATE', template: { type: 'QA_BUTTON_CARD', title: 'Q', buttons: [{ type: 'REPLY', title: 'x'.repeat(21) }] } },
        40002,
        /^template\.buttons\[0\]\.title: Length must be at most 20/,
      ],
      [
        'a template title over 40',
        { message_type: 'TEMPLATE', template: { type: 'QA_LINK_CARD', title: 'x'.repeat(41), buttons: [{ type: 'REPLY', title: 'a' }] } },
        40002,
        /^template\.title: /,
      ],
      ['an unknown sender action', { message_type: 'SENDER_ACTION', sender_action: 'WAVE' }, 40002, /^sender_action: /],
      [
        'a direct reply together with a recipient',
        { message_type: 'TEXT', text: { body: 'x' }, direct_reply: { reply_type: 'COMMENT_REPLY' } },
        40002,
        /^direct_reply: Not allowed/,
      ],
      [
        'a direct reply',
        {
          recipient_type: undefined,
          recipient: undefined,
          message_type: 'TEXT',
          text: { body: 'x' },
          direct_reply: { reply_type: 'COMMENT_REPLY', comment_reply: { comment_id: '1' } },
        },
        40001,
        /Vietnam/,
      ],
    ])('refuses %s', async (_name, json, code, message) => {
      const res = await send({ recipient: conversationId, ...json });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ code, message: expect.stringMatching(message), request_id: expect.any(String), data: {} });
    });

    it('uploads message images (JPG/PNG up to 3 MB, checked by content)', async () => {
      const { media_id } = await uploadMessageMedia(vplat(), token(), account.openId, {
        bytes: solidPng(50, 50),
        fileName: 'a.png',
        contentType: 'image/png',
      });
      expect(media_id).toEqual(expect.any(String));
      const cases: Array<[Record<string, string>, Buffer | undefined, number, RegExp]> = [
        [{ media_type: 'IMAGE' }, Buffer.from('GIF89a....'), 40908, /^file: Unsupported/],
        [{ media_type: 'IMAGE' }, Buffer.concat([solidPng(10, 10), Buffer.alloc(3 * 1024 * 1024)]), 40907, /^file: .*3 MB/],
        [{ media_type: 'VIDEO' }, solidPng(10, 10), 40002, /^media_type: Must be one of: IMAGE/],
        [{}, solidPng(10, 10), 40002, /^media_type: Missing/],
        [{ media_type: 'IMAGE' }, undefined, 40002, /^file: Missing/],
      ];
      for (const [fields, bytes, code, message] of cases) {
        const res = await upload(
          'business/message/media/upload/',
          { business_id: account.openId, ...fields },
          bytes ? { field: 'file', bytes, type: 'image/png' } : undefined,
        );
        expect(res.body).toMatchObject({ code, message: expect.stringMatching(message) });
      }
    });

    it('reports IMAGE_SEND per conversation and refuses images where it is false', async () => {
      const capability = (id: string, type: 'SINGLE' | 'STRANGER') =>
        getMessagingCapabilities(vplat(), token(), {
          business_id: account.openId,
          capability_types: ['IMAGE_SEND'],
          conversation_id: id,
          conversation_type: type,
        });
      expect(await capability(conversationId, 'SINGLE')).toEqual({
        capability_infos: [{ capability_type: 'IMAGE_SEND', capability_result: true }],
      });
      const fresh = await inject({ text: 'hello' });
      expect((await capability(fresh.conversationId, 'STRANGER')).capability_infos[0]!.capability_result).toBe(false);

      const { media_id } = await uploadMessageMedia(vplat(), token(), account.openId, {
        bytes: solidPng(50, 50),
        fileName: 'a.png',
        contentType: 'image/png',
      });
      const refused = await send({ recipient: fresh.conversationId, message_type: 'IMAGE', image: { media_id } });
      expect(refused.body).toMatchObject({ code: 40064, message: expect.stringContaining('IMAGE_SEND') });
      const sent = await sendMessage(vplat(), token(), {
        business_id: account.openId,
        recipient_type: 'CONVERSATION',
        recipient: conversationId,
        message_type: 'IMAGE',
        image: { media_id },
      });
      const { content } = await pushed('im_send_msg', (c) => c.message_id === sent.message.message_id);
      expect(content).toMatchObject({ type: 'image', image: { media_id } });

      const unknownType = await get('business/message/capabilities/get/', {
        business_id: account.openId,
        capability_types: '["VIDEO_SEND"]',
        conversation_id: conversationId,
        conversation_type: 'SINGLE',
      });
      expect(unknownType.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^capability_types: /) });
      const noConversation = await get('business/message/capabilities/get/', {
        business_id: account.openId,
        capability_types: '["IMAGE_SEND"]',
      });
      expect(noConversation.body).toMatchObject({ code: 40002, message: 'conversation_id: Missing data for required field.' });
    });

    it('hands out a download link for a user image that needs x-user and lasts 24 hours', async () => {
      const injected = await inject({ imageMediaId: 'user-picture-1', from: userId });
      expect(injected.conversationId).toBe(conversationId);
      const { content } = await pushed('im_receive_msg', (c) => c.message_id === injected.messageId);
      expect(content).toMatchObject({ type: 'image', image: { media_id: 'user-picture-1' } });

      const { download_url } = await getMessageMediaDownload(vplat(), token(), {
        business_id: account.openId,
        conversation_id: conversationId,
        message_id: injected.messageId,
        media_id: 'user-picture-1',
        media_type: 'IMAGE',
      });
      expect(download_url.startsWith(sb.url)).toBe(true);
      expect((await fetch(download_url)).status).toBe(403);
      expect((await fetch(download_url, { headers: { 'x-user': other.tokens.access_token } })).status).toBe(403);
      const ok = await fetch(download_url, { headers: { 'x-user': token() } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toBe('image/png');
      expect(
        Buffer.from(await ok.arrayBuffer())
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');

      const wrongMedia = await post('business/message/media/download/', {
        business_id: account.openId,
        conversation_id: conversationId,
        message_id: injected.messageId,
        media_id: 'other',
        media_type: 'IMAGE',
      });
      expect(wrongMedia.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^media_id: /) });

      await advance(25 * HOUR);
      expect((await fetch(download_url, { headers: { 'x-user': token() } })).status).toBe(403);
    });

    it('allows 10 business messages per user message within 48 hours (40064 beyond)', async () => {
      const { conversationId: id } = await inject({ text: 'count with me' });
      for (let i = 1; i <= 10; i++) await sendText(id, `reply ${i}`);
      const eleventh = await send({ recipient: id, message_type: 'TEXT', text: { body: 'reply 11' } });
      expect(eleventh.body).toEqual({
        code: 40064,
        message: expect.stringContaining('at most 10 messages within 48 hours'),
        request_id: expect.any(String),
        data: {},
      });
      const err = await clientError(sendText(id, 'reply 11'));
      expect(err.failure).toMatchObject({ officialCode: 40064, failureClass: 'permission' });

      await inject({ conversationId: id, text: 'again' });
      await sendText(id, 'window reopened');
      await advance(49 * HOUR);
      const late = await send({ recipient: id, message_type: 'TEXT', text: { body: 'too late' } });
      expect(late.body).toMatchObject({ code: 40064, message: expect.stringContaining('48 hours') });
      expect(
        (
          await getMessagingCapabilities(vplat(), token(), {
            business_id: account.openId,
            capability_types: ['IMAGE_SEND'],
            conversation_id: id,
            conversation_type: 'SINGLE',
          })
        ).capability_infos[0]!.capability_result,
      ).toBe(false);
    });

    it('pages conversations with limit and cursor', async () => {
      const all = await listConversations(vplat(), token(), { business_id: account.openId, conversation_type: 'SINGLE' });
      expect(all.conversations.length).toBeGreaterThanOrEqual(2);
      const first = await listConversations(vplat(), token(), { business_id: account.openId, conversation_type: 'SINGLE', limit: 1 });
      expect(first).toEqual({ conversations: [all.conversations[0]], has_more: true, cursor: 1 });
      const updates = all.conversations.map((c) => c.update_time);
      expect(updates).toEqual([...updates].sort((a, b) => b - a));
      const bad = await get('business/message/conversation/list/', { business_id: account.openId, conversation_type: 'GROUP' });
      expect(bad.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^conversation_type: /) });
    });

    describe('automatic messages', () => {
      const biz = () => ({ business_id: account.openId });

      it('creates a welcome message in review, approves it after a short (virtual) delay, and refuses a second', async () => {
        const created = await createAutoMessage(vplat(), token(), {
          ...biz(),
          auto_message_type: 'WELCOME_MESSAGE',
          welcome_message: { content: 'Hi there!' },
        });
        const id = created.auto_message.auto_message_id;
        const config = await pushed('im_auto_message_config_update', (c) => c.auto_message_id === id);
        expect(config.content).toEqual({
          auto_message_id: id,
          auto_message_type: 'WELCOME_MESSAGE',
          auto_message_action: 'CREATE',
          timestamp: expect.any(Number),
          welcome_message: { content: 'Hi there!' },
        });

        expect(await getAutoMessages(vplat(), token(), { ...biz(), auto_message_type: 'WELCOME_MESSAGE' })).toEqual({
          business_id: account.openId,
          operation_status: 'ENABLE',
          auto_messages: [
            {
              auto_message_id: id,
              auto_message_type: 'WELCOME_MESSAGE',
              audit_status: 'REVIEWING',
              welcome_message: { content: 'Hi there!' },
            },
          ],
        });
        const second = await post('business/message/auto_message/create/', {
          ...biz(),
          auto_message_type: 'WELCOME_MESSAGE',
          welcome_message: { content: 'Another' },
        });
        expect(second.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^auto_message_type: At most 1 WELCOME_MESSAGE/) });
        const inReview = await post('business/message/auto_message/update/', {
          ...biz(),
          auto_message_id: id,
          auto_message_type: 'WELCOME_MESSAGE',
          welcome_message: { content: 'Changed' },
        });
        expect(inReview.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^auto_message_id: .*under review/) });

        await sb.control('POST', '/_sandbox/clock', { advanceMs: 11_000 });
        const audit = await pushed('im_auto_message_audit_update', (c) => c.auto_message_id === id);
        expect(audit.content).toEqual({
          auto_message_id: id,
          auto_message_type: 'WELCOME_MESSAGE',
          audit_status: 'APPROVED',
          timestamp: expect.any(Number),
        });
        const approved = await getAutoMessages(vplat(), token(), { ...biz(), auto_message_type: 'WELCOME_MESSAGE', auto_message_id: id });
        expect(approved.auto_messages[0]!.audit_status).toBe('APPROVED');

        await updateAutoMessage(vplat(), token(), {
          ...biz(),
          auto_message_id: id,
          auto_message_type: 'WELCOME_MESSAGE',
          welcome_message: { content: 'Hello, welcome!' },
        });
        const updated = await getAutoMessages(vplat(), token(), { ...biz(), auto_message_type: 'WELCOME_MESSAGE' });
        expect(updated.auto_messages[0]).toMatchObject({ audit_status: 'REVIEWING', welcome_message: { content: 'Hello, welcome!' } });
        const undeletable = await post('business/message/auto_message/delete/', {
          ...biz(),
          auto_message_id: id,
          auto_message_type: 'WELCOME_MESSAGE',
        });
        expect(undeletable.body).toMatchObject({ code: 40002, message: expect.stringContaining('cannot be deleted') });
      });

      it('greets a new conversation with the approved welcome message', async () => {
        await sb.control('POST', '/_sandbox/clock', { advanceMs: 11_000 });
        await eventually(
          () => getAutoMessages(vplat(), token(), { ...biz(), auto_message_type: 'WELCOME_MESSAGE' }),
          (d) => d.auto_messages[0]?.audit_status === 'APPROVED',
        );
        const { conversationId: id } = await inject({ text: 'first contact' });
        const { messages } = await listMessages(vplat(), token(), { ...biz(), conversation_id: id });
        expect(messages.map((m) => [m.message_type, m.auto_message_type, m.text?.body])).toEqual([
          ['TEXT', undefined, 'first contact'],
          ['TEXT', 'WELCOME_MESSAGE', 'Hello, welcome!'],
        ]);
        await updateAutoMessageStatus(vplat(), token(), { ...biz(), auto_message_type: 'WELCOME_MESSAGE', operation_status: 'DISABLE' });
        const quiet = await inject({ text: 'no greeting' });
        expect((await listMessages(vplat(), token(), { ...biz(), conversation_id: quiet.conversationId })).messages).toHaveLength(1);
        expect((await getAutoMessages(vplat(), token(), { ...biz(), auto_message_type: 'WELCOME_MESSAGE' })).operation_status).toBe(
          'DISABLE',
        );
      });

      it('keeps at most 3 suggested questions, refuses duplicates and deletes', async () => {
        const ids: string[] = [];
        for (const n of [1, 2, 3]) {
          const { auto_message } = await createAutoMessage(vplat(), token(), {
            ...biz(),
            auto_message_type: 'SUGGESTED_QUESTION',
            suggested_question: { question: `Question ${n}?`, answer: `Answer ${n}` },
          });
          ids.push(auto_message.auto_message_id);
        }
        const fourth = await post('business/message/auto_message/create/', {
          ...biz(),
          auto_message_type: 'SUGGESTED_QUESTION',
          suggested_question: { question: 'Q4?', answer: 'A4' },
        });
        expect(fourth.body).toMatchObject({ code: 40002, message: expect.stringContaining('At most 3 SUGGESTED_QUESTION') });
        await deleteAutoMessage(vplat(), token(), { ...biz(), auto_message_type: 'SUGGESTED_QUESTION', auto_message_id: ids[2]! });
        const duplicate = await post('business/message/auto_message/create/', {
          ...biz(),
          auto_message_type: 'SUGGESTED_QUESTION',
          suggested_question: { question: ' question 1? ', answer: 'other' },
        });
        expect(duplicate.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^suggested_question\.question: Duplicates/) });

        const cases: Array<[Record<string, unknown>, RegExp]> = [
          [
            { auto_message_type: 'SUGGESTED_QUESTION', suggested_question: { question: 'x'.repeat(81), answer: 'a' } },
            /^suggested_question\.question: Length must be at most 80/,
          ],
          [{ auto_message_type: 'SUGGESTED_QUESTION', suggested_question: { question: 'q' } }, /^suggested_question\.answer: Missing/],
          [
            {
              auto_message_type: 'SUGGESTED_QUESTION',
              suggested_question: { question: 'q', answer: 'a' },
              chat_prompt: { title: 't', content: 'c' },
            },
            /^chat_prompt: Not allowed/,
          ],
          [
            { auto_message_type: 'CHAT_PROMPT', chat_prompt: { title: 'x'.repeat(19), content: 'c' } },
            /^chat_prompt\.title: Length must be at most 18/,
          ],
          [{ auto_message_type: 'AUTO_REPLY' }, /^auto_message_type: Must be one of/],
        ];
        for (const [body, message] of cases) {
          const res = await post('business/message/auto_message/create/', { ...biz(), ...body });
          expect(res.body).toMatchObject({ code: 40002, message: expect.stringMatching(message) });
        }
        const unknown = await post('business/message/auto_message/delete/', {
          ...biz(),
          auto_message_type: 'SUGGESTED_QUESTION',
          auto_message_id: ids[2],
        });
        expect(unknown.body.code).toBe(40007);
      });

      it('sorts chat prompts and checks the complete list', async () => {
        const ids: string[] = [];
        for (const title of ['Prices', 'Shipping', 'Returns']) {
          ids.push(
            (
              await createAutoMessage(vplat(), token(), {
                ...biz(),
                auto_message_type: 'CHAT_PROMPT',
                chat_prompt: { title, content: `Tell me about ${title}` },
              })
            ).auto_message.auto_message_id,
          );
        }
        const reversed = [...ids].reverse();
        await sortAutoMessages(vplat(), token(), { ...biz(), auto_message_type: 'CHAT_PROMPT', auto_message_ids: reversed });
        const { auto_messages } = await getAutoMessages(vplat(), token(), { ...biz(), auto_message_type: 'CHAT_PROMPT' });
        expect(auto_messages.map((m) => m.auto_message_id)).toEqual(reversed);
        expect(auto_messages[0]).toMatchObject({
          auto_message_type: 'CHAT_PROMPT',
          chat_prompt: { title: 'Returns', content: 'Tell me about Returns' },
        });

        const partial = await post('business/message/auto_message/sort/', {
          ...biz(),
          auto_message_type: 'CHAT_PROMPT',
          auto_message_ids: ids.slice(1),
        });
        expect(partial.body).toMatchObject({ code: 40002, message: expect.stringMatching(/^auto_message_ids: /) });
        const wrongType = await post('business/message/auto_message/sort/', {
          ...biz(),
          auto_message_type: 'SUGGESTED_QUESTION',
          auto_message_ids: [],
        });
        expect(wrongType.body).toMatchObject({
          code: 40002,
          message: expect.stringMatching(/^auto_message_type: Must be one of: CHAT_PROMPT/),
        });
      });
    });
  });

  describe('webhook precision', () => {
    it('carries 19-digit comment ids that survive a plain JSON.parse', async () => {
      const ids = receiver.pushes
        .map((p) => JSON.parse(p.body) as { event: string; content: string })
        .filter((e) => e.event === 'comment.update')
        .map((e) => /"comment_id":(\d+)/.exec(e.content)![1]!);
      expect(ids.length).toBeGreaterThan(3);
      for (const id of ids) {
        expect(id).toMatch(/^\d{19}$/);
        expect(String(JSON.parse(id))).toBe(id);
      }
    });
  });
});
