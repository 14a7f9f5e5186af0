/**
 * Failures as the official APIs report them. Route handlers throw OfficialError; the app's error
 * handler renders it in the envelope of the platform that owns the path.
 */
import { randomBytes } from 'node:crypto';

export class OfficialError extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** The Business API answers application errors with HTTP 200; the shop API uses 4xx for some. */
    readonly httpStatus = 200,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'OfficialError';
  }
}

/** Request ids look like the platform's: a timestamp followed by random hex. */
export function requestId(): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:TZ.]/g, '')
    .slice(0, 14);
  return `${stamp}${randomBytes(10).toString('hex').toUpperCase()}`;
}

export type Platform = 'business' | 'shop';

/** Which platform's envelope a path belongs to. */
export function platformOf(url: string): Platform {
  return ['/affiliate_creator/', '/api/v2/token/', '/open/', '/alliance/'].some((prefix) => url.startsWith(prefix)) ? 'shop' : 'business';
}

const SUCCESS_MESSAGE: Record<Platform, string> = { business: 'OK', shop: 'Success' };

export function success(platform: Platform, data: unknown): { code: 0; message: string; request_id: string; data: unknown } {
  return { code: 0, message: SUCCESS_MESSAGE[platform], request_id: requestId(), data: data ?? {} };
}

export function failure(code: number, message: string): { code: number; message: string; request_id: string; data: Record<string, never> } {
  return { code, message, request_id: requestId(), data: {} };
}

/** Business API parameter errors name the field the way the official API does. */
export const BUSINESS = {
  missing: (field: string) => new OfficialError(40002, `${field}: Missing data for required field.`),
  invalid: (field: string, why = 'Not a valid value.') => new OfficialError(40002, `${field}: ${why}`),
  notFound: (what: string) => new OfficialError(40007, `${what} does not exist.`),
  noPermission: (why = 'No permission to operate on this resource.') => new OfficialError(40001, why),
  tokenMissing: () => new OfficialError(40104, 'Access token is null, you should set it in http header with key Access-Token.'),
  tokenInvalid: () => new OfficialError(40105, 'Access token is incorrect or has been revoked.'),
  tokenExpired: () => new OfficialError(40102, 'Access token has expired.'),
  rateLimited: () => new OfficialError(40100, 'Requests made too frequently. Please try again later.'),
  system: () => new OfficialError(50000, 'System error. Please try again later.', 500),
};

export const SHOP = {
  invalid: (field: string, why = 'is invalid') =>
    new OfficialError(36009004, `Invalid request parameter: ${field} ${why.replace(/\.$/, '')}.`, 400),
  missing: (field: string) => new OfficialError(36009004, `Invalid request parameter: ${field} is required.`, 400),
  signature: () => new OfficialError(106001, 'Invalid signature. Please check the signing algorithm.', 401),
  timestamp: () => new OfficialError(36009004, 'Invalid timestamp: it must not be earlier than 5 minutes before the current time.', 400),
  appKey: () => new OfficialError(36009004, 'Invalid app_key.', 400),
  tokenInvalid: () => new OfficialError(105001, 'The access token is invalid.', 401),
  tokenExpired: () => new OfficialError(105002, 'The access token has expired.', 401),
  noPermission: () => new OfficialError(105005, 'The access token lacks the scope this call needs.', 403),
  rateLimited: (retryAfterSeconds: number) =>
    new OfficialError(36009002, 'Too many requests. Please retry later.', 429, { 'retry-after': String(retryAfterSeconds) }),
  system: () => new OfficialError(36009003, 'Internal error. Please retry later.', 500),
};
