/**
 * Webhook endpoints' signing keys at rest. The key is the lower-case hex SHA-256 of the endpoint's
 * secret, exactly the HMAC key of the spec's scheme: whoever reads it can sign pushes, so it is
 * kept sealed like the upstream tokens, bound to its endpoint. Rows written before sealing hold it
 * plain; they are read as they are until core's re-seal sweep seals them (core/crypto/reseal-sweep.ts).
 */
import { createHash } from 'node:crypto';
import { looksSealed, type SealedBox } from '../crypto/sealed-box';

/** Exactly the spec's key derivation: the lower-case hex SHA-256 of the secret. */
export function signingKeyOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/**
 * Bound to the endpoint, not to the column: a rotation moves the current key to the previous one
 * in one statement, and the moved value must still open.
 */
function boundTo(endpointId: string): string {
  return `webhook-endpoint ${endpointId}`;
}

export function sealSigningKey(box: SealedBox, endpointId: string, signingKey: string): string {
  return box.seal(signingKey, boundTo(endpointId));
}

/** The signing key of a stored value, sealed or (from before sealing) plain. */
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
