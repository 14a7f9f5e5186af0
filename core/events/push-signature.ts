/**
 * The signature of our pushes, exactly the spec's "Signature verification" in reverse: the key is
 * the lower-case hex SHA-256 of the endpoint secret (stored as the endpoint's signing key), used as
 * text; the signature is the lower-case hex HMAC-SHA256 over "<t>.<raw body>". During a secret
 * rotation the header carries one v1 per live key, newest first.
 */
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-signature';
/** A push's other headers: the event's id (the body's `id`) and the id of this delivery. */
export const EVENT_ID_HEADER = 'x-service-event-id';
export const DELIVERY_ID_HEADER = 'x-service-delivery-id';

export function pushSignature(signingKeys: readonly string[], timestamp: number, body: string): string {
  const parts = signingKeys.map((key) => `v1=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`);
  return [`t=${timestamp}`, ...parts].join(',');
}
