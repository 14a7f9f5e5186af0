import { randomBytes } from 'node:crypto';
import { SealedBox } from '../../core/crypto/sealed-box';
import { openSigningKey, resealedSigningKey, sealSigningKey, signingKeyOf } from '../../core/events/signing-keys';

describe('webhook signing keys at rest', () => {
  const keyA = randomBytes(32);
  const box = new SealedBox(keyA);
  const key = signingKeyOf('whsec_example');

  it('is the spec’s key, the lower-case hex SHA-256 of the secret', () => {
    expect(key).toBe('7ea5eff04c598e380fed0b174cfc56a5194f471bc4543fa034ff19f7020f2084');
  });

  it('is stored sealed, without the key in it, and opens only for its endpoint', () => {
    const stored = sealSigningKey(box, 'we_1', key);

    expect(stored).not.toContain(key);
    expect(openSigningKey(box, 'we_1', stored)).toBe(key);
    expect(() => openSigningKey(box, 'we_2', stored)).toThrow();
  });

  it('reads a key stored plain before sealing as it is, and seals it when swept', () => {
    expect(openSigningKey(box, 'we_1', key)).toBe(key);

    const sealed = resealedSigningKey(box, 'we_1', key)!;
    expect(sealed.startsWith(box.currentPrefix)).toBe(true);
    expect(openSigningKey(box, 'we_1', sealed)).toBe(key);
  });

  it('seals again a key under an accepted key, and leaves a current one alone', () => {
    const underA = sealSigningKey(box, 'we_1', key);
    const rotated = new SealedBox(randomBytes(32), [keyA]);

    expect(resealedSigningKey(box, 'we_1', underA)).toBeUndefined();
    const underB = resealedSigningKey(rotated, 'we_1', underA)!;
    expect(rotated.isCurrent(underB)).toBe(true);
    expect(openSigningKey(rotated, 'we_1', underB)).toBe(key);
  });
});
