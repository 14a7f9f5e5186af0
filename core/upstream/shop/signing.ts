/**
 * The shop platform's request signature (its partner documentation, "Sign your API request"):
 * the query parameters other than `sign` and `access_token` sorted by key and joined as key+value,
 * behind the request path and followed by the raw body unless the body is multipart, wrapped in
 * the app secret on both sides, then HMAC-SHA256 with the app secret, as lower-case hex.
 */
import { createHmac } from 'node:crypto';

export function signShopRequest(appSecret: string, path: string, query: Record<string, string>, body?: string): string {
  const joined = Object.keys(query)
    .filter((key) => key !== 'sign' && key !== 'access_token')
    .sort()
    .map((key) => key + query[key])
    .join('');
  return createHmac('sha256', appSecret)
    .update(appSecret + path + joined + (body ?? '') + appSecret)
    .digest('hex');
}
