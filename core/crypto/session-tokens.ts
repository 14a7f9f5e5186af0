/**
 * Console session tokens: 256 random bits in an HttpOnly cookie, forwarded by the gateway to core
 * as `Authorization: Session <token>`. The CSRF token is an HMAC of a fixed label keyed by the
 * session token: the browser's script can read it (the session gave it), a cross-site page cannot
 * compute it, and neither side has to store it.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_TOKEN_PATTERN = /^vpss_[A-Za-z0-9_-]{43}$/;
export const CSRF_HEADER = 'x-csrf-token';

export function generateSessionToken(): { token: string; hash: string } {
  const token = `vpss_${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashSessionToken(token) };
}

/** A fast hash suffices: the token has 256 bits of entropy, nothing to brute-force. */
export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('vps console csrf v1').digest('base64url');
}

/** Constant-time: a mismatch does not tell how much of the token was right. */
export function csrfTokenMatches(sessionToken: string, given: string | null): boolean {
  if (!given) return false;
  const expected = Buffer.from(csrfTokenOf(sessionToken));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Reads a session token from an Authorization header: exactly `Session <token>`, else nothing. */
export function parseSessionHeader(header: string | null | undefined): string | undefined {
  const match = /^Session (\S+)$/i.exec(header ?? '');
  return match?.[1] && SESSION_TOKEN_PATTERN.test(match[1]) ? match[1] : undefined;
}
