import { createHash, randomBytes } from 'node:crypto';

/** Keys look like `vps_<43 base64url characters>`: 256 random bits, safe in a header as is. */
export const API_KEY_PATTERN = /^vps_[A-Za-z0-9_-]{43}$/;
const VISIBLE_PREFIX_LENGTH = 12;

export function generateApiKey(): { plaintext: string; hash: string; prefix: string } {
  const plaintext = `vps_${randomBytes(32).toString('base64url')}`;
  return { plaintext, hash: hashApiKey(plaintext), prefix: plaintext.slice(0, VISIBLE_PREFIX_LENGTH) };
}

/** A fast hash is right here: the key has 256 bits of entropy, so there is nothing to brute-force. */
export function hashApiKey(plaintext: string): string {
  return createHash('sha256').update(plaintext).digest('hex');
}

/**
 * Reads the key from an Authorization header. Exactly `Bearer <key>` (scheme case-insensitive, per
 * RFC 9110); anything else, including a doubled `Bearer Bearer <key>`, is no key at all.
 */
export function parseBearer(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer ([^\s]+)$/i.exec(header);
  if (!match?.[1] || !API_KEY_PATTERN.test(match[1])) return undefined;
  return match[1];
}
