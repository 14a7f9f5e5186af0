/**
 * Business Messaging (official-api.md §6): conversations and their latest messages, sending with
 * the 48-hour window, image upload and download, capabilities, automatic messages with their
 * review; the `im_*` webhooks (§7.4); the control route that lets a user write to the account;
 * and the download address that serves message media behind the `x-user` header.
 *
 * Interpretations of the reference:
 * - A conversation is STRANGER until the business first replies, then SINGLE.
 * - The window: after each user message the business may send 10 messages within 48 hours
 *   (DOC:1832184403754242); past either limit → 40064. Automatic messages do not count.
 * - SENDER_ACTION (TYPING, MARK_READ) is not a message: outside the window too, never counted,
 *   no webhook, `message_id` "".
 * - IMAGE_SEND is true only in a SINGLE conversation whose user wrote within the last 48 hours,
 *   and IMAGE sends follow the same rule (40064 otherwise).
 * - content/list returns the 20 latest messages, newest first.
 * - Inside webhook content, the top-level `unique_identifier` is the sender's (business_id for the
 *   business, as the reference says of reactions).
 * - Auto messages: review takes 10 s of virtual time and always approves; a type starts ENABLEd;
 *   duplicates are judged on the question (suggested question), title (chat prompt) or content
 *   (welcome message), ignoring case and surrounding spaces. An approved, enabled welcome message is
 *   sent when a user opens a conversation.
 * - auto_message/get is served as GET (the doc's curl example and BB), not POST (its header).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Account } from '../accounts';
import { officialRoute, requireOwnBusiness, type SandboxContext } from '../context';
import { ControlError, controlRoutes, requireAccount } from '../control';
import { objectBody } from '../params';
import { BUSINESS, OfficialError } from '../official-error';
import { Params } from '../params';
import { IMAGE_CONTENT_TYPES, imageInfo, type ImageFormat } from '../../core/media/formats';
import { solidPng } from '../solid-png';
import { personFrom, pictureUrl } from './comment-store';
import { registerAutoMessages } from './auto-messages';
import { pushSummary, type PushRecord } from '../webhooks';
import { readMultipart } from './uploads';
import { canSendImage, MessageStore, windowRefusal, type Conversation, type DirectMessage, type Template } from './message-store';

const API = '/open_api/v1.3/business/message';
const DOWNLOAD_VALID_MS = 24 * 3_600_000;
const LIST_WINDOW_MS = 90 * 86_400_000;
const MAX_MEDIA_BYTES = 3 * 1024 * 1024;
const MAX_TEXT = 6000;
const CONVERSATION_TYPES = ['STRANGER', 'SINGLE'] as const;
const SEND_TYPES = ['TEXT', 'IMAGE', 'SHARE_POST', 'TEMPLATE', 'SENDER_ACTION'] as const;
type SendType = (typeof SEND_TYPES)[number];

/** The body object each message_type requires; the others must be absent. */
const PAYLOAD_OF: Record<SendType, string> = {
  TEXT: 'text',
  IMAGE: 'image',
  SHARE_POST: 'share_post',
  TEMPLATE: 'template',
  SENDER_ACTION: 'sender_action',
};

/** The platform takes JPG and PNG for message images. */
const MEDIA_FORMATS: readonly ImageFormat[] = ['JPEG', 'PNG'];

const invalidConversation = () => new OfficialError(40002, 'Param conversation_id is invalid.');

function readTemplate(b: Params): Template {
  const type = b.requiredString('template.type', { oneOf: ['QA_BUTTON_CARD', 'QA_LINK_CARD'] }) as Template['type'];
  const title = b.requiredString('template.title', { max: 40 });
  const buttons = b.json('template.buttons', (v): v is unknown[] => Array.isArray(v), 'list of buttons');
  if (!buttons) throw BUSINESS.missing('template.buttons');
  if (buttons.length < 1 || buttons.length > 3) throw BUSINESS.invalid('template.buttons', 'Must hold 1 to 3 buttons.');
  return {
    type,
    title,
    buttons: buttons.map((button, i) => {
      // Each button read on its own, its errors named by its place: template.buttons[1].title.
      const p = new Params({ template: { [`buttons[${i}]`]: button } }, BUSINESS, false);
      const field = (name: string) => `template.buttons[${i}].${name}`;
      p.requiredString(field('type'), { oneOf: ['REPLY'] });
      const buttonTitle = p.requiredString(field('title'), { max: type === 'QA_BUTTON_CARD' ? 20 : 40 });
      const id = p.string(field('id'), { max: 40 });
      return { type: 'REPLY' as const, title: buttonTitle, ...(id ? { id } : {}) };
    }),
  };
}

