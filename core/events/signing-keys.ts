/**
 * Webhook endpoints' secrets and signing keys at rest. Two values are stored for a secret:
 *
 * - `signing_key`: the lower-case hex SHA-256 of the secret, the spec's HMAC key, as every release
 *   has stored it (a process of an earlier release reading the row still signs correctly);
 * - `standard_key`: the secret itself, `whsec_` + standard base64 of 32 random bytes, for secrets
 *   issued since pushes carry Standard Webhooks headers: that scheme's key is the secret's bytes.
 *   Null for older `whsec_` + base64url secrets, whose text the service never kept; their Standard
 *   Webhooks key is the digest's 32 bytes, so a receiver holding such a secret verifies with
 *   `whsec_` + base64 of SHA-256(secret) (the SDK's standardWebhooksSecret).
 *
 * A standard key is used only while its digest is the signing key beside it: a rotation by a
 * process that knows nothing of standard keys leaves the old one there, and the push then signs
 * with the digest's bytes rather than with a secret the customer no longer holds.
 *
 * Either value lets whoever reads it sign pushes, so both are sealed like the upstream tokens,
 * bound to their endpoint. Rows written before sealing hold them plain; they are read as they are
 * until core's re-seal sweep seals them (core/crypto/reseal-sweep.ts).
 */
import { createHash, createSecretKey, randomBytes } from 'node:crypto';
import { looksSealed, type SealedBox } from '../crypto/sealed-box';
import type { PushKey } from './push-signature';

const SECRET_PREFIX = 'whsec_';
/** `whsec_` and the standard base64 (padded) of 24 to 64 bytes: the form whose bytes are the Standard Webhooks key. */
const STANDARD_FORM = /^whsec_(?:[A-Za-z0-9+/]{4}){8,22}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A new endpoint secret in the Standard Webhooks form: `whsec_` + standard base64 (with padding). */
export function newEndpointSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Exactly the spec's key derivation: the lower-case hex SHA-256 of the secret. */
export function signingKeyOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** What is stored (before sealing) for a secret: its spec key, and the secret when it is of the standard form. */
export function storedKeysOf(secret: string): { signingKey: string; standardKey: string | null } {
  return { signingKey: signingKeyOf(secret), standardKey: STANDARD_FORM.test(secret) ? secret : null };
}

/** Both schemes' keys of an opened signing key and the standard key beside it, if any. */
export function pushKeyOf(signingKey: string, standardKey: string | null): PushKey {
  const matches = standardKey !== null && signingKeyOf(standardKey) === signingKey;
  return {
    serviceKey: createSecretKey(signingKey, 'utf8'),
    standardKey: createSecretKey(matches ? Buffer.from(standardKey.slice(SECRET_PREFIX.length), 'base64') : Buffer.from(signingKey, 'hex')),
  };
}

/** The keys a secret signs with, as a push made from its stored values would (vps listen's forwards). */
export function pushKeyOfSecret(secret: string): PushKey {
  const stored = storedKeysOf(secret);
  return pushKeyOf(stored.signingKey, stored.standardKey);
}

/**
 * Bound to the endpoint, not to the column: a rotation moves the current key to the previous one
 * in one statement, and the moved value must still open.
 */
function boundTo(endpointId: string): string {
  return `webhook-endpoint ${endpointId}`;
}

/** Seals a stored value (a signing or a standard key); it is opened with openSigningKey. */
export function sealSigningKey(box: SealedBox, endpointId: string, signingKey: string): string {
  return box.seal(signingKey, boundTo(endpointId));
}

/** The stored value (a signing or a standard key), sealed or (from before sealing) plain. */
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
