import { parseJsonLossless } from '../../core/events/lossless-json';
import { normalizeOfficial, officialSourceKey } from '../../core/events/official-events';

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
    expect(normalizeOfficial(webhook('comment.update', content), content)).toMatchObject({ type, event: 'comment.update', occurredAt: new Date(1_800_000_000_123) });
  });

  it('gives a top-level comment parent_comment_id 0 and keeps a reply’s parent', () => {
    const top = { comment_id: 1, comment_action: 'insert', comment_type: 'comment' };
    expect(normalizeOfficial(webhook('comment.update', top), top)!.data.parent_comment_id).toBe(0);
    const reply = { comment_id: 2, comment_action: 'insert', comment_type: 'reply', parent_comment_id: 1 };
    expect(normalizeOfficial(webhook('comment.update', reply), reply)!.data.parent_comment_id).toBe(1);
  });

  it('maps messages, and ignores what the service does not log', () => {
    expect(normalizeOfficial(webhook('im_receive_msg', {}), {})!.type).toBe('vplat.message.received');
    expect(normalizeOfficial(webhook('im_send_msg', {}), {})!.type).toBe('vplat.message.sent');
    expect(normalizeOfficial(webhook('post.publish.complete', {}), {})).toBeUndefined();
    expect(normalizeOfficial(webhook('comment.update', { comment_action: 'pinned' }), { comment_action: 'pinned' })).toBeUndefined();
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
