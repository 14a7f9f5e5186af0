/**
 * Direct messages and automatic messages through real HTTP against the emulator: every route's
 * flattened answer compared with the official API called directly and mapped through the same
 * field table; the exactly-one-of rule of a send; the IMAGE_SEND check; media expiry; automatic
 * messages through their review; the seat, plan and upstream failures; one event per send.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createVpsClient } from '../../sdk/client';
import { fromOfficial } from '../../core/upstream/mapping';
import {
  AUTO_MESSAGE_GET_ANSWER,
  CAPABILITIES_ANSWER,
  CONVERSATION_LIST_ANSWER,
  MESSAGE_LIST_ANSWER,
} from '../../core/upstream/vplat/message-fields';
import * as official from '../../core/upstream/vplat/messages';
import { subscribeToPlatformWebhooks } from '../../core/upstream/vplat/webhooks';
import { eventually } from '../helpers/receivers';
import { call, type Envelope } from '../helpers/http';
import { jpeg, png } from '../helpers/images';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

const BASE = '/v1/vplat/v1.3/business/message';
type Data = Record<string, unknown> & { items?: Array<Record<string, unknown>> };

describe('direct messages', () => {
  let env: WorkingStack;
  let stack: Stack;
  let tenant: Tenant;
  let account: SandboxAccount;

  beforeAll(async () => {
    env = await startWorkingStack('messages');
    stack = env.stack;
    tenant = await createTenant(stack);
    ({ account } = await bindSandboxSeat(env, tenant, 'business'));
  }, 120_000);
  afterEach(() => env.sb.control('DELETE', '/_sandbox/faults'));
  afterAll(async () => {
    await env?.close();
  });

  const token = () => account.tokens.access_token;
  const vplat = () => env.sb.upstream.vplat;
  const get = (path: string, query: Record<string, string | string[]>, key = tenant.apiKey) => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) for (const one of [v].flat()) qs.append(k, one);
    return call<Data>(stack.baseUrl, 'GET', `${BASE}/${path}?${qs.toString()}`, { key });
  };
  const post = (path: string, json: Record<string, unknown>, key = tenant.apiKey) =>
    call<Data>(stack.baseUrl, 'POST', `${BASE}/${path}`, { key, json });
  const send = (json: Record<string, unknown>) => post('send', { account: account.openId, ...json });

  /** A user writes to the account: a conversation exists (STRANGER until the business replies). */
  const userWrites = (text = 'hello there', conversationId?: string) =>
    env.sb.control<{ conversationId: string; messageId: string; from: string }>('POST', `/_sandbox/accounts/${account.openId}/messages`, {
      text,
      ...(conversationId ? { conversationId } : {}),
    });

  const upload = async (
    bytes: Buffer,
    opts: { account?: string; fileName?: string; key?: string; accountAfterFile?: boolean } = {},
  ): Promise<Envelope<Data>> => {
    const form = new FormData();
    if (!opts.accountAfterFile) form.append('account', opts.account ?? account.openId);
    form.append('file', new Blob([bytes], { type: 'image/png' }), opts.fileName ?? 'picture.png');
    if (opts.accountAfterFile) form.append('account', opts.account ?? account.openId);
    const res = await fetch(`${stack.baseUrl}${BASE}/media/upload`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${opts.key ?? tenant.apiKey}` },
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Envelope<Data>['body'] };
  };

  const expectCode = (res: Envelope<Data>, code: number) => {
    expect({ code: res.body.code, message: res.body.message }).toEqual({ code, message: expect.any(String) });
  };

  describe('reading', () => {
    it('lists conversations and their messages as the official API does, flattened by the field tables', async () => {
      const { conversationId } = await userWrites('is the shop open?');
      const listed = await get('conversation/list', { account: account.openId, conversationType: 'STRANGER' });
      expect(listed.body.code).toBe(0);
      const direct = await official.listConversations(vplat(), token(), { business_id: account.openId, conversation_type: 'STRANGER' });
      expect(listed.body.data).toEqual(fromOfficial(CONVERSATION_LIST_ANSWER, direct as never));
      expect(listed.body.data.items).toContainEqual(expect.objectContaining({ conversationId, updateTime: expect.any(Number) }));
      expect(listed.body.data).toMatchObject({ hasMore: false, cursor: expect.any(Number) });

      const messages = await get('content/list', { account: account.openId, conversationId });
      expect(messages.body.code).toBe(0);
      const directMessages = await official.listMessages(vplat(), token(), {
        business_id: account.openId,
        conversation_id: conversationId,
      });
      expect(messages.body.data).toEqual(fromOfficial(MESSAGE_LIST_ANSWER, directMessages as never));
      expect(messages.body.data.items![0]).toMatchObject({
        conversationId,
        messageType: 'TEXT',
        textBody: 'is the shop open?',
        fromUserRole: 'PERSONAL_ACCOUNT',
        messageTagSource: 'APP',
      });
      expect(messages.body.data.participants).toContainEqual(expect.objectContaining({ role: 'BUSINESS_ACCOUNT', id: account.openId }));
    });

    it('pages conversations with limit and cursor', async () => {
      await userWrites('one');
      await userWrites('two');
      const first = await get('conversation/list', { account: account.openId, conversationType: 'STRANGER', limit: '1' });
      expect(first.body.data).toMatchObject({ hasMore: true, cursor: 1 });
      expect(first.body.data.items).toHaveLength(1);
      const second = await get('conversation/list', { account: account.openId, conversationType: 'STRANGER', limit: '1', cursor: '1' });
      expect(second.body.data.items![0]!.conversationId).not.toBe(first.body.data.items![0]!.conversationId);
    });

    it('answers capabilities as the official API does', async () => {
      const { conversationId } = await userWrites();
      const res = await get('capabilities/get', {
        account: account.openId,
        conversationId,
        conversationType: 'STRANGER',
        capabilityTypes: 'IMAGE_SEND',
      });
      expect(res.body.code).toBe(0);
      const direct = await official.getMessagingCapabilities(vplat(), token(), {
        business_id: account.openId,
        capability_types: ['IMAGE_SEND'],
        conversation_id: conversationId,
        conversation_type: 'STRANGER',
      });
      expect(res.body.data).toEqual(fromOfficial(CAPABILITIES_ANSWER, direct as never));
      expect(res.body.data.items).toEqual([{ capabilityType: 'IMAGE_SEND', capabilityResult: false }]);
    });
  });

  describe('POST message/send', () => {
    it('refuses no content and two kinds at once with 2001 naming the fields', async () => {
      const { conversationId } = await userWrites();
      const none = await send({ conversationId });
      expectCode(none, 2001);
      expect(none.body.message).toMatch(
        /exactly one of text, imageMediaId, sharePostItemId, templateType\/templateTitle\/templateButtons, senderAction/,
      );

      const two = await send({ conversationId, text: 'hi', senderAction: 'TYPING' });
      expectCode(two, 2001);
      expect(two.body.message).toMatch(/^text, senderAction: /);
      expect(two.body.data).toMatchObject({ field: 'text', fields: ['text', 'senderAction'] });

      const three = await send({ conversationId, imageMediaId: 'm', sharePostItemId: 'p', templateTitle: 'Q' });
      expectCode(three, 2001);
      expect(three.body.data).toMatchObject({ fields: ['imageMediaId', 'sharePostItemId', 'templateTitle'] });

      const quoted = await send({ conversationId, senderAction: 'MARK_READ', referencedMessageId: 'x' });
      expectCode(quoted, 2001);
      expect(quoted.body.message).toMatch(/^referencedMessageId: /);
      // Nothing reached the platform.
      const calls = await env.sb.control<{ calls: unknown[] }>(
        'GET',
        `/_sandbox/calls?path=/open_api/v1.3/business/message/send/&openId=${account.openId}`,
      );
      expect(calls.calls).toHaveLength(0);
    });

    it('sends each kind alone: typing, read receipt, text, quoted text, QA card, shared post', async () => {
      const { conversationId, messageId: userMessageId } = await userWrites('question?');
      const typing = await send({ conversationId, senderAction: 'TYPING' });
      expect(typing.body).toMatchObject({ code: 0, data: { messageId: '' } });
      const read = await send({ conversationId, senderAction: 'MARK_READ' });
      expect(read.body).toMatchObject({ code: 0, data: { messageId: '' } });

      const text = await send({ conversationId, text: 'Hello 👋' });
      expect(text.body).toMatchObject({ code: 0, data: { messageId: expect.stringMatching(/.+/) } });
      const quoted = await send({ conversationId, text: 'About that:', referencedMessageId: userMessageId });
      expect(quoted.body.code).toBe(0);
      const card = await send({
        conversationId,
        templateType: 'QA_BUTTON_CARD',
        templateTitle: 'What do you need?',
        templateButtons: [{ title: 'Prices', id: 'prices' }, { title: 'Hours' }],
      });
      expect(card.body.code).toBe(0);
      const itemId = env.sb.sandbox.context.posts.list(account.openId)[0]!.itemId;
      const shared = await send({ conversationId, sharePostItemId: itemId });
      expect(shared.body.code).toBe(0);

      const listed = await get('content/list', { account: account.openId, conversationId });
      const byId = new Map(listed.body.data.items!.map((m) => [m.messageId, m]));
      expect(byId.get(text.body.data.messageId)).toMatchObject({
        messageType: 'TEXT',
        textBody: 'Hello 👋',
        fromUserRole: 'BUSINESS_ACCOUNT',
        messageTagSource: 'API',
      });
      expect(byId.get(quoted.body.data.messageId)).toMatchObject({ referencedMessageInfoReferencedMessageId: userMessageId });
      expect(byId.get(card.body.data.messageId)).toMatchObject({
        messageType: 'TEMPLATE',
        templateType: 'QA_BUTTON_CARD',
        templateTitle: 'What do you need?',
        templateButtons: [
          { type: 'REPLY', title: 'Prices', id: 'prices' },
          { type: 'REPLY', title: 'Hours' },
        ],
      });
      expect(byId.get(shared.body.data.messageId)).toMatchObject({
        messageType: 'SHARE_POST',
        sharePostEmbedUrl: expect.stringContaining(itemId),
      });
    });

    it('checks IMAGE_SEND before an image: refused with 3001 in a STRANGER conversation, sent once the business replied', async () => {
      const { conversationId } = await userWrites('can you show me?');
      const uploaded = await upload(png(32, 32));
      expect(uploaded.body.code).toBe(0);
      const mediaId = String(uploaded.body.data.mediaId);

      const refused = await send({ conversationId, imageMediaId: mediaId });
      expectCode(refused, 3001);
      expect(refused.status).toBe(502);
      expect(refused.body.message).toMatch(/^IMAGE_SEND: /);
      expect(refused.body.data).toMatchObject({ capability: 'IMAGE_SEND', capabilityResult: false, retryable: false });
      const sends = () =>
        env.sb.control<{ calls: unknown[] }>('GET', `/_sandbox/calls?path=/open_api/v1.3/business/message/send/&openId=${account.openId}`);
      const before = (await sends()).calls.length;

      expect((await send({ conversationId, text: 'Sure, one moment' })).body.code).toBe(0);
      const image = await send({ conversationId, imageMediaId: mediaId });
      expect(image.body).toMatchObject({ code: 0, data: { messageId: expect.stringMatching(/.+/) } });
      // The refusal never reached message/send; the text and the image did.
      expect((await sends()).calls.length).toBe(before + 2);

      // media/download: an address valid 24 hours, served with the account's token in x-user.
      const started = Date.now();
      const download = await post('media/download', {
        account: account.openId,
        conversationId,
        messageId: image.body.data.messageId,
        mediaId,
        mediaType: 'IMAGE',
      });
      expect(download.body.code).toBe(0);
      expect(download.body.data).toEqual({ downloadUrl: expect.stringMatching(/^http/), expiresAt: expect.any(String) });
      const expiresAt = Date.parse(String(download.body.data.expiresAt));
      expect(expiresAt).toBeGreaterThanOrEqual(started + 24 * 3_600_000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 24 * 3_600_000 + 1000);
      const bytes = await fetch(String(download.body.data.downloadUrl), { headers: { 'x-user': token() } });
      expect(bytes.status).toBe(200);
      expect(Buffer.from(await bytes.arrayBuffer()).equals(png(32, 32))).toBe(true);

      // media/content: the same bytes with only the API key; the service holds the token.
      const media = {
        account: account.openId,
        conversationId,
        messageId: image.body.data.messageId as string,
        mediaId,
        mediaType: 'IMAGE' as const,
      };
      const query = new URLSearchParams(media);
      const relayed = await fetch(`${stack.baseUrl}${BASE}/media/content?${query}`, {
        headers: { authorization: `Bearer ${tenant.apiKey}` },
      });
      expect(relayed.status).toBe(200);
      expect(relayed.headers.get('content-type')).toBe('image/png');
      expect(relayed.headers.get('cache-control')).toBe('private, no-store');
      // Whatever a correspondent sent is saved as a file, never rendered in the API's origin.
      expect(relayed.headers.get('content-disposition')).toBe('attachment');
      expect(relayed.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await relayed.arrayBuffer()).equals(png(32, 32))).toBe(true);
      const viaSdk = await createVpsClient({ baseUrl: stack.baseUrl, apiKey: tenant.apiKey }).messages.fetchMedia({ query: media });
      expect(viaSdk.contentType).toBe('image/png');
      expect(Buffer.from(viaSdk.bytes).equals(png(32, 32))).toBe(true);
      // A media id the platform does not know is its refusal, in the envelope, before any byte.
      query.set('mediaId', 'no-such-media');
      const unknown = await fetch(`${stack.baseUrl}${BASE}/media/content?${query}`, {
        headers: { authorization: `Bearer ${tenant.apiKey}` },
      });
      expect(unknown.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await unknown.json()) as { code: number }).code).toBe(3001);
    });

    it('refuses media/content without a key (1001), for an account of no seat (1007), and with a missing field (2001)', async () => {
      const query = new URLSearchParams({ account: account.openId, conversationId: 'c', messageId: 'm', mediaId: 'x', mediaType: 'IMAGE' });
      const anonymous = await fetch(`${stack.baseUrl}${BASE}/media/content?${query}`);
      expect([anonymous.status, ((await anonymous.json()) as { code: number }).code]).toEqual([401, 1001]);
      const other = new URLSearchParams(query);
      other.set('account', 'nobody-here');
      const unbound = await fetch(`${stack.baseUrl}${BASE}/media/content?${other}`, {
        headers: { authorization: `Bearer ${tenant.apiKey}` },
      });
      expect(((await unbound.json()) as { code: number }).code).toBe(1007);
      query.delete('mediaId');
      const missing = await fetch(`${stack.baseUrl}${BASE}/media/content?${query}`, {
        headers: { authorization: `Bearer ${tenant.apiKey}` },
      });
      expect(await missing.json()).toMatchObject({ code: 2001, message: expect.stringContaining('mediaId') });
    });

    it('logs one vplat.message.sent per message sent, with the official field names, and none for a typing indicator', async () => {
      const { conversationId } = await userWrites();
      const sent = await send({ conversationId, text: 'logged once' });
      expect(sent.body.code).toBe(0);
      await send({ conversationId, senderAction: 'TYPING' });
      const events = await call<{ items: Array<{ type: string; event: string; data: Record<string, unknown> }> }>(
        stack.baseUrl,
        'GET',
        '/v1/events?types=vplat.message.sent&limit=100',
        { key: tenant.apiKey },
      );
      const mine = events.body.data.items.filter((e) => e.data.conversation_id === conversationId);
      expect(mine).toHaveLength(1);
      // The official original name (spec: `event`), the one the platform's own push of it carries.
      expect(mine[0]).toMatchObject({
        platform: 'vplat',
        type: 'vplat.message.sent',
        event: 'im_send_msg',
        data: {
          message_id: sent.body.data.messageId,
          conversation_id: conversationId,
          type: 'text',
          text: { body: 'logged once' },
          from_user: { id: account.openId, role: 'business_account' },
          unique_identifier: account.openId,
          message_tag: { source: 'API' },
          timestamp: expect.any(Number),
        },
      });
    });
  });

  describe('a message the platform also reports by webhook', () => {
    it('is logged once: the push and the service name it by the same message id', async () => {
      await subscribeToPlatformWebhooks(env.sb.upstream.vplat, `${stack.baseUrl}/webhooks/vplat`);
      const { conversationId } = await userWrites('are you open today?');
      const sent = await send({ conversationId, text: 'reported twice, logged once' });
      expect(sent.body.code).toBe(0);
      const messageId = String(sent.body.data.messageId);
      // The platform's im_send_msg push for this message has reached the gateway.
      await eventually(
        () => env.sb.control<{ pushes: Array<{ event: string; body: string; delivered: boolean }> }>('GET', '/_sandbox/webhooks/pushes'),
        (r) => r.pushes.some((p) => p.event === 'im_send_msg' && p.body.includes(messageId) && p.delivered),
        10_000,
      );
      const events = await call<{ items: Array<{ event: string; data: Record<string, unknown> }> }>(
        stack.baseUrl,
        'GET',
        '/v1/events?types=vplat.message.sent&limit=100',
        { key: tenant.apiKey },
      );
      const logged = events.body.data.items.filter((e) => e.data.message_id === messageId);
      // Whichever was stored first, the name is the same.
      expect(logged.map((e) => e.event)).toEqual(['im_send_msg']);
    });
  });

  describe('POST message/media/upload', () => {
    it('returns a mediaId valid 30 days, and refuses what is not a JPG or PNG of at most 3 MB', async () => {
      const started = Date.now();
      const ok = await upload(jpeg(40, 30), { fileName: 'photo.jpg' });
      expect(ok.body).toMatchObject({ code: 0, data: { mediaId: expect.stringMatching(/.+/), expiresAt: expect.any(String) } });
      const expiresAt = Date.parse(String(ok.body.data.expiresAt));
      expect(expiresAt).toBeGreaterThanOrEqual(started + 30 * 86_400_000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000 + 1000);

      const big = await upload(png(32, 32, 3 * 1024 * 1024 + 1));
      expectCode(big, 2001);
      expect(big.body.message).toMatch(/^file: must be at most 3 MB/);
      const gif = await upload(Buffer.from('GIF89a........................'));
      expectCode(gif, 2001);
      expect(gif.body.message).toMatch(/^file: must be a JPG or PNG/);
      const empty = await upload(Buffer.alloc(0));
      expectCode(empty, 2001);
      const unbound = await upload(png(8, 8), { account: 'nobody-here' });
      expectCode(unbound, 1007);
    });

    it('takes the account after the file part, as a form built file first sends it, and judges it as before it', async () => {
      const ok = await upload(jpeg(40, 30), { fileName: 'photo.jpg', accountAfterFile: true });
      expect(ok.body).toMatchObject({ code: 0, data: { mediaId: expect.stringMatching(/.+/) } });
      expectCode(await upload(png(8, 8), { account: 'nobody-here', accountAfterFile: true }), 1007);
      const big = await upload(png(32, 32, 3 * 1024 * 1024 + 1), { accountAfterFile: true });
      expectCode(big, 2001);
      expect(big.body.message).toMatch(/^file: larger than the limit of 3145728 bytes/);
      expectCode(await upload(png(8, 8), { key: 'vps_not_a_key_of_ours', accountAfterFile: true }), 1001);
    });
  });

  describe('automatic messages', () => {
    const auto = (path: string, json: Record<string, unknown>) => post(`auto_message/${path}`, { account: account.openId, ...json });
    const approve = () => env.sb.control('POST', '/_sandbox/clock', { advanceMs: 11_000 });

    it('creates, reads, updates, sorts, switches and deletes, as the official API shows them', async () => {
      const created = await auto('create', {
        autoMessageType: 'SUGGESTED_QUESTION',
        suggestedQuestionQuestion: 'Do you ship abroad?',
        suggestedQuestionAnswer: 'Yes, worldwide.',
      });
      expect(created.body).toMatchObject({ code: 0, data: { autoMessageId: expect.stringMatching(/.+/) } });
      const id = String(created.body.data.autoMessageId);

      const read = await auto('get', { autoMessageType: 'SUGGESTED_QUESTION' });
      expect(read.body.code).toBe(0);
      const direct = await official.getAutoMessages(vplat(), token(), {
        business_id: account.openId,
        auto_message_type: 'SUGGESTED_QUESTION',
      });
      expect(read.body.data).toEqual(fromOfficial(AUTO_MESSAGE_GET_ANSWER, direct as never));
      expect(read.body.data).toMatchObject({ businessId: account.openId, operationStatus: 'ENABLE' });
      expect(read.body.data.items).toEqual([
        {
          autoMessageId: id,
          autoMessageType: 'SUGGESTED_QUESTION',
          auditStatus: 'REVIEWING',
          suggestedQuestionQuestion: 'Do you ship abroad?',
          suggestedQuestionAnswer: 'Yes, worldwide.',
        },
      ]);

      // In review it cannot change: the platform's refusal.
      const early = await auto('update', {
        autoMessageId: id,
        autoMessageType: 'SUGGESTED_QUESTION',
        suggestedQuestionQuestion: 'Shipping?',
        suggestedQuestionAnswer: 'Worldwide.',
      });
      expectCode(early, 3001);
      await approve();
      const one = await auto('get', { autoMessageType: 'SUGGESTED_QUESTION', autoMessageId: id });
      expect(one.body.data.items).toEqual([expect.objectContaining({ autoMessageId: id, auditStatus: 'APPROVED' })]);
      const updated = await auto('update', {
        autoMessageId: id,
        autoMessageType: 'SUGGESTED_QUESTION',
        suggestedQuestionQuestion: 'Shipping?',
        suggestedQuestionAnswer: 'Worldwide.',
      });
      expect(updated.body).toMatchObject({ code: 0, data: { autoMessageId: id } });

      const a = await auto('create', {
        autoMessageType: 'CHAT_PROMPT',
        chatPromptTitle: 'Prices',
        chatPromptContent: 'What does it cost?',
      });
      const b = await auto('create', { autoMessageType: 'CHAT_PROMPT', chatPromptTitle: 'Hours', chatPromptContent: 'When are you open?' });
      const [idA, idB] = [String(a.body.data.autoMessageId), String(b.body.data.autoMessageId)];
      await approve();
      expect((await auto('sort', { autoMessageIds: [idB, idA] })).body).toMatchObject({ code: 0, data: {} });
      const prompts = await auto('get', { autoMessageType: 'CHAT_PROMPT' });
      expect(prompts.body.data.items!.map((m) => m.autoMessageId)).toEqual([idB, idA]);

      expect((await auto('status/update', { autoMessageType: 'CHAT_PROMPT', operationStatus: 'DISABLE' })).body.code).toBe(0);
      expect((await auto('get', { autoMessageType: 'CHAT_PROMPT' })).body.data.operationStatus).toBe('DISABLE');

      expect((await auto('delete', { autoMessageType: 'SUGGESTED_QUESTION', autoMessageId: id })).body).toMatchObject({
        code: 0,
        data: {},
      });
      expect((await auto('get', { autoMessageType: 'SUGGESTED_QUESTION' })).body.data.items).toEqual([]);
    });

    it('refuses content of another type, missing content and a welcome message delete with 2001', async () => {
      const mixed = await auto('create', { autoMessageType: 'WELCOME_MESSAGE', welcomeMessageContent: 'Hi!', chatPromptTitle: 'x' });
      expectCode(mixed, 2001);
      expect(mixed.body.message).toMatch(/^chatPromptTitle: goes only with autoMessageType CHAT_PROMPT/);
      const missing = await auto('create', { autoMessageType: 'SUGGESTED_QUESTION', suggestedQuestionQuestion: 'Q?' });
      expectCode(missing, 2001);
      expect(missing.body.message).toMatch(/^suggestedQuestionAnswer: is required/);
      const welcome = await auto('delete', { autoMessageType: 'WELCOME_MESSAGE', autoMessageId: 'x' });
      expectCode(welcome, 2001);
      expect(welcome.body.message).toMatch(/^autoMessageType: /);
    });
  });

  describe('seat, plan and platform failures', () => {
    it("refuses to fetch a media download address off the platform's hosts, and never sends it the account's token", async () => {
      const { conversationId } = await userWrites('a picture, please');
      expect((await send({ conversationId, text: 'Here it comes' })).body.code).toBe(0);
      const uploaded = await upload(png(16, 16));
      const image = await send({ conversationId, imageMediaId: String(uploaded.body.data.mediaId) });
      expect(image.body.code).toBe(0);
      const query = new URLSearchParams({
        account: account.openId,
        conversationId,
        messageId: String(image.body.data.messageId),
        mediaId: String(uploaded.body.data.mediaId),
        mediaType: 'IMAGE',
      });
      const relay = async () => {
        const res = await fetch(`${stack.baseUrl}${BASE}/media/content?${query}`, {
          headers: { authorization: `Bearer ${tenant.apiKey}` },
        });
        return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
      };
      // Someone else's server, on this machine: it records whatever reaches it.
      const seen: http.IncomingHttpHeaders[] = [];
      const elsewhere = http.createServer((req, res) => {
        seen.push(req.headers);
        res.writeHead(200, { 'content-type': 'image/png' }).end(png(16, 16));
      });
      await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
      const elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
      const pointAt = (origin: string | null) =>
        env.sb.control('POST', `/_sandbox/accounts/${account.openId}/media-download-origin`, { origin });
      try {
        for (const [origin, reason] of [
          [elsewhereUrl, 'it is not https (http)'],
          ['https://media.attacker.example', "its host media.attacker.example is not one of the platform's"],
          ['https://127.0.0.1:1', "its host 127.0.0.1 is not one of the platform's"],
        ] as const) {
          await pointAt(origin);
          const refused = await relay();
          expect([refused.status, refused.type]).toEqual([502, expect.stringMatching(/^application\/json/)]);
          expect(JSON.parse(refused.body.toString())).toMatchObject({
            code: 3001,
            message: `the platform's media download address was refused, and the account's access token not sent to it: ${reason} (the token goes only to https addresses on the platform's own hosts)`,
            data: { platform: 'vplat', retryable: false },
          });
        }
        expect(seen).toEqual([]);

        // The platform's own address again: the relay works, with the token where it belongs.
        await pointAt(null);
        const relayed = await relay();
        expect(relayed.status).toBe(200);
        expect(relayed.body.equals(png(16, 16))).toBe(true);
      } finally {
        await pointAt(null);
        elsewhere.closeAllConnections();
        await new Promise((resolve) => elsewhere.close(resolve));
      }
    });

    it('answers 1007 for an account no seat of the caller holds', async () => {
      expectCode(await get('conversation/list', { account: 'not-bound', conversationType: 'SINGLE' }), 1007);
      expectCode(await post('send', { account: 'not-bound', conversationId: 'c', text: 'x' }), 1007);
      expectCode(await post('auto_message/get', { account: 'not-bound', autoMessageType: 'CHAT_PROMPT' }), 1007);
    });

    it('refuses writes with 1003 on an expired plan while reads work', async () => {
      const expired = await createTenant(stack, { planExpiresAt: new Date(Date.now() - 86_400_000) });
      const { account: other } = await bindSandboxSeat(env, expired, 'business');
      const { conversationId } = await env.sb.control<{ conversationId: string }>('POST', `/_sandbox/accounts/${other.openId}/messages`, {
        text: 'hi',
      });
      const key = expired.apiKey;
      expect((await get('conversation/list', { account: other.openId, conversationType: 'STRANGER' }, key)).body.code).toBe(0);
      expect((await get('content/list', { account: other.openId, conversationId }, key)).body.code).toBe(0);
      expect((await get('capabilities/get', { account: other.openId, conversationId, conversationType: 'STRANGER' }, key)).body.code).toBe(
        0,
      );
      expect((await post('auto_message/get', { account: other.openId, autoMessageType: 'WELCOME_MESSAGE' }, key)).body.code).toBe(0);
      expectCode(await post('send', { account: other.openId, conversationId, text: 'x' }, key), 1003);
      expectCode(
        await post('auto_message/create', { account: other.openId, autoMessageType: 'WELCOME_MESSAGE', welcomeMessageContent: 'Hi' }, key),
        1003,
      );
      expectCode(await upload(png(8, 8), { account: other.openId, key }), 1003);
    });

    it('passes platform failures on as 3001 with the official message, and a slow platform as 3002', async () => {
      const { conversationId } = await userWrites();
      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'server_error',
        platform: 'business',
        pathPrefix: '/open_api/v1.3/business/message/',
      });
      const failed = await get('content/list', { account: account.openId, conversationId });
      expectCode(failed, 3001);
      expect(failed.body.data).toMatchObject({ platform: 'vplat', officialCode: expect.any(Number) });

      const unknown = await get('content/list', { account: account.openId, conversationId: 'no-such-conversation' });
      expectCode(unknown, 3001);
      expect(unknown.body.message).toMatch(/conversation_id/);

      await env.sb.control('POST', '/_sandbox/faults', {
        kind: 'hang',
        hangMs: 3_000,
        platform: 'business',
        pathPrefix: '/open_api/v1.3/business/message/send/',
      });
      const slow = await send({ conversationId, text: 'slow' });
      expectCode(slow, 3002);
      expect(slow.status).toBe(504);
    });
  });

  describe('bad input', () => {
    it.each([
      ['GET', 'conversation/list', { conversationType: 'SINGLE' }],
      ['GET', 'conversation/list', { account: 'a', conversationType: 'OTHER' }],
      ['GET', 'conversation/list', { account: 'a', conversationType: 'SINGLE', limit: '0' }],
      ['GET', 'conversation/list', { account: 'a', conversationType: 'SINGLE', limit: '101' }],
      ['GET', 'conversation/list', { account: 'a', conversationType: 'SINGLE', cursor: '-1' }],
      ['GET', 'conversation/list', { account: 'a', conversationType: 'SINGLE', extra: '1' }],
      ['GET', 'content/list', { account: 'a' }],
      ['GET', 'capabilities/get', { account: 'a', conversationId: 'c', conversationType: 'SINGLE', capabilityTypes: 'VIDEO_SEND' }],
      ['POST', 'send', { account: 'a', conversationId: 'c', text: '' }],
      ['POST', 'send', { account: 'a', conversationId: 'c', senderAction: 'WAVE' }],
      ['POST', 'send', { account: 'a', conversationId: 'c', templateType: 'QA_BUTTON_CARD', templateTitle: 't', templateButtons: [] }],
      [
        'POST',
        'send',
        {
          account: 'a',
          conversationId: 'c',
          templateType: 'QA_BUTTON_CARD',
          templateTitle: 't',
          templateButtons: [{ title: 'x'.repeat(41) }],
        },
      ],
      ['POST', 'send', { account: 'a', text: 'no conversation' }],
      ['POST', 'send', { account: 'a', conversationId: 'c', text: 'x'.repeat(12_001) }],
      ['POST', 'media/download', { account: 'a', conversationId: 'c', messageId: 'm', mediaId: 'x', mediaType: 'AUDIO' }],
      ['POST', 'auto_message/get', { account: 'a', autoMessageType: 'GREETING' }],
      [
        'POST',
        'auto_message/create',
        { account: 'a', autoMessageType: 'CHAT_PROMPT', chatPromptTitle: 'x'.repeat(19), chatPromptContent: 'y' },
      ],
      ['POST', 'auto_message/sort', { account: 'a', autoMessageIds: [] }],
      ['POST', 'auto_message/status/update', { account: 'a', autoMessageType: 'CHAT_PROMPT', operationStatus: 'ON' }],
      ['POST', 'auto_message/delete', { account: 'a', autoMessageType: 'CHAT_PROMPT' }],
    ] as const)('%s %s (case %#) → 2001', async (method, path, input) => {
      const res = method === 'GET' ? await get(path, input as Record<string, string>) : await post(path, input as Record<string, unknown>);
      expectCode(res, 2001);
    });

    it('counts text in characters, an emoji as one: 6001 emoji are refused by core naming text', async () => {
      const { conversationId } = await userWrites();
      const over = await send({ conversationId, text: '😀'.repeat(6001) });
      expectCode(over, 2001);
      expect(over.body.message).toMatch(/^text: must be at most 6000 characters/);
    });

    it('refuses a malformed multipart upload with 2001, never 5000', async () => {
      const res = await call<Data>(stack.baseUrl, 'POST', `${BASE}/media/upload`, {
        key: tenant.apiKey,
        json: { account: account.openId },
      });
      expectCode(res, 2001);
      const form = new FormData();
      form.append('file', new Blob([png(8, 8)]), 'a.png');
      const noAccount = await fetch(`${stack.baseUrl}${BASE}/media/upload`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Bearer ${tenant.apiKey}` },
      });
      expect(((await noAccount.json()) as { code: number }).code).toBe(2001);
    });
  });
});
