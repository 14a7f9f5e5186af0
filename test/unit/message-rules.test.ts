import { create } from '@bufbuild/protobuf';
import { SendMessageRequestSchema, TemplateButtonSchema } from '../../gen/vps/engagement/v1/message_pb';
import type { BoundSeat } from '../../core/publishing/seats';
import { ApiError } from '../../core/errors';
import {
  autoMessageContent,
  checkMessageImage,
  MESSAGE_MEDIA_MAX_BYTES,
  sendBody,
  sendKindOf,
  sentEventData,
} from '../../core/engagement/message-rules';
import { fromOfficial, toOfficial } from '../../core/upstream/mapping';
import * as tables from '../../core/upstream/vplat/message-fields';
import { jpeg, png } from '../helpers/images';

const request = (fields: Record<string, unknown>) =>
  create(SendMessageRequestSchema, { account: 'acct', conversationId: 'c+1', ...fields });

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected a refusal');
}

describe('message send rules', () => {
  it.each([
    ['text', { text: 'hi' }, { message_type: 'TEXT', text: { body: 'hi' } }],
    ['image', { imageMediaId: 'm1' }, { message_type: 'IMAGE', image: { media_id: 'm1' } }],
    ['shared post', { sharePostItemId: '73' }, { message_type: 'SHARE_POST', share_post: { item_id: '73' } }],
    [
      'QA card',
      { templateType: 'QA_LINK_CARD', templateTitle: 'T', templateButtons: [create(TemplateButtonSchema, { title: 'B', id: 'b' })] },
      { message_type: 'TEMPLATE', template: { type: 'QA_LINK_CARD', title: 'T', buttons: [{ type: 'REPLY', title: 'B', id: 'b' }] } },
    ],
    ['typing indicator', { senderAction: 'TYPING' }, { message_type: 'SENDER_ACTION', sender_action: 'TYPING' }],
    ['read receipt', { senderAction: 'MARK_READ' }, { message_type: 'SENDER_ACTION', sender_action: 'MARK_READ' }],
  ])('builds the official body for %s alone', (_kind, fields, expected) => {
    const req = request(fields);
    expect(sendBody(req, sendKindOf(req))).toEqual({ recipient_type: 'CONVERSATION', recipient: 'c+1', ...expected });
  });

  it('keeps a quoted message with text', () => {
    const req = request({ text: 'yes', referencedMessageId: 'm0' });
    expect(sendBody(req, sendKindOf(req))).toMatchObject({ referenced_message_info: { referenced_message_id: 'm0' } });
  });

  it('refuses no content, naming every content field', () => {
    const err = refusal(() => sendKindOf(request({})));
    expect(err.code).toBe(2001);
    expect(err.options.data).toMatchObject({
      field: 'content',
      fields: ['text', 'imageMediaId', 'sharePostItemId', 'templateType', 'templateTitle', 'templateButtons', 'senderAction'],
    });
  });

  it('refuses two kinds, naming the fields given', () => {
    const err = refusal(() => sendKindOf(request({ imageMediaId: 'm', templateButtons: [create(TemplateButtonSchema, { title: 'x' })] })));
    expect(err.message).toMatch(
      /^imageMediaId, templateButtons: give exactly one kind of content \(image and QA card were given together\)/,
    );
  });

  it('counts the parts of a QA card as one kind, and wants all three', () => {
    const req = request({ templateType: 'QA_BUTTON_CARD', templateTitle: 'T' });
    expect(sendKindOf(req).messageType).toBe('TEMPLATE');
    expect(refusal(() => sendBody(req, sendKindOf(req))).message).toMatch(/^templateButtons: must hold 1 to 3/);
  });

  it('limits button titles by card type and text by characters', () => {
    const long = create(TemplateButtonSchema, { title: 'x'.repeat(21) });
    const button = request({ templateType: 'QA_BUTTON_CARD', templateTitle: 'T', templateButtons: [long] });
    expect(refusal(() => sendBody(button, sendKindOf(button))).message).toMatch(/^templateButtons\[0\]\.title: must be at most 20/);
    const link = request({ templateType: 'QA_LINK_CARD', templateTitle: 'T', templateButtons: [long] });
    expect(sendBody(link, sendKindOf(link))).toMatchObject({ template: { buttons: [{ title: 'x'.repeat(21) }] } });
    const emoji = request({ text: '😀'.repeat(6000) });
    expect(() => sendBody(emoji, sendKindOf(emoji))).not.toThrow();
    const over = request({ text: '😀'.repeat(6001) });
    expect(refusal(() => sendBody(over, sendKindOf(over))).message).toMatch(/^text: must be at most 6000 characters/);
  });

  it('refuses a quote with anything but text', () => {
    expect(refusal(() => sendKindOf(request({ senderAction: 'TYPING', referencedMessageId: 'm' }))).message).toMatch(
      /^referencedMessageId: /,
    );
  });

  it('describes a sent message with im_send_msg field names', () => {
    const seat = { id: 'seat_1', accountId: 'biz1', accountUsername: 'shop' } as BoundSeat;
    const body = { business_id: 'biz1', recipient_type: 'CONVERSATION', recipient: 'c+1', message_type: 'TEXT', text: { body: 'hi' } };
    expect(sentEventData(seat, body, 'msg1', 1_700_000_000_000)).toEqual({
      from: 'shop',
      unique_identifier: 'biz1',
      from_user: { id: 'biz1', role: 'business_account' },
      conversation_id: 'c+1',
      message_id: 'msg1',
      timestamp: 1_700_000_000_000,
      type: 'text',
      text: { body: 'hi' },
      message_tag: { source: 'API' },
    });
  });
});