export function registerMessages(app: FastifyInstance, ctx: SandboxContext): void {
  const store = new MessageStore(() => ctx.clock.now());
  const now = () => ctx.clock.now();

  const embedUrl = (itemId: string) => `https://www.tiktok.com/player/v1/${itemId}`;

  /** Reads the payload of a business message; the caller has checked that only its object is present. */
  const payloadReaders: Record<
    Exclude<SendType, 'SENDER_ACTION'>,
    (b: Params, account: Account) => Omit<DirectMessage, 'messageId' | 'conversationId' | 'timestamp' | 'fromBusiness' | 'source'>
  > = {
    TEXT: (b) => ({ type: 'TEXT', text: b.requiredString('text.body', { max: MAX_TEXT }) }),
    IMAGE: (b, account) => {
      const mediaId = b.requiredString('image.media_id');
      const media = store.media(account.openId, mediaId);
      if (!media || media.expiresAt < now())
        throw BUSINESS.invalid(
          'image.media_id',
          'Unknown or expired media_id: upload the image with business/message/media/upload/ first.',
        );
      return { type: 'IMAGE', imageMediaId: mediaId };
    },
    SHARE_POST: (b, account) => {
      const itemId = b.requiredString('share_post.item_id');
      if (!ctx.posts.get(account.openId, itemId)) throw BUSINESS.notFound(`Post ${itemId} of the account`);
      return { type: 'SHARE_POST', sharePost: { itemId, embedUrl: embedUrl(itemId) } };
    },
    TEMPLATE: (b) => ({ type: 'TEMPLATE', template: readTemplate(b) }),
  };

  const business = (account: Account) => ({ id: account.openId, username: account.username });

  /** A message as content/list returns it. */
  const wireMessage = (account: Account, conversation: Conversation, m: DirectMessage) => {
    const [from, to] = m.fromBusiness
      ? [
          { role: 'BUSINESS_ACCOUNT', ...business(account) },
          { role: 'PERSONAL_ACCOUNT', id: conversation.user.uniqueIdentifier, username: conversation.user.username },
        ]
      : [
          { role: 'PERSONAL_ACCOUNT', id: conversation.user.uniqueIdentifier, username: conversation.user.username },
          { role: 'BUSINESS_ACCOUNT', ...business(account) },
        ];
    return {
      sender: from.username,
      recipient: to.username,
      conversation_id: m.conversationId,
      message_id: m.messageId,
      timestamp: m.timestamp,
      message_tag: { source: m.source },
      message_type: m.type,
      ...(m.autoMessageType ? { auto_message_type: m.autoMessageType } : {}),
      ...(m.text !== undefined ? { text: { body: m.text } } : {}),
      ...(m.imageMediaId ? { image: { media_id: m.imageMediaId } } : {}),
      ...(m.sharePost ? { share_post: { embed_url: m.sharePost.embedUrl } } : {}),
      ...(m.template ? { template: m.template } : {}),
      from_user: { role: from.role, id: from.id },
      to_user: { role: to.role, id: to.id },
      ...(m.referencedMessageId ? { referenced_message_info: { referenced_message_id: m.referencedMessageId } } : {}),
    };
  };

  /** im_send_msg / im_receive_msg content: lowercase roles and type, the payload under its type's key. */
  const pushMessage = (account: Account, conversation: Conversation, m: DirectMessage): PushRecord | undefined => {
    const businessUser = { id: account.openId, role: 'business_account' };
    const personalUser = { id: conversation.user.uniqueIdentifier, role: 'personal_account' };
    const [fromUser, toUser] = m.fromBusiness ? [businessUser, personalUser] : [personalUser, businessUser];
    return ctx.webhooks.push(m.fromBusiness ? 'im_send_msg' : 'im_receive_msg', account.openId, {
      from: m.fromBusiness ? account.username : conversation.user.username,
      to: m.fromBusiness ? conversation.user.username : account.username,
      unique_identifier: fromUser.id,
      from_user: fromUser,
      to_user: toUser,
      conversation_id: m.conversationId,
      message_id: m.messageId,
      timestamp: m.timestamp,
      type: m.type.toLowerCase(),
      ...(m.text !== undefined ? { text: { body: m.text } } : {}),
      ...(m.imageMediaId ? { image: { media_id: m.imageMediaId } } : {}),
      ...(m.sharePost ? { share_post: { embed_url: m.sharePost.embedUrl, video_id: m.sharePost.itemId } } : {}),
      ...(m.template
        ? {
            template: {
              type: m.template.type.toLowerCase(),
              elements: [
                {
                  title: m.template.title,
                  buttons: m.template.buttons.map((b) => ({ text: b.title, type: b.type, ...(b.id ? { id: b.id } : {}) })),
                },
              ],
            },
          }
        : {}),
      ...(m.referencedMessageId ? { referenced_message_info: { referenced_message_id: m.referencedMessageId } } : {}),
      ...(m.autoMessageType ? { auto_message_type: m.autoMessageType } : {}),
      message_tag: { source: m.source },
      is_follower: conversation.isFollower,
    });
  };

  const conversationOf = (account: Account, conversationId: string) =>
    store.conversation(account.openId, conversationId) ?? raise(invalidConversation());

  officialRoute(app, ctx, 'business', 'GET', `${API}/conversation/list/`, (call) => {
    const account = requireOwnBusiness(call, 'query');
    const type = call.query.requiredString('conversation_type', { oneOf: CONVERSATION_TYPES });
    const limit = call.query.integer('limit', { min: 1, max: 100 }) ?? 100;
    const cursor = call.query.integer('cursor', { min: 0 }) ?? 0;
    // Only conversations active in the last 90 days are listed, as officially.
    const listed = store
      .conversations(account.openId)
      .filter((c) => c.type === type && c.updateTime >= now() - LIST_WINDOW_MS)
      .sort((a, b) => b.updateTime - a.updateTime);
    const page = listed.slice(cursor, cursor + limit);
    return {
      conversations: page.map((c) => ({ conversation_id: c.conversationId, update_time: c.updateTime })),
      has_more: cursor + page.length < listed.length,
      cursor: cursor + page.length,
    };
  });

  officialRoute(app, ctx, 'business', 'GET', `${API}/content/list/`, (call) => {
    const account = requireOwnBusiness(call, 'query');
    const conversation = conversationOf(account, call.query.requiredString('conversation_id'));
    return {
      messages: conversation.messages
        .slice(-20)
        .reverse()
        .map((m) => wireMessage(account, conversation, m)),
      participants: [
        {
          role: 'BUSINESS_ACCOUNT',
          id: account.openId,
          display_name: account.displayName,
          profile_image: pictureUrl(ctx, `avatar:${account.openId}`),
        },
        {
          role: 'PERSONAL_ACCOUNT',
          id: conversation.user.uniqueIdentifier,
          display_name: conversation.user.displayName,
          profile_image: pictureUrl(ctx, `avatar:${conversation.user.uniqueIdentifier}`),
          is_follower: conversation.isFollower,
        },
      ],
    };
  });

  officialRoute(app, ctx, 'business', 'POST', `${API}/send/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const b = call.body;
    if (b.has('direct_reply')) {
      if (b.has('recipient_type') || b.has('recipient'))
        throw BUSINESS.invalid('direct_reply', 'Not allowed together with recipient_type and recipient.');
      throw BUSINESS.noPermission(
        'Direct replies to comments (Comment-to-Message) are available only to Business Accounts registered in Vietnam, Indonesia and Thailand.',
      );
    }
    b.requiredString('recipient_type', { oneOf: ['CONVERSATION'] });
    const conversationId = b.requiredString('recipient');
    const messageType = b.requiredString('message_type', { oneOf: SEND_TYPES }) as SendType;
    for (const [type, key] of Object.entries(PAYLOAD_OF)) {
      if (type !== messageType && b.has(key)) throw BUSINESS.invalid(key, `Not allowed with message_type ${messageType}.`);
    }
    if (b.has('referenced_message_info') && messageType !== 'TEXT')
      throw BUSINESS.invalid('referenced_message_info', 'Only allowed with message_type TEXT.');

    if (messageType === 'SENDER_ACTION') {
      b.requiredString('sender_action', { oneOf: ['TYPING', 'MARK_READ'] });
      conversationOf(account, conversationId);
      return { message: { message_id: '' } };
    }
    const payload = payloadReaders[messageType](b, account);
    const referencedMessageId = b.has('referenced_message_info')
      ? b.requiredString('referenced_message_info.referenced_message_id')
      : undefined;
    const conversation = conversationOf(account, conversationId);
    if (referencedMessageId !== undefined && !conversation.messages.some((m) => m.messageId === referencedMessageId)) {
      throw BUSINESS.notFound(`Message ${referencedMessageId} in the conversation`);
    }
    const refusal = windowRefusal(conversation, now());
    if (refusal) throw new OfficialError(40064, refusal);
    if (messageType === 'IMAGE' && !canSendImage(conversation, now())) {
      throw new OfficialError(
        40064,
        'Images cannot be sent in this conversation yet (IMAGE_SEND is false): reply with text first; see business/message/capabilities/get/.',
      );
    }
    const message = store.add(conversation, {
      ...payload,
      fromBusiness: true,
      source: 'API',
      ...(referencedMessageId ? { referencedMessageId } : {}),
    });
    pushMessage(account, conversation, message);
    return { message: { message_id: message.messageId } };
  });

  officialRoute(app, ctx, 'business', 'POST', `${API}/media/upload/`, async (call) => {
    const { fields, files } = await readMultipart(call.request);
    const params = new Params(fields, BUSINESS, true);
    const account = requireOwnBusiness({ ...call, body: params }, 'body');
    params.requiredString('media_type', { oneOf: ['IMAGE'] });
    const file = files.file;
    if (!file) throw BUSINESS.missing('file');
    if (file.bytes.length === 0) throw new OfficialError(40906, 'file: The file is empty.');
    if (file.bytes.length > MAX_MEDIA_BYTES) throw new OfficialError(40907, 'file: The file is larger than 3 MB.');
    const format = (await imageInfo(file.bytes))?.format;
    const contentType = format && MEDIA_FORMATS.includes(format) ? IMAGE_CONTENT_TYPES[format] : undefined;
    if (!contentType) throw new OfficialError(40908, 'file: Unsupported file type; use JPG or PNG.');
    return { media_id: store.saveMedia(account.openId, file.bytes, contentType).mediaId };
  });

  officialRoute(app, ctx, 'business', 'POST', `${API}/media/download/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const b = call.body;
    const conversationId = b.requiredString('conversation_id');
    const messageId = b.requiredString('message_id');
    const mediaId = b.requiredString('media_id');
    const mediaType = b.requiredString('media_type', { oneOf: ['IMAGE', 'VIDEO'] });
    const conversation = conversationOf(account, conversationId);
    const message = conversation.messages.find((m) => m.messageId === messageId);
    if (!message) throw BUSINESS.notFound(`Message ${messageId} in the conversation`);
    if (message.imageMediaId !== mediaId) throw BUSINESS.invalid('media_id', 'Not the media of message_id.');
    // The emulator's messages carry images only.
    if (mediaType !== 'IMAGE') throw BUSINESS.invalid('media_type', 'Does not match the media of the message.');
    const media = store.media(account.openId, mediaId);
    if (!media) throw BUSINESS.notFound(`Media ${mediaId}`);
    const origin = store.downloadOrigin(account.openId) ?? ctx.baseUrl();
    return { download_url: `${origin}/_sandbox/cdn/message-media/${store.grantDownload(media, DOWNLOAD_VALID_MS)}` };
  });

  officialRoute(app, ctx, 'business', 'GET', `${API}/capabilities/get/`, (call) => {
    const account = requireOwnBusiness(call, 'query');
    const types = call.query.stringArray('capability_types');
    if (!types) throw BUSINESS.missing('capability_types');
    if (types.length === 0) throw BUSINESS.invalid('capability_types', 'Must name at least one capability.');
    const unknown = types.find((t) => t !== 'IMAGE_SEND');
    if (unknown !== undefined) throw BUSINESS.invalid('capability_types', `Unknown capability "${unknown}"; supported: IMAGE_SEND.`);
    const conversationId = call.query.requiredString('conversation_id');
    const conversationType = call.query.requiredString('conversation_type', { oneOf: CONVERSATION_TYPES });
    const conversation = conversationOf(account, conversationId);
    const imageSend = conversation.type === conversationType && canSendImage(conversation, now());
    return { capability_infos: [...new Set(types)].map((type) => ({ capability_type: type, capability_result: imageSend })) };
  });

  registerAutoMessages(app, ctx, store);
  registerMediaDownloads(app, ctx, store);
  registerMessageControl(app, ctx, store, pushMessage);
}

