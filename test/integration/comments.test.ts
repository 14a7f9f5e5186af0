/**
 * The comment routes end to end: real HTTP through the gateway and core to the emulator, each
 * answer compared field by field, through the endpoint's field table, with the official API's own
 * answer for the same account; the validation rules; seat, plan and upstream failures; and an
 * auto-reply consumer that follows the spec's rules for auto-reply consumers.
 */
import http from 'node:http';
import { subscribeToPlatformWebhooks } from '../../core/upstream/vplat/webhooks';
import { camelCase, fromOfficial, type FieldTable } from '../../core/upstream/mapping';
import { UpstreamError } from '../../core/upstream/failures';
import * as official from '../../core/upstream/vplat/comments';
import {
  COMMENT_CREATE_FIELDS,
  COMMENT_LIST_FIELDS,
  COMMENT_REPLY_CREATE_FIELDS,
  COMMENT_REPLY_LIST_FIELDS,
} from '../../core/upstream/vplat/comment-fields';
import { listVideos } from '../../core/upstream/vplat/insights';
import { withoutUrlExpiry } from '../helpers/sandbox';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { verifyAsSpecSays } from '../helpers/spec-signature';
import { createTenant, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

const BASE = '/v1/vplat/v1.3/business/comment';

type Json = Record<string, unknown>;
type Page = { comments: Json[]; cursor: number; hasMore: boolean };

describe('comments: /v1/vplat/v1.3/business/comment/*', () => {
  let env: WorkingStack;
  let tenant: Tenant;
  let account: SandboxAccount;
  let videoId: string;

  beforeAll(async () => {
    env = await startWorkingStack('comments', { stack: { allowInsecureWebhookUrls: true } });
    await subscribeToPlatformWebhooks(env.sb.upstream.vplat, `${env.stack.baseUrl}/webhooks/vplat`);
    tenant = await createTenant(env.stack);
    ({ account } = await bindSandboxSeat(env, tenant, 'business'));
    const { videos } = await listVideos(env.sb.upstream.vplat, token(), { business_id: account.openId });
    videoId = videos[0]!.item_id;
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });
  afterEach(() => env.sb.control('DELETE', '/_sandbox/faults'));

  const token = () => account.tokens.access_token;
  const get = <T = Json>(path: string, query: Record<string, string | number | boolean | string[]>, key = tenant.apiKey) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, String(one));
    return call<T>(env.stack.baseUrl, 'GET', `${BASE}/${path}?${params}`, { key });
  };
  const post = <T = Json>(path: string, json: Json, key = tenant.apiKey) =>
    call<T>(env.stack.baseUrl, 'POST', `${BASE}/${path}`, { key, json });
  const inject = (text: string, extra: Json = {}) =>
    env.sb.control<{ commentId: string; videoId: string }>('POST', `/_sandbox/accounts/${account.openId}/comments`, {
      text,
      videoId,
      ...extra,
    });

  /** Every official field, by the table where it names one, by the joining rule otherwise. */
  function expectSameFields(ours: Json, theirs: object, table: FieldTable): void {
    const expected = fromOfficial(table, theirs as Json);
    expect(withoutUrlExpiry(ours)).toEqual(withoutUrlExpiry(expected));
    for (const [service, path] of table) {
      const value = (theirs as Json)[path];
      if (value !== undefined && !Array.isArray(value)) expect(withoutUrlExpiry(ours[service])).toEqual(withoutUrlExpiry(value));
    }
  }

  function expectSameComment(ours: Json, theirs: official.Comment): void {
    for (const [key, value] of Object.entries(theirs)) {
      if (key === 'reply_list') {
        const replies = ours.replyList as Json[];
        expect(replies).toHaveLength((value as official.Comment[]).length);
        (value as official.Comment[]).forEach((r, i) => expectSameComment(replies[i]!, r));
      } else {
        expect(withoutUrlExpiry(ours[camelCase(key)])).toEqual(withoutUrlExpiry(value));
      }
    }
    expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).map(camelCase).sort());
  }

  describe('each route against the official answer', () => {
    it('lists comments with replies, flattened field by field', async () => {
      const top = await inject('first!');
      await inject('a reply', { parentCommentId: top.commentId });
      const query = {
        business_id: account.openId,
        video_id: videoId,
        include_replies: true,
        sort_field: 'create_time' as const,
        sort_order: 'desc' as const,
        max_count: 5,
      };
      const theirs = await official.listComments(env.sb.upstream.vplat, token(), query);
      const res = await get<Page>('list', {
        account: account.username,
        videoId,
        includeReplies: true,
        sortField: 'create_time',
        sortOrder: 'desc',
        maxCount: 5,
      });
      expect(res.status).toBe(200);
      expect(res.body.code).toBe(0);
      expectSameFields(res.body.data, theirs, COMMENT_LIST_FIELDS);
      expect(res.body.data.comments.length).toBeGreaterThan(0);
      res.body.data.comments.forEach((c, i) => expectSameComment(c, theirs.comments[i]!));
      const withReplies = res.body.data.comments.find((c) => c.commentId === top.commentId)!;
      expect(withReplies.replyList).toHaveLength(1);
      expect(withReplies.replies).toBe(1);
    });

    it('pages with cursor and selects by commentIds (businessId as account)', async () => {
      const a = await inject('pick me');
      const b = await inject('and me');
      const picked = await get<Page>('list', { account: account.openId, videoId, commentIds: [a.commentId, b.commentId] });
      expect(picked.body.code).toBe(0);
      expect(picked.body.data.comments.map((c) => c.commentId).sort()).toEqual([a.commentId, b.commentId].sort());
      const first = await get<Page>('list', { account: account.openId, videoId, maxCount: 1 });
      expect(first.body.data).toMatchObject({ cursor: 1, hasMore: true });
      const second = await get<Page>('list', { account: account.openId, videoId, maxCount: 1, cursor: first.body.data.cursor });
      expect(second.body.data.comments[0]!.commentId).not.toBe(first.body.data.comments[0]!.commentId);
    });

    it('lists replies of a comment', async () => {
      const top = await inject('thread start');
      await inject('reply one', { parentCommentId: top.commentId });
      await inject('reply two', { parentCommentId: top.commentId });
      const theirs = await official.listCommentReplies(env.sb.upstream.vplat, token(), {
        business_id: account.openId,
        video_id: videoId,
        comment_id: top.commentId,
        sort_field: 'create_time',
        sort_order: 'asc',
      });
      const res = await get<Page>('reply/list', {
        account: account.username,
        videoId,
        commentId: top.commentId,
        sortField: 'create_time',
        sortOrder: 'asc',
      });
      expect(res.body.code).toBe(0);
      expectSameFields(res.body.data, theirs, COMMENT_REPLY_LIST_FIELDS);
      expect(res.body.data.comments.map((c) => c.text)).toEqual(['reply one', 'reply two']);
      res.body.data.comments.forEach((c, i) => expectSameComment(c, theirs.comments[i]!));
      expect(res.body.data.comments[0]!.parentCommentId).toBe(top.commentId);
    });

    it('creates a comment as the account', async () => {
      const res = await post('create', { account: account.username, videoId, text: 'Thanks for watching!' });
      expect(res.body.code).toBe(0);
      const [theirs] = (
        await official.listComments(env.sb.upstream.vplat, token(), {
          business_id: account.openId,
          video_id: videoId,
          comment_ids: [res.body.data.commentId as string],
        })
      ).comments;
      expect(theirs).toMatchObject({ text: 'Thanks for watching!', owner: true, video_id: videoId, username: account.username });
      const created: official.CommentCreateData = {
        comment_id: theirs!.comment_id,
        video_id: theirs!.video_id,
        user_id: theirs!.user_id,
        unique_identifier: theirs!.unique_identifier,
        create_time: theirs!.create_time,
        text: theirs!.text,
      };
      expectSameFields(res.body.data, created, COMMENT_CREATE_FIELDS);
      expect(Object.keys(res.body.data).sort()).toEqual(['commentId', 'createTime', 'text', 'uniqueIdentifier', 'userId', 'videoId']);
    });

    it('replies to a comment, and a reply to a reply joins the top-level thread', async () => {
      const top = await inject('question?');
      const res = await post('reply/create', { account: account.username, videoId, commentId: top.commentId, text: 'answer.' });
      expect(res.body.code).toBe(0);
      expect(res.body.data).toMatchObject({ parentCommentId: top.commentId, videoId, text: 'answer.' });
      const theirs = await official.listCommentReplies(env.sb.upstream.vplat, token(), {
        business_id: account.openId,
        video_id: videoId,
        comment_id: top.commentId,
      });
      const mine = theirs.comments.find((c) => c.comment_id === res.body.data.commentId)!;
      const { comment_id, video_id, user_id, unique_identifier, create_time, text, parent_comment_id } = mine;
      expectSameFields(
        res.body.data,
        { comment_id, video_id, user_id, unique_identifier, create_time, text, parent_comment_id },
        COMMENT_REPLY_CREATE_FIELDS,
      );
      const nested = await post('reply/create', {
        account: account.username,
        videoId,
        commentId: res.body.data.commentId as string,
        text: 'more.',
      });
      expect(nested.body.data.parentCommentId).toBe(top.commentId);
    });

    it('likes and unlikes a comment', async () => {
      const c = await inject('like me');
      const liked = await post('like', { account: account.username, commentId: c.commentId, action: 'LIKE' });
      expect(liked.body).toEqual({ code: 0, message: 'ok', data: {} });
      const read = async () =>
        (
          await official.listComments(env.sb.upstream.vplat, token(), {
            business_id: account.openId,
            video_id: videoId,
            comment_ids: [c.commentId],
          })
        ).comments[0]!;
      expect(await read()).toMatchObject({ liked: true, likes: 1 });
      expect((await post('like', { account: account.username, commentId: c.commentId, action: 'UNLIKE' })).body.code).toBe(0);
      expect(await read()).toMatchObject({ liked: false, likes: 0 });
    });

    it('hides and restores a comment', async () => {
      const c = await inject('hide me');
      const hidden = await post('hide', { account: account.username, videoId, commentId: c.commentId, action: 'HIDE' });
      expect(hidden.body).toEqual({ code: 0, message: 'ok', data: {} });
      const status = async (s: 'PUBLIC' | 'ALL') =>
        (await get<Page>('list', { account: account.username, videoId, commentIds: [c.commentId], status: s })).body.data.comments;
      expect(await status('PUBLIC')).toEqual([]);
      expect((await status('ALL'))[0]).toMatchObject({ status: 'HIDDEN' });
      expect((await post('hide', { account: account.username, videoId, commentId: c.commentId, action: 'UNHIDE' })).body.code).toBe(0);
      expect((await status('PUBLIC'))[0]).toMatchObject({ status: 'PUBLIC' });
    });

    it('deletes an own comment', async () => {
      const mine = await post('create', { account: account.username, videoId, text: 'to be deleted' });
      const res = await post('delete', { account: account.username, commentId: mine.body.data.commentId as string });
      expect(res.body).toEqual({ code: 0, message: 'ok', data: {} });
      const left = await official.listComments(env.sb.upstream.vplat, token(), {
        business_id: account.openId,
        video_id: videoId,
        comment_ids: [mine.body.data.commentId as string],
      });
      expect(left.comments).toEqual([]);
    });

    it("refuses to delete another user's comment with 3001 and the official message", async () => {
      const theirs = await inject('not yours to delete');
      const officialError = await official
        .deleteComment(env.sb.upstream.vplat, token(), { business_id: account.openId, comment_id: theirs.commentId })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(officialError).toBeInstanceOf(UpstreamError);
      const res = await post('delete', { account: account.username, commentId: theirs.commentId });
      expect(res.status).toBe(502);
      expect(res.body.code).toBe(3001);
      expect(res.body.message).toBe((officialError as UpstreamError).message);
      expect(res.body.message).toMatch(/Only comments created by the account can be deleted/);
    });

    it('passes an official refusal of a bad id through as 3001', async () => {
      const res = await post('like', { account: account.username, commentId: '123', action: 'LIKE' });
      expect(res.body.code).toBe(3001);
    });
  });

  describe('validation: 2001 naming the field, before any upstream call', () => {
    const cases: Array<[string, 'GET' | 'POST', string, () => Json, RegExp]> = [
      ['list without videoId', 'GET', 'list', () => ({ account: account.username }), /videoId/],
      ['list without account', 'GET', 'list', () => ({ videoId }), /account/],
      ['list maxCount 0', 'GET', 'list', () => ({ account: account.username, videoId, maxCount: 0 }), /maxCount/],
      ['list maxCount 31', 'GET', 'list', () => ({ account: account.username, videoId, maxCount: 31 }), /maxCount/],
      ['list maxCount not a number', 'GET', 'list', () => ({ account: account.username, videoId, maxCount: 'many' }), /maxCount/],
      ['list cursor negative', 'GET', 'list', () => ({ account: account.username, videoId, cursor: -1 }), /cursor/],
      [
        'list includeReplies not a boolean',
        'GET',
        'list',
        () => ({ account: account.username, videoId, includeReplies: 'perhaps' }),
        /includeReplies/,
      ],
      ['list sortField unknown', 'GET', 'list', () => ({ account: account.username, videoId, sortField: 'views' }), /sortField/],
      ['list sortOrder unknown', 'GET', 'list', () => ({ account: account.username, videoId, sortOrder: 'up' }), /sortOrder/],
      ['list status unknown', 'GET', 'list', () => ({ account: account.username, videoId, status: 'HIDDEN' }), /status/],
      [
        'list 31 commentIds',
        'GET',
        'list',
        () => ({ account: account.username, videoId, commentIds: Array.from({ length: 31 }, (_, i) => String(i + 1)) }),
        /commentIds/,
      ],
      ['list unknown parameter', 'GET', 'list', () => ({ account: account.username, videoId, video_id: videoId }), /video_id/],
      ['reply list without commentId', 'GET', 'reply/list', () => ({ account: account.username, videoId }), /commentId/],
      ['create without text', 'POST', 'create', () => ({ account: account.username, videoId }), /text/],
      ['create with empty text', 'POST', 'create', () => ({ account: account.username, videoId, text: '' }), /text/],
      ['create text 1,201 characters', 'POST', 'create', () => ({ account: account.username, videoId, text: 'x'.repeat(1201) }), /text/],
      [
        'create text of 601 emoji (1,202 UTF-16 units)',
        'POST',
        'create',
        () => ({ account: account.username, videoId, text: '😀'.repeat(601) }),
        /text/,
      ],
      ['create text a number', 'POST', 'create', () => ({ account: account.username, videoId, text: 5 }), /text/],
      ['create videoId a number', 'POST', 'create', () => ({ account: account.username, videoId: 7, text: 'hi' }), /videoId/],
      ['create imageUri without its size', 'POST', 'create', () => ({ account: account.username, videoId, imageUri: 'img' }), /imageWidth/],
      ['create unknown field', 'POST', 'create', () => ({ account: account.username, videoId, text: 'hi', video_id: videoId }), /video_id/],
      ['reply without commentId', 'POST', 'reply/create', () => ({ account: account.username, videoId, text: 'hi' }), /commentId/],
      [
        'reply text too long',
        'POST',
        'reply/create',
        () => ({ account: account.username, videoId, commentId: '1', text: 'x'.repeat(1201) }),
        /text/,
      ],
      ['like action unknown', 'POST', 'like', () => ({ account: account.username, commentId: '1', action: 'LOVE' }), /action/],
      ['like action lowercase', 'POST', 'like', () => ({ account: account.username, commentId: '1', action: 'like' }), /action/],
      ['like without action', 'POST', 'like', () => ({ account: account.username, commentId: '1' }), /action/],
      ['hide action unknown', 'POST', 'hide', () => ({ account: account.username, videoId, commentId: '1', action: 'RESTORE' }), /action/],
      ['hide without videoId', 'POST', 'hide', () => ({ account: account.username, commentId: '1', action: 'HIDE' }), /videoId/],
      ['delete without commentId', 'POST', 'delete', () => ({ account: account.username }), /commentId/],
      ['delete commentId an object', 'POST', 'delete', () => ({ account: account.username, commentId: { id: 1 } }), /commentId/],
    ];
    it.each(cases)('%s', async (_name, method, path, body, field) => {
      const res = method === 'GET' ? await get(path, body() as Record<string, string>) : await post(path, body());
      expect(res.status).toBe(422);
      expect(res.body.code).toBe(2001);
      expect(res.body.message).toMatch(field);
    });

    it('accepts exactly 1,200 characters', async () => {
      const res = await post('create', { account: account.username, videoId, text: 'y'.repeat(1200) });
      expect(res.body.code).toBe(0);
      expect((res.body.data.text as string).length).toBe(1200);
    });

    it('answers a body that is not JSON with 2001, never 5000', async () => {
      const res = await call(env.stack.baseUrl, 'POST', `${BASE}/create`, {
        key: tenant.apiKey,
        body: '{"account":',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.body.code).toBe(2001);
      const array = await post('like', [] as unknown as Json);
      expect(array.body.code).toBe(2001);
    });
  });

  describe('seats, plans and the upstream', () => {
    it("answers 1007 for an account none of the caller's seats holds", async () => {
      const other = await createTenant(env.stack);
      const { account: theirs } = await bindSandboxSeat(env, other, 'business');
      for (const res of [
        await get('list', { account: theirs.username, videoId }),
        await post('create', { account: theirs.username, videoId, text: 'hi' }),
        await post('delete', { account: 'nobody-at-all', commentId: '1' }),
      ]) {
        expect(res.status).toBe(409);
        expect(res.body.code).toBe(1007);
      }
    });

    it('lets an expired plan read and refuses its writes with 1003', async () => {
      const expired = await createTenant(env.stack, { planExpiresAt: new Date(Date.now() - 60_000) });
      const { account: own } = await bindSandboxSeat(env, expired, 'business');
      const { videos } = await listVideos(env.sb.upstream.vplat, own.tokens.access_token, { business_id: own.openId });
      const read = await get<Page>('list', { account: own.username, videoId: videos[0]!.item_id }, expired.apiKey);
      expect(read.body.code).toBe(0);
      for (const [path, body] of [
        ['create', { account: own.username, videoId: videos[0]!.item_id, text: 'hi' }],
        ['reply/create', { account: own.username, videoId: videos[0]!.item_id, commentId: '1', text: 'hi' }],
        ['like', { account: own.username, commentId: '1', action: 'LIKE' }],
        ['hide', { account: own.username, videoId: videos[0]!.item_id, commentId: '1', action: 'HIDE' }],
        ['delete', { account: own.username, commentId: '1' }],
      ] as const) {
        const res = await post(path, body, expired.apiKey);
        expect(res.status).toBe(403);
        expect(res.body.code).toBe(1003);
      }
    });

    it('surfaces an official server error as 3001 with the official message', async () => {
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        count: 1,
        pathPrefix: '/open_api/v1.3/business/comment/list/',
      });
      const res = await get('list', { account: account.username, videoId });
      expect(res.status).toBe(502);
      expect(res.body.code).toBe(3001);
      expect(res.body.message).not.toBe('');
      expect(res.body.data).toMatchObject({ platform: 'vplat', officialCode: 50000 });
    });

    it('surfaces an official call that hangs past the 2 s timeout as 3002', async () => {
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'hang',
        count: 1,
        hangMs: 3_000,
        pathPrefix: '/open_api/v1.3/business/comment/create/',
      });
      const res = await post('create', { account: account.username, videoId, text: 'slow' });
      expect(res.status).toBe(504);
      expect(res.body.code).toBe(3002);
    }, 15_000);
  });

  describe("an auto-reply consumer following the spec's rules", () => {
    let server: http.Server;
    afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

    it('replies once to a third-party comment and never to its own reply', async () => {
      // A tenant of its own, so no event of the other tests reaches this consumer.
      const owner = await createTenant(env.stack);
      const { account: bot } = await bindSandboxSeat(env, owner, 'business');
      const { videos } = await listVideos(env.sb.upstream.vplat, bot.tokens.access_token, { business_id: bot.openId });
      const seen: Array<{ type: string; data: Json }> = [];
      const replies: Array<{ code: number; data: Json }> = [];
      let secret = '';
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          // Answer at once, as the platform's and our deliveries expect; the work follows.
          res.writeHead(200).end();
          const raw = Buffer.concat(chunks).toString('utf8');
          if (!verifyAsSpecSays(req.headers['x-service-signature'] as string, raw, secret, Math.floor(Date.now() / 1000))) return;
          const event = JSON.parse(raw) as { type: string; data: Json };
          seen.push(event);
          // Rule 2: only a top-level comment (parent 0, a number) is replied to; our own reply has a parent.
          if (event.type !== 'vplat.comment.created' || event.data.parent_comment_id !== 0) return;
          void post(
            'reply/create',
            {
              account: bot.username,
              videoId: String(event.data.video_id),
              commentId: String(event.data.comment_id),
              text: `Thanks, ${String(event.data.unique_identifier).slice(0, 8)}!`,
            },
            owner.apiKey,
          ).then((r) => replies.push(r.body));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      // Rule 1: subscribed to vplat.comment.created only.
      const ep = await call<{ secret: string }>(env.stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
        key: owner.apiKey,
        json: { url: `http://127.0.0.1:${port}/hook`, eventTypes: ['vplat.comment.created'] },
      });
      expect(ep.body.code).toBe(0);
      secret = ep.body.data.secret;

      const theirs = await env.sb.control<{ commentId: string }>('POST', `/_sandbox/accounts/${bot.openId}/comments`, {
        text: 'Where can I buy this?',
        videoId: videos[0]!.item_id,
      });
      await eventually(
        async () => seen,
        (s) => s.some((e) => e.data.parent_comment_id !== 0),
        20_000,
      );
      // Time for a loop to show itself, were the consumer to answer its own reply.
      await new Promise((resolve) => setTimeout(resolve, 1_500));

      expect(replies).toHaveLength(1);
      expect(replies[0]!.code).toBe(0);
      const thread = await official.listCommentReplies(env.sb.upstream.vplat, bot.tokens.access_token, {
        business_id: bot.openId,
        video_id: videos[0]!.item_id,
        comment_id: theirs.commentId,
      });
      expect(thread.comments).toHaveLength(1);
      expect(thread.comments[0]).toMatchObject({ owner: true, parent_comment_id: theirs.commentId });
      const ownReplyEvent = seen.find((e) => e.data.comment_id === replies[0]!.data.commentId);
      expect(ownReplyEvent).toMatchObject({ type: 'vplat.comment.created', data: { parent_comment_id: theirs.commentId } });
      expect(seen.every((e) => e.type === 'vplat.comment.created')).toBe(true);
    }, 40_000);
  });
});