describe('message images', () => {
  it('takes JPG and PNG up to 3 MB, judged from the bytes', async () => {
    const refusalOf = (bytes: Uint8Array) =>
      checkMessageImage(bytes).then(
        () => Promise.reject(new Error('expected a refusal')),
        (err: unknown) => {
          expect(err).toBeInstanceOf(ApiError);
          return (err as ApiError).message;
        },
      );
    expect(await checkMessageImage(png(4, 4))).toEqual({ contentType: 'image/png' });
    expect(await checkMessageImage(jpeg(4, 4))).toEqual({ contentType: 'image/jpeg' });
    expect(await refusalOf(new Uint8Array(0))).toMatch(/^file: is empty/);
    expect(await refusalOf(Buffer.from('GIF89a0000000000'))).toMatch(/^file: must be a JPG or PNG/);
    expect(await refusalOf(png(4, 4, MESSAGE_MEDIA_MAX_BYTES + 1))).toMatch(/^file: must be at most 3 MB/);
  });
});

describe('auto message content', () => {
  it('takes the fields of its type only', () => {
    expect(autoMessageContent('CHAT_PROMPT', { chatPromptTitle: 'T', chatPromptContent: 'C' })).toEqual({
      chatPromptTitle: 'T',
      chatPromptContent: 'C',
    });
    expect(
      refusal(() => autoMessageContent('CHAT_PROMPT', { chatPromptTitle: 'T', chatPromptContent: 'C', welcomeMessageContent: 'W' }))
        .message,
    ).toMatch(/^welcomeMessageContent: goes only with autoMessageType WELCOME_MESSAGE/);
    expect(refusal(() => autoMessageContent('WELCOME_MESSAGE', { welcomeMessageContent: '  ' })).message).toMatch(
      /^welcomeMessageContent: is required/,
    );
    expect(refusal(() => autoMessageContent('CHAT_PROMPT', { chatPromptTitle: 'x'.repeat(19), chatPromptContent: 'C' })).message).toMatch(
      /at most 18/,
    );
  });

  it('maps create bodies and answers through the tables', () => {
    expect(
      toOfficial(
        tables.AUTO_MESSAGE_CREATE_BODY,
        { autoMessageType: 'SUGGESTED_QUESTION', suggestedQuestionQuestion: 'Q', suggestedQuestionAnswer: 'A' },
        { business_id: 'b' },
      ),
    ).toEqual({
      business_id: 'b',
      auto_message_type: 'SUGGESTED_QUESTION',
      suggested_question: { question: 'Q', answer: 'A' },
    });
    expect(fromOfficial(tables.AUTO_MESSAGE_WRITE_ANSWER, { auto_message: { auto_message_id: 'a1' } })).toEqual({ autoMessageId: 'a1' });
    expect(
      fromOfficial(tables.AUTO_MESSAGE_GET_ANSWER, {
        business_id: 'b',
        operation_status: 'ENABLE',
        auto_messages: [
          { auto_message_id: 'a1', auto_message_type: 'CHAT_PROMPT', audit_status: 'APPROVED', chat_prompt: { title: 'T', content: 'C' } },
        ],
      }),
    ).toEqual({
      items: [
        { autoMessageId: 'a1', autoMessageType: 'CHAT_PROMPT', auditStatus: 'APPROVED', chatPromptTitle: 'T', chatPromptContent: 'C' },
      ],
      operationStatus: 'ENABLE',
      businessId: 'b',
    });
  });

  it('answers lists as items', () => {
    expect(
      fromOfficial(tables.CONVERSATION_LIST_ANSWER, {
        conversations: [{ conversation_id: 'c', update_time: 1 }],
        has_more: false,
        cursor: 1,
      }),
    ).toEqual({
      items: [{ conversationId: 'c', updateTime: 1 }],
      hasMore: false,
      cursor: 1,
    });
    expect(fromOfficial(tables.SEND_MESSAGE_ANSWER, { message: { message_id: '' } })).toEqual({ messageId: '' });
  });
});
