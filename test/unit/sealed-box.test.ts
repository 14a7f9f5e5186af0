import { randomBytes } from 'node:crypto';
import { SealedBox } from '../../core/crypto/sealed-box';

const AD = 'seat_01hzy3k5v8w9x0a1b2c3d4e5f6';

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

    expect(sealed.startsWith('v1.')).toBe(true);
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

    expect(() => box.open(flipBit(sealed, 3), AD)).toThrow();
  });

  it('refuses a tampered authentication tag', () => {
    const sealed = box.seal('secret', AD);

    expect(() => box.open(flipBit(sealed, 2), AD)).toThrow();
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
    ['an unknown version', (s: string) => s.replace(/^v1\./, 'v2.')],
    ['a missing part', (s: string) => s.split('.').slice(0, 3).join('.')],
    [
      'an empty IV',
      (s: string) =>
        s
          .split('.')
          .map((p, i) => (i === 1 ? '' : p))
          .join('.'),
    ],
    ['plain text', () => 'not-a-sealed-value'],
    ['an empty string', () => ''],
  ])('refuses an unrecognised format: %s', (_label, mangle) => {
    const sealed = box.seal('secret', AD);

    expect(() => box.open(mangle(sealed), AD)).toThrow('unrecognised sealed value');
  });
});
