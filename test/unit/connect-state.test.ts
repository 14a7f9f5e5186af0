import { randomBytes } from 'node:crypto';
import { TokenSigner } from '../../core/media/signed-tokens';
import { issueConnectState, openConnectState } from '../../core/seats/connect-state';

describe('seat connect state', () => {
  const signer = new TokenSigner(randomBytes(32));
  const who = { customerId: 'cus_1', userId: 'usr_1', seatId: 'seat_1' };
  const now = 1_800_000_000_000;

  it('opens to who asked, for which seat, with a fresh nonce each time', () => {
    const a = issueConnectState(signer, who, 600_000, now);
    const b = issueConnectState(signer, who, 600_000, now);
    expect(a).toMatch(/^[\w-]+\.\d+\.[\w-]+$/);
    expect(openConnectState(signer, a, now)).toEqual({ ...who, nonce: expect.any(String) });
    expect(openConnectState(signer, a, now)!.nonce).not.toBe(openConnectState(signer, b, now)!.nonce);
  });

  it('refuses it once expired, when any part was changed, or when another key signed it', () => {
    const state = issueConnectState(signer, who, 600_000, now);
    expect(openConnectState(signer, state, now + 601_000)).toBeUndefined();
    const [subject, expires, signature] = state.split('.');
    const otherSeat = Buffer.from(JSON.stringify({ ...who, seatId: 'seat_2', nonce: 'n' })).toString('base64url');
    expect(openConnectState(signer, `${otherSeat}.${expires}.${signature}`, now)).toBeUndefined();
    expect(openConnectState(signer, `${subject}.${Number(expires) + 60}.${signature}`, now)).toBeUndefined();
    expect(openConnectState(new TokenSigner(randomBytes(32)), state, now)).toBeUndefined();
    expect(openConnectState(signer, 'not a state', now)).toBeUndefined();
  });

  it('cannot be confused with a media or upload signature over the same text', () => {
    const state = issueConnectState(signer, who, 600_000, now);
    const [subject, expires] = state.split('.');
    const media = signer.sign('media', subject!, Number(expires));
    expect(openConnectState(signer, `${subject}.${expires}.${media}`, now)).toBeUndefined();
  });
});
