/**
 * The shop platform's request signature, computed the way its documentation describes: the query
 * parameters except sign and access_token, sorted by key and concatenated as key+value, behind the
 * path and followed by the raw body (not for multipart), wrapped in the app secret and HMAC-SHA256'd
 * with the app secret. The emulator keeps its own copy so that a mistake in the client's cannot
 * hide behind the same mistake here.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function shopSignature(secret: string, path: string, query: Record<string, string>, body: string | undefined): string {
  const params = Object.keys(query)
    .filter((k) => k !== 'sign' && k !== 'access_token')
    .sort()
    .map((k) => `${k}${query[k]}`)
    .join('');
  const base = `${secret}${path}${params}${body ?? ''}${secret}`;
  return createHmac('sha256', secret).update(base).digest('hex');
}

export function verifyShopSignature(
  secret: string,
  path: string,
  query: Record<string, string>,
  body: string | undefined,
  sign: string,
): boolean {
  const expected = Buffer.from(shopSignature(secret, path, query, body));
  const given = Buffer.from(sign);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
