import { createHash } from 'node:crypto';
import { pushSignature, pushSignatureHeaders } from '../../core/events/push-signature';
import { newEndpointSecret, pushKeyOf, pushKeyOfSecret, signingKeyOf, storedKeysOf } from '../../core/events/signing-keys';
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

describe('Standard Webhooks signature', () => {
  const body = '{"id":"evt_1","type":"vplat.comment.created"}';
  // Computed with openssl (see test/unit/webhook-signature.test.ts): the same vectors the SDK verifies.
  const NEW_SECRET = 'whsec_v9iV6Xgjpa51NCZo4qdKVsLneAXs3NAu8pHAN5Eiruk=';
  const OLD_SECRET = 'whsec_q-3vZ_8kYl0mF2xNwR7aJbC4dE5fG6hI9jK1lM2nO3p';

  it('signs with the secret’s bytes for today’s form and with the SHA-256 of an old secret, one entry per live key', () => {
    const current = pushKeyOf(signingKeyOf(NEW_SECRET), NEW_SECRET);
    const previous = pushKeyOf(signingKeyOf(OLD_SECRET), null);
    expect(current.serviceKey.export().toString('utf8')).toBe(signingKeyOf(NEW_SECRET));
    const headers = pushSignatureHeaders([current, previous], 'evt_1', 1_800_000_000, body);
    expect(headers).toEqual({
      'x-service-signature': pushSignature([signingKeyOf(NEW_SECRET), signingKeyOf(OLD_SECRET)], 1_800_000_000, body),
      'webhook-id': 'evt_1',
      'webhook-timestamp': '1800000000',
      'webhook-signature': 'v1,lhIKr13vIACv7L8ciMtrrd3jgQbAMdlXW2p2GmcUdzs= v1,Iq530TzB//6xOfYc5TORjmlBcVKWUPJMINEu8AomuH8=',
    });
  });

  it('stores the spec key as it always was, and the secret beside it only in the standard form', () => {
    expect(storedKeysOf(NEW_SECRET)).toEqual({ signingKey: signingKeyOf(NEW_SECRET), standardKey: NEW_SECRET });
    // base64url, or no whsec_ at all: only the digest is kept, and its bytes are the standard key.
    for (const secret of [OLD_SECRET, 'my-own-secret', 'whsec_', 'whsec_c2hvcnQ=']) {
      expect(storedKeysOf(secret)).toEqual({ signingKey: signingKeyOf(secret), standardKey: null });
      expect(pushKeyOfSecret(secret).standardKey.export()).toEqual(createHash('sha256').update(secret).digest());
    }
  });

  it('signs with the digest when the standard key beside the signing key is of another secret', () => {
    // A rotation by a process that writes only signing_key leaves the old secret in standard_key.
    const rotated = pushKeyOf(signingKeyOf(OLD_SECRET), NEW_SECRET);
    expect(rotated.serviceKey.export().toString('utf8')).toBe(signingKeyOf(OLD_SECRET));
    expect(rotated.standardKey.export()).toEqual(createHash('sha256').update(OLD_SECRET).digest());
  });

  it('issues secrets as whsec_ and padded standard base64 of 32 bytes', () => {
    const secrets = Array.from({ length: 50 }, newEndpointSecret);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    }
    expect(new Set(secrets).size).toBe(50);
  });
});
