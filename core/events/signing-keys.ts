/**
 * Webhook endpoints' secrets and signing keys at rest. What is stored for a key is one of two forms:
 *
 * - the secret itself, `whsec_` + standard base64 of 32 random bytes, for secrets issued since
 *   pushes carry Standard Webhooks headers: that scheme's key is the secret's bytes, so both keys
 *   come from it;
 * - the lower-case hex SHA-256 of the secret, for the older `whsec_` + base64url secrets, whose
 *   text the service never kept. Their Standard Webhooks key is that digest's 32 bytes, so a
 *   receiver holding such a secret verifies with `whsec_` + base64 of SHA-256(secret).
 *
 * Either way whoever reads it can sign pushes, so it is kept sealed like the upstream tokens, bound
 * to its endpoint. Rows written before sealing hold it plain; they are read as they are until core's
 * re-seal sweep seals them (core/crypto/reseal-sweep.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { looksSealed, type SealedBox } from '../crypto/sealed-box';
import type { PushKey } from './push-signature';

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret in the Standard Webhooks form: `whsec_` + standard base64 (with padding). */
export function newEndpointSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Exactly the spec's key derivation: the lower-case hex SHA-256 of the secret. */
export function signingKeyOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** What is stored (sealed) for a secret the service issues now: the secret itself. */
export function storedKeyOf(secret: string): string {
  return secret;
}

/** Both schemes' keys of a stored value, once opened: a secret of today's form, or an old secret's digest. */
export function pushKeyOf(stored: string): PushKey {
  if (stored.startsWith(SECRET_PREFIX)) {
    return { serviceKey: signingKeyOf(stored), standardKey: Buffer.from(stored.slice(SECRET_PREFIX.length), 'base64') };
  }
  return { serviceKey: stored, standardKey: Buffer.from(stored, 'hex') };
}

/**
 * Bound to the endpoint, not to the column: a rotation moves the current key to the previous one
 * in one statement, and the moved value must still open.
 */
function boundTo(endpointId: string): string {
  return `webhook-endpoint ${endpointId}`;
}

/** Seals a stored value (either form); it is opened with openSigningKey. */
export function sealSigningKey(box: SealedBox, endpointId: string, signingKey: string): string {
  return box.seal(signingKey, boundTo(endpointId));
}

/** The stored value (either form), sealed or (from before sealing) plain. */
export function openSigningKey(box: SealedBox, endpointId: string, stored: string): string {
  return looksSealed(stored) ? box.open(stored, boundTo(endpointId)) : stored;
}

/**
 * The stored value as it should be now (sealed under the current key), or undefined when it
 * already is. Throws when it cannot be opened.
 */
export function resealedSigningKey(box: SealedBox, endpointId: string, stored: string): string | undefined {
  if (!looksSealed(stored)) return sealSigningKey(box, endpointId, stored);
  const { plaintext, stale } = box.unseal(stored, boundTo(endpointId));
  return stale ? sealSigningKey(box, endpointId, plaintext) : undefined;
}
