import { createHash } from 'node:crypto';
import { API_KEY_PATTERN, generateApiKey, parseBearer } from '../../core/crypto/api-keys';

describe('generateApiKey', () => {
  it('makes a key of the documented shape, with its visible prefix and sha256 hash', () => {
    const { plaintext, prefix, hash } = generateApiKey();

    expect(plaintext).toMatch(API_KEY_PATTERN);
    expect(prefix).toBe(plaintext.slice(0, 12));
    expect(prefix.startsWith('vps_')).toBe(true);
    expect(hash).toBe(createHash('sha256').update(plaintext).digest('hex'));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('makes a different key and hash every time', () => {
    const a = generateApiKey();
    const b = generateApiKey();

    expect(a.plaintext).not.toBe(b.plaintext);
    expect(a.hash).not.toBe(b.hash);
  });
});

describe('parseBearer', () => {
  const key = generateApiKey().plaintext;

  it.each([
    ['Bearer', `Bearer ${key}`],
    ['bearer (scheme is case-insensitive)', `bearer ${key}`],
  ])('returns the key from %s <key>', (_label, header) => {
    expect(parseBearer(header)).toBe(key);
  });

  it.each<[string, string | null | undefined]>([
    ['a doubled Bearer prefix', `Bearer Bearer ${key}`],
    ['a missing scheme', key],
    ['the Basic scheme', `Basic ${key}`],
    ['two spaces after the scheme', `Bearer  ${key}`],
    ['a trailing space', `Bearer ${key} `],
    ['a key of the wrong shape', 'Bearer vps_tooShort'],
    ['a key with a wrong prefix', `Bearer sk_${key.slice(4)}`],
    ['undefined', undefined],
    ['null', null],
    ['an empty header', ''],
  ])('refuses %s', (_label, header) => {
    expect(parseBearer(header)).toBeUndefined();
  });
});
