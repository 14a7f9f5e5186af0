import { parseJsonLossless } from '../../core/events/lossless-json';
import { MAX_CONTENT_DEPTH, normalizeOfficial, officialSourceKey } from '../../core/events/official-events';
import { holdsUnstorable } from '../../core/unstorable-text';

const webhook = (event: string, content: Record<string, unknown>) => ({
  client_key: 'app',
  event,
  create_time: 1_800_000_000,
  user_openid: 'biz-1',
  content: JSON.stringify(content),
});

describe('official events', () => {
  it.each([
    ['insert', 'vplat.comment.created'],
    ['delete', 'vplat.comment.deleted'],
    ['set_to_hidden', 'vplat.comment.visibility_changed'],
    ['set_to_public', 'vplat.comment.visibility_changed'],
  ])('maps comment.update %s to %s', (action, type) => {
    const content = { comment_id: 1, comment_action: action, comment_type: 'comment', timestamp: 1_800_000_000_123 };
    expect(normalizeOfficial(webhook('comment.update', content), content)).toMatchObject({
      type,
      event: 'comment.update',
      occurredAt: new Date(1_800_000_000_123),
    });
  });

  it('gives a top-level comment parent_comment_id 0 and keeps a reply’s parent', () => {
    const top = { comment_id: 1, comment_action: 'insert', comment_type: 'comment' };
    expect(normalizeOfficial(webhook('comment.update', top), top)!.data.parent_comment_id).toBe(0);
    const reply = { comment_id: 2, comment_action: 'insert', comment_type: 'reply', parent_comment_id: 1 };
    expect(normalizeOfficial(webhook('comment.update', reply), reply)!.data.parent_comment_id).toBe(1);
  });

  it.each([
    ['a reply without its parent id', { comment_type: 'reply' }, null],
    ['a reply with an empty parent id', { comment_type: 'reply', parent_comment_id: '' }, null],
    ['a comment with neither type nor parent', {}, null],
    ['a comment without a type but with a parent', { parent_comment_id: 77 }, 77],
    ['a comment without a type whose parent id is 0', { parent_comment_id: 0 }, 0],
    ['a parent id of "0" as text', { comment_type: 'reply', parent_comment_id: '0' }, 0],
    ['a top-level comment that names a parent anyway (kept: not top-level)', { comment_type: 'comment', parent_comment_id: 5 }, 5],
  ])('labels %s with parent_comment_id %p, never 0 unless the platform says so', (_name, fields, expected) => {
    const content = { comment_id: 3, comment_action: 'insert', ...fields };
    expect(normalizeOfficial(webhook('comment.update', content), content)!.data.parent_comment_id).toBe(expected);
  });

  it('maps messages, and ignores what the service does not log', () => {
    expect(normalizeOfficial(webhook('im_receive_msg', {}), {})!.type).toBe('vplat.message.received');
    expect(normalizeOfficial(webhook('im_send_msg', {}), {})!.type).toBe('vplat.message.sent');
    expect(normalizeOfficial(webhook('post.publish.complete', {}), {})).toBeUndefined();
    expect(normalizeOfficial(webhook('comment.update', { comment_action: 'pinned' }), { comment_action: 'pinned' })).toBeUndefined();
  });

  it('finds types in its own tables only, never among the properties every object inherits', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      expect(normalizeOfficial(webhook(name, {}), {})).toBeUndefined();
      expect(normalizeOfficial(webhook('comment.update', { comment_action: name }), { comment_action: name })).toBeUndefined();
    }
  });

  it('keeps an event whose text Postgres cannot hold, with U+FFFD for each NUL and half surrogate pair', () => {
    const content = parseJsonLossless('{"comment_action":"insert","text":"a\\u0000b \\ud83d!","n\\u0000":["\\udc00"]}') as Record<
      string,
      unknown
    >;
    expect(normalizeOfficial(webhook('comment.update', content), content)!.data).toMatchObject({
      text: 'a\ufffdb \ufffd!',
      'n\ufffd': ['\ufffd'],
    });
    // A whole pair is a character, and stays.
    const emoji = { comment_action: 'insert', text: 'ok \ud83d\ude00' };
    expect(normalizeOfficial(webhook('comment.update', emoji), emoji)!.data.text).toBe('ok \ud83d\ude00');
  });

  it('tells an identifier Postgres cannot hold, the same every time it is asked', () => {
    for (const text of ['a\u0000b', '\ud800', 'x\udc00y', 'a\u0000b']) expect(holdsUnstorable(text)).toBe(true);
    for (const text of ['biz-1', 'ok \ud83d\ude00', '']) expect(holdsUnstorable(text)).toBe(false);
  });

  it('refuses content nested deeper than any official push with 2001 naming content', () => {
    const nest = (levels: number): unknown => (levels === 0 ? 'x' : [nest(levels - 1)]);
    const fits = { comment_action: 'insert', a: nest(MAX_CONTENT_DEPTH - 1) };
    expect(normalizeOfficial(webhook('comment.update', fits), fits)).toBeDefined();
    const deep = { comment_action: 'insert', a: nest(MAX_CONTENT_DEPTH) };
    expect(() => normalizeOfficial(webhook('comment.update', deep), deep)).toThrow(
      expect.objectContaining({ code: 2001, message: expect.stringContaining('content') }),
    );
  });

  it('takes the time from the content, else the envelope, else the moment it was received, skipping what is no time', () => {
    const received = new Date('2026-11-22T12:00:00Z');
    const at = (content: Record<string, unknown>, createTime: unknown) =>
      normalizeOfficial({ ...webhook('comment.update', content), create_time: createTime as number }, content, received)!.occurredAt;
    expect(at({ comment_action: 'insert', timestamp: 1_800_000_000_123 }, 1)).toEqual(new Date(1_800_000_000_123));
    for (const timestamp of [1e300, -1, -8.64e15 - 1, '1800000000123', Number.NaN]) {
      expect(at({ comment_action: 'insert', timestamp }, 1_800_000_000)).toEqual(new Date(1_800_000_000_000));
    }
    for (const createTime of ['x', 1e300, null, -5]) expect(at({ comment_action: 'insert' }, createTime)).toEqual(received);
  });

  it('identifies a push by its event, account and content', () => {
    const a = webhook('im_receive_msg', { message_id: 'm1' });
    expect(officialSourceKey(a)).toBe(officialSourceKey({ ...a, create_time: 1 }));
    expect(officialSourceKey(a)).not.toBe(officialSourceKey(webhook('im_receive_msg', { message_id: 'm2' })));
  });

  it('keeps 19-digit ids exact, as strings, and everything else as parsed', () => {
    expect(parseJsonLossless('{"comment_id":7432109876543210987,"n":12,"s":"7432109876543210987","f":1.5,"parent_comment_id":0}')).toEqual({
      comment_id: '7432109876543210987',
      n: 12,
      s: '7432109876543210987',
      f: 1.5,
      parent_comment_id: 0,
    });
    expect(parseJsonLossless('{"safe":9007199254740991,"neg":-7432109876543210987,"text":"a \\" 1234567890123456789"}')).toEqual({
      safe: 9007199254740991,
      neg: '-7432109876543210987',
      text: 'a " 1234567890123456789',
    });
  });
});
