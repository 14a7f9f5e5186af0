import { createHmac } from 'node:crypto';
import { verifyOfficialWebhook } from '../../core/upstream/vplat/webhooks';

const SECRET = 'app-secret';
const NOW = 1_790_000_000;

function signed(body: string, t = NOW, secret = SECRET): string {
  return `t=${t},s=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

const body = JSON.stringify({
  client_key: 'app',
  event: 'comment.update',
  create_time: NOW,
  user_openid: 'biz-1',
  content: JSON.stringify({ comment_id: 7, comment_action: 'insert', parent_comment_id: 0 }),
});

describe('official webhook verification', () => {
  it('accepts a correctly signed push and parses its content string', () => {
    const verdict = verifyOfficialWebhook({
      appSecret: SECRET,
      appId: 'app',
      signatureHeader: signed(body),
      rawBody: body,
      nowSeconds: NOW + 10,
    });
    expect(verdict).toMatchObject({
      ok: true,
      webhook: { event: 'comment.update', user_openid: 'biz-1' },
      content: { comment_id: 7, parent_comment_id: 0 },
    });
  });

  it('refuses a tampered body', () => {
    const tampered = body.replace('insert', 'delete');
    expect(verifyOfficialWebhook({ appSecret: SECRET, signatureHeader: signed(body), rawBody: tampered, nowSeconds: NOW })).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
  });

  it('refuses a stale or future timestamp beyond 300 seconds, even when correctly signed', () => {
    expect(verifyOfficialWebhook({ appSecret: SECRET, signatureHeader: signed(body), rawBody: body, nowSeconds: NOW + 301 })).toEqual({
      ok: false,
      reason: 'stale timestamp',
    });
    expect(verifyOfficialWebhook({ appSecret: SECRET, signatureHeader: signed(body), rawBody: body, nowSeconds: NOW - 301 })).toEqual({
      ok: false,
      reason: 'stale timestamp',
    });
    expect(verifyOfficialWebhook({ appSecret: SECRET, signatureHeader: signed(body), rawBody: body, nowSeconds: NOW + 300 }).ok).toBe(true);
  });

  it('refuses another secret, a missing or malformed header, and a push for another app', () => {
    expect(
      verifyOfficialWebhook({ appSecret: SECRET, signatureHeader: signed(body, NOW, 'other'), rawBody: body, nowSeconds: NOW }).ok,
    ).toBe(false);
    expect(verifyOfficialWebhook({ appSecret: SECRET, signatureHeader: undefined, rawBody: body, nowSeconds: NOW })).toEqual({
      ok: false,
      reason: 'missing signature header',
    });
    expect(verifyOfficialWebhook({ appSecret: SECRET, signatureHeader: 'v1=abc', rawBody: body, nowSeconds: NOW })).toEqual({
      ok: false,
      reason: 'malformed signature header',
    });
    expect(
      verifyOfficialWebhook({ appSecret: SECRET, appId: 'someone-else', signatureHeader: signed(body), rawBody: body, nowSeconds: NOW }),
    ).toEqual({
      ok: false,
      reason: 'push for another app',
    });
  });

  it('reads the header parts by name, in any order and with spaces', () => {
    const [t, s] = signed(body).split(',');
    expect(verifyOfficialWebhook({ appSecret: SECRET, signatureHeader: ` ${s}, ${t}`, rawBody: body, nowSeconds: NOW }).ok).toBe(true);
  });

  it('refuses a body whose content is not a JSON object', () => {
    const bad = JSON.stringify({ client_key: 'app', event: 'x', create_time: NOW, user_openid: 'b', content: 'nope' });
    expect(verifyOfficialWebhook({ appSecret: SECRET, signatureHeader: signed(bad), rawBody: bad, nowSeconds: NOW })).toEqual({
      ok: false,
      reason: 'body is not valid JSON',
    });
  });
});
