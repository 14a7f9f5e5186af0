import { createCipheriv, randomBytes } from 'node:crypto';
import { keyIdOf, looksSealed, SealedBox, SealedValueError } from '../../core/crypto/sealed-box';

const AD = 'seat_01hzy3k5v8w9x0a1b2c3d4e5f6';

/** A value as the service sealed it before key ids: `v1.<iv>.<tag>.<ciphertext>`. */
function sealV1(key: Buffer, plaintext: string, associatedData: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

/** Flips one bit of the decoded bytes in the given dot-separated part of a sealed value. */
function flipBit(sealed: string, part: number): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[part] ?? '', 'base64url');
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  parts[part] = bytes.toString('base64url');
  return parts.join('.');
}

describe('SealedBox', () => {
  const box = new SealedBox(randomBytes(32));

  it.each([
    ['an upstream token', 'upstream-access-token-123'],
    ['non-ASCII text', 'clé secrète ✓'],
    ['an empty string', ''],
  ])('opens what it sealed: %s', (_label, plaintext) => {
    const sealed = box.seal(plaintext, AD);

    expect(sealed.startsWith(`v2.${box.keyId}.`)).toBe(true);
    expect(box.open(sealed, AD)).toBe(plaintext);
  });

  it('does not carry the plaintext in the sealed value', () => {
    const sealed = box.seal('upstream-access-token-123', AD);

    expect(sealed).not.toContain('upstream-access-token-123');
    expect(sealed).not.toContain(Buffer.from('upstream-access-token-123').toString('base64url'));
  });

  it('seals the same plaintext to different values (fresh IV each time)', () => {
    const a = box.seal('same secret', AD);
    const b = box.seal('same secret', AD);

    expect(a).not.toBe(b);
    expect(box.open(a, AD)).toBe('same secret');
    expect(box.open(b, AD)).toBe('same secret');
  });

  it('refuses to open with different associated data (a value copied to another row)', () => {
    const sealed = box.seal('secret', AD);

    expect(() => box.open(sealed, 'seat_someone_else')).toThrow();
  });

  it('refuses a tampered ciphertext', () => {
    const sealed = box.seal('secret', AD);

    expect(() => box.open(flipBit(sealed, 4), AD)).toThrow(SealedValueError);
  });

  it('refuses a tampered authentication tag', () => {
    const sealed = box.seal('secret', AD);

    expect(() => box.open(flipBit(sealed, 3), AD)).toThrow(SealedValueError);
  });

  it('refuses to open with a different key', () => {
    const sealed = box.seal('secret', AD);
    const other = new SealedBox(randomBytes(32));

    expect(() => other.open(sealed, AD)).toThrow();
  });

  it.each([16, 31, 33, 0])('refuses a %i-byte key', (length) => {
    expect(() => new SealedBox(randomBytes(length))).toThrow('SealedBox needs a 32-byte key');
  });

  it.each([
    ['an unknown version', (s: string) => s.replace(/^v2\./, 'v3.')],
    ['a missing part', (s: string) => s.split('.').slice(0, 4).join('.')],
    ['a key id that is not one', (s: string) => s.replace(/^v2\.[0-9a-f]{12}\./, 'v2.not-an-id.')],
    ['a part that is not base64url', (s: string) => s.replace(/\.[^.]+$/, '.a+b/c')],
    [
      'an empty IV',
      (s: string) =>
        s
          .split('.')
          .map((p, i) => (i === 2 ? '' : p))
          .join('.'),
    ],
    ['plain text', () => 'not-a-sealed-value'],
    ['an empty string', () => ''],
  ])('refuses an unrecognised format: %s', (_label, mangle) => {
    const sealed = box.seal('secret', AD);

    expect(() => box.open(mangle(sealed), AD)).toThrow('unrecognised sealed value');
  });
});

