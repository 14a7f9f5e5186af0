import { createHash } from 'node:crypto';
import { pushSignature } from '../../core/events/push-signature';
import { verifyAsSpecSays } from '../helpers/spec-signature';

describe('push signature', () => {
  const secret = 'whsec_example';
  const key = createHash('sha256').update(secret).digest('hex');
  const body = '{"id":"evt_1","type":"vplat.comment.created"}';

  it('verifies by the spec steps', () => {
    const header = pushSignature([key], 1_800_000_000, body);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifyAsSpecSays(header, body, secret, 1_800_000_100)).toBe(true);
  });

  it('fails for another body, another secret or outside the replay window', () => {
    const header = pushSignature([key], 1_800_000_000, body);
    expect(verifyAsSpecSays(header, `${body} `, secret, 1_800_000_000)).toBe(false);
    expect(verifyAsSpecSays(header, body, 'other', 1_800_000_000)).toBe(false);
    expect(verifyAsSpecSays(header, body, secret, 1_800_000_301)).toBe(false);
  });

  it('carries one v1 per live key, so either secret verifies during a rotation', () => {
    const oldKey = createHash('sha256').update('old').digest('hex');
    const header = pushSignature([key, oldKey], 1_800_000_000, body);
    expect(header.split(',')).toHaveLength(3);
    expect(verifyAsSpecSays(header, body, secret, 1_800_000_000)).toBe(true);
    expect(verifyAsSpecSays(header, body, 'old', 1_800_000_000)).toBe(true);
  });
});
