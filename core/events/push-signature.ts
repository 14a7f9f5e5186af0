/**
 * The signatures of our pushes. Two schemes, over the same body and timestamp:
 *
 * - The spec's `X-Service-Signature`, exactly its "Signature verification" in reverse: the key is
 *   the lower-case hex SHA-256 of the endpoint secret, used as text; the signature is the
 *   lower-case hex HMAC-SHA256 over "<t>.<raw body>".
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`): the key is raw
 *   bytes (core/events/signing-keys.ts says which), the signature the base64 HMAC-SHA256 over
 *   "<webhook-id>.<timestamp>.<raw body>", written `v1,<base64>`.
 *
 * During a secret rotation each header carries one signature per live key, newest first.
 */
import { createHmac, type KeyObject } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-signature';
/** A push's other headers: the event's id (the body's `id`) and the id of this delivery. */
export const EVENT_ID_HEADER = 'x-service-event-id';
export const DELIVERY_ID_HEADER = 'x-service-delivery-id';

/** The Standard Webhooks headers, lower case as Node spells received headers. */
export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';

/**
 * One live key in both schemes' forms, as key objects: HMAC with a string or bytes builds a key
 * object on every call, which cost a push more than its two signatures did.
 */
export interface PushKey {
  /** The spec's HMAC key: the hex SHA-256 of the secret, used as text. */
  serviceKey: KeyObject;
  /** The Standard Webhooks HMAC key, as bytes. */
  standardKey: KeyObject;
}

export function pushSignature(serviceKeys: ReadonlyArray<string | KeyObject>, timestamp: number, body: string): string {
  const parts = serviceKeys.map((key) => `v1=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`);
  return [`t=${timestamp}`, ...parts].join(',');
}

/** The `webhook-signature` value: one `v1,<base64>` per key, separated by spaces. */
export function standardSignature(
  standardKeys: ReadonlyArray<Uint8Array | KeyObject>,
  messageId: string,
  timestamp: number,
  body: string,
): string {
  return standardKeys
    .map((key) => `v1,${createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`)
    .join(' ');
}

/**
 * Every signature header of one push. The Standard Webhooks message id is the event's id: the
 * spec's deduplication key, the same on every retry and redelivery of the event, as that scheme
 * asks of its id.
 */
export function pushSignatureHeaders(keys: readonly PushKey[], eventId: string, timestamp: number, body: string): Record<string, string> {
  return {
    [SIGNATURE_HEADER]: pushSignature(
      keys.map((k) => k.serviceKey),
      timestamp,
      body,
    ),
    [STANDARD_ID_HEADER]: eventId,
    [STANDARD_TIMESTAMP_HEADER]: String(timestamp),
    [STANDARD_SIGNATURE_HEADER]: standardSignature(
      keys.map((k) => k.standardKey),
      eventId,
      timestamp,
      body,
    ),
  };
}