describe('SealedBox key ids and rotation', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  const boxA = new SealedBox(keyA);
  /** After the switch: B seals, A still opens. */
  const rotated = new SealedBox(keyB, [keyA]);

  it('names the sealing key in every value, by an id derived from the key alone', () => {
    expect(boxA.keyId).toMatch(/^[0-9a-f]{12}$/);
    expect(boxA.keyId).toBe(keyIdOf(keyA));
    expect(new SealedBox(keyA).keyId).toBe(boxA.keyId);
    expect(rotated.keyId).toBe(keyIdOf(keyB));
    expect(rotated.acceptedKeyIds).toEqual([keyIdOf(keyA)]);
    expect(boxA.seal('secret', AD).split('.')[1]).toBe(boxA.keyId);
    expect(boxA.currentPrefix).toBe(`v2.${boxA.keyId}.`);
  });

  it('opens a value sealed under an accepted key and says it is due to be sealed again; its own values are not', () => {
    const underA = boxA.seal('upstream-token', AD);
    const underB = rotated.seal('upstream-token', AD);

    expect(rotated.unseal(underA, AD)).toEqual({ plaintext: 'upstream-token', stale: true });
    expect(rotated.unseal(underB, AD)).toEqual({ plaintext: 'upstream-token', stale: false });
    expect(rotated.isCurrent(underA)).toBe(false);
    expect(rotated.isCurrent(underB)).toBe(true);
    // Sealing again under B takes A out of the picture.
    expect(new SealedBox(keyB).open(rotated.seal(rotated.open(underA, AD), AD), AD)).toBe('upstream-token');
  });

  it('opens, before the switch, what a process already past it sealed under the next key', () => {
    const staged = new SealedBox(keyA, [keyB]);

    expect(staged.open(rotated.seal('written by a newer process', AD), AD)).toBe('written by a newer process');
    expect(staged.seal('x', AD).startsWith(`v2.${keyIdOf(keyA)}.`)).toBe(true);
  });

  it('refuses a value sealed under a key it does not hold, naming that key and where to configure it', () => {
    const underA = boxA.seal('secret', AD);

    expect(() => new SealedBox(keyB).open(underA, AD)).toThrow(SealedValueError);
    expect(() => new SealedBox(keyB).open(underA, AD)).toThrow(
      `sealed under key ${keyIdOf(keyA)}, which this process does not hold (it holds ${keyIdOf(keyB)}): add it to VPS_ENCRYPTION_KEYS_ACCEPTED`,
    );
  });

  it('opens values sealed before key ids with whichever key held, and marks them due', () => {
    const old = sealV1(keyA, 'from before key ids', AD);

    expect(boxA.unseal(old, AD)).toEqual({ plaintext: 'from before key ids', stale: true });
    expect(rotated.unseal(old, AD)).toEqual({ plaintext: 'from before key ids', stale: true });
    expect(() => new SealedBox(keyB).open(old, AD)).toThrow('sealed value does not open with any key held');
    expect(() => boxA.open(old, 'seat_someone_else')).toThrow(SealedValueError);
    expect(() => boxA.open(flipBit(old, 3), AD)).toThrow(SealedValueError);
  });

  it('holds a key given twice once, and refuses an accepted key of the wrong size', () => {
    expect(new SealedBox(keyB, [keyA, keyB, keyA]).acceptedKeyIds).toEqual([keyIdOf(keyA)]);
    expect(() => new SealedBox(keyB, [randomBytes(16)])).toThrow('SealedBox needs a 32-byte key');
  });

  it('tells a sealed value from a value stored plain', () => {
    expect(looksSealed(boxA.seal('k', AD))).toBe(true);
    expect(looksSealed(sealV1(keyA, 'k', AD))).toBe(true);
    // A webhook signing key as stored before sealing: 64 lower-case hex digits.
    expect(looksSealed('a'.repeat(64))).toBe(false);
    expect(looksSealed('')).toBe(false);
    expect(looksSealed('v2.nothex.a.b.c')).toBe(false);
  });
});
