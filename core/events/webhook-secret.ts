/**
 * The form of a webhook signing secret: `whsec_` and the standard base64 of 32 random bytes, the
 * form the Standard Webhooks libraries take as it is. The spec's key is derived from the whole
 * string (signing-keys.ts), so any form signs; this one also suits those libraries.
 */
import { randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}
