import { randomBytes } from 'node:crypto';
import { mediaUrl, TokenSigner } from '../../core/media/signed-tokens';

describe('TokenSigner', () => {
  const signer = new TokenSigner(randomBytes(32));
  const inAnHour = Math.floor(Date.now() / 1000) + 3600;

  it('verifies its own signature for the same purpose, subject and expiry', () => {
    const signature = signer.sign('media', 'vid_a', inAnHour);
    expect(signer.verify('media', 'vid_a', inAnHour, signature)).toBe(true);
  });

  it('refuses a signature for another subject, expiry, purpose or key, and a tampered one', () => {
    const signature = signer.sign('media', 'vid_a', inAnHour);
    expect(signer.verify('media', 'vid_b', inAnHour, signature)).toBe(false);
    expect(signer.verify('media', 'vid_a', inAnHour + 1, signature)).toBe(false);
    expect(signer.verify('upload', 'vid_a', inAnHour, signature)).toBe(false);
    expect(new TokenSigner(randomBytes(32)).verify('media', 'vid_a', inAnHour, signature)).toBe(false);
    const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    expect(signer.verify('media', 'vid_a', inAnHour, flipped)).toBe(false);
    expect(signer.verify('media', 'vid_a', inAnHour, signature.slice(1))).toBe(false);
    expect(signer.verify('media', 'vid_a', inAnHour, '')).toBe(false);
  });

  it('refuses an expired signature, and expiries that are not whole seconds', () => {
    const past = Math.floor(Date.now() / 1000) - 1;
    expect(signer.verify('media', 'vid_a', past, signer.sign('media', 'vid_a', past))).toBe(false);
    // Valid until its second ends, not after.
    expect(signer.verify('media', 'vid_a', inAnHour, signer.sign('media', 'vid_a', inAnHour), inAnHour * 1000)).toBe(true);
    expect(signer.verify('media', 'vid_a', inAnHour, signer.sign('media', 'vid_a', inAnHour), inAnHour * 1000 + 1)).toBe(false);
    expect(signer.verify('media', 'vid_a', Number.NaN, 'x')).toBe(false);
    expect(signer.verify('media', 'vid_a', 1.5, signer.sign('media', 'vid_a', 1.5))).toBe(false);
  });

  it('verifies, during a key rotation, what the other key signed, and signs with its own key only', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const beforeSwitch = new TokenSigner(a, [b]);
    const afterSwitch = new TokenSigner(b, [a]);
    const signedWithA = new TokenSigner(a).sign('media', 'vid_a', inAnHour);

    expect(afterSwitch.verify('media', 'vid_a', inAnHour, signedWithA)).toBe(true);
    expect(beforeSwitch.verify('media', 'vid_a', inAnHour, afterSwitch.sign('media', 'vid_a', inAnHour))).toBe(true);
    expect(beforeSwitch.sign('media', 'vid_a', inAnHour)).toBe(signedWithA);
    expect(new TokenSigner(b).verify('media', 'vid_a', inAnHour, signedWithA)).toBe(false);
  });

  it('opens its tickets, and nothing else', () => {
    const ticket = signer.ticket('upload', 'vid_a', inAnHour);
    expect(signer.openTicket('upload', ticket)).toBe('vid_a');
    expect(signer.openTicket('media', ticket)).toBeUndefined();
    expect(signer.openTicket('upload', ticket.replace('vid_a', 'vid_b'))).toBeUndefined();
    expect(signer.openTicket('upload', ticket, (inAnHour + 1) * 1000)).toBeUndefined();
    expect(signer.openTicket('upload', `${ticket}x`)).toBeUndefined();
    expect(signer.openTicket('upload', 'not a ticket')).toBeUndefined();
    expect(signer.openTicket('upload', '')).toBeUndefined();
  });

  it('builds media URLs that carry a verifiable expiry and signature', () => {
    const expiresAt = new Date(inAnHour * 1000 + 400);
    const url = new URL(mediaUrl(signer, 'https://api.example.com', 'vid_a', expiresAt));
    expect(url.pathname).toBe('/media/videos/vid_a');
    expect(Number(url.searchParams.get('expires'))).toBe(inAnHour);
    expect(signer.verify('media', 'vid_a', inAnHour, url.searchParams.get('signature')!)).toBe(true);
  });
});