function raise(error: Error): never {
  throw error;
}

function registerMediaDownloads(app: FastifyInstance, ctx: SandboxContext, store: MessageStore): void {
  app.get('/_sandbox/cdn/message-media/:token', async (request, reply) => {
    const download = store.download((request.params as { token: string }).token);
    if (!download) return reply.code(404).send({ error: 'no such download link' });
    const header = request.headers['x-user'];
    const token = Array.isArray(header) ? header[0] : header;
    const verified = token ? ctx.tokens.verify(token, 'access', 'business') : undefined;
    if (!verified?.ok || verified.claims.openId !== download.openId) {
      return reply.code(403).send({ error: 'x-user must carry a valid access token of the account the link was issued to' });
    }
    if (ctx.clock.now() > download.expiresAt)
      return reply.code(403).send({ error: 'the download link has expired (links are valid for 24 hours)' });
    return reply.type(download.media.contentType).send(download.media.bytes);
  });
}

/** `POST /_sandbox/accounts/:openId/messages`: a user writes to the account, opening a conversation if needed. */
function registerMessageControl(
  app: FastifyInstance,
  ctx: SandboxContext,
  store: MessageStore,
  pushMessage: (account: Account, conversation: Conversation, m: DirectMessage) => PushRecord | undefined,
): void {
  /** A new conversation greets the user with the account's welcome message, when approved and enabled. */
  const welcome = (account: Account, conversation: Conversation) => {
    const greeting = store.autoMessages(account.openId, 'WELCOME_MESSAGE').find((m) => m.auditStatus === 'APPROVED');
    if (!greeting || store.autoStatus(account.openId, 'WELCOME_MESSAGE') !== 'ENABLE') return;
    const m = store.add(conversation, {
      fromBusiness: true,
      source: 'OTHERS',
      type: 'TEXT',
      text: greeting.content.content!,
      autoMessageType: 'WELCOME_MESSAGE',
    });
    pushMessage(account, conversation, m);
  };

  controlRoutes(app, ctx, (control) => {
    // The platform answering download links on a host of someone else's: what the service must
    // refuse to send the account's token to. `origin: null` gives the emulator's own back.
    control.post('/_sandbox/accounts/:openId/media-download-origin', async (request) => {
      const account = requireAccount(ctx, (request.params as { openId: string }).openId);
      const { origin } = objectBody(request.body);
      if (origin !== null && (typeof origin !== 'string' || !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]+$/i.test(origin))) {
        throw new ControlError(400, 'origin must be scheme://host[:port] without a path, or null');
      }
      store.setDownloadOrigin(account.openId, origin ?? undefined);
      return { openId: account.openId, origin: origin ?? ctx.baseUrl() };
    });

    control.post('/_sandbox/accounts/:openId/messages', async (request) => {
      const account = requireAccount(ctx, (request.params as { openId: string }).openId);
      const b = objectBody(request.body);
      const text = typeof b.text === 'string' && b.text !== '' ? b.text : undefined;
      const imageMediaId = typeof b.imageMediaId === 'string' && b.imageMediaId !== '' ? b.imageMediaId : undefined;
      if ((text === undefined) === (imageMediaId === undefined)) throw new ControlError(400, 'give exactly one of text and imageMediaId');
      if (text !== undefined && text.length > MAX_TEXT) throw new ControlError(400, `text must be at most ${MAX_TEXT} characters`);
      const from = typeof b.from === 'string' && b.from !== '' ? b.from : undefined;

      let conversation: Conversation | undefined;
      if (b.conversationId !== undefined) {
        conversation = store.conversation(account.openId, String(b.conversationId));
        if (!conversation) throw new ControlError(404, `no conversation ${String(b.conversationId)} of ${account.openId}`);
        if (from !== undefined && from !== conversation.user.uniqueIdentifier)
          throw new ControlError(400, 'from is not the user of conversationId');
      } else if (from !== undefined) {
        conversation = store.conversationWith(account.openId, from);
      }
      if (!conversation) {
        const seed = from ?? `dm:${randomBytes(12).toString('hex')}`;
        const username = typeof b.username === 'string' && b.username ? b.username : `dm_user_${personFrom(seed, '').userId.slice(0, 8)}`;
        const person = personFrom(seed, username);
        conversation = store.open(account.openId, from ? { ...person, uniqueIdentifier: from } : person, b.isFollower === true);
        welcome(account, conversation);
      }
      // A user's picture the test did not upload gets placeholder bytes, so media/download still serves something.
      if (imageMediaId !== undefined && !store.media(account.openId, imageMediaId))
        store.saveMedia(account.openId, solidPng(64, 64), 'image/png', imageMediaId);
      const message = store.add(conversation, {
        fromBusiness: false,
        source: 'APP',
        ...(text !== undefined ? { type: 'TEXT' as const, text } : { type: 'IMAGE' as const, imageMediaId: imageMediaId! }),
      });
      const push = pushMessage(account, conversation, message);
      return {
        conversationId: conversation.conversationId,
        messageId: message.messageId,
        from: conversation.user.uniqueIdentifier,
        webhookPush: pushSummary(push),
      };
    });
  });
}
