/**
 * How the service treats each failure of the official APIs: one table per platform, keyed by the
 * official code. Every failure becomes 3001 (the platform said no, its message kept) or 3002 (it
 * did not answer in time), with a class that tells the workflows whether retrying can help.
 */
import { ApiError } from '../errors';

export type UpstreamPlatform = 'vplat' | 'shop';

export type FailureClass =
  /** 5xx, system errors, connection failures: the same call may succeed later. */
  | 'transient'
  /** The platform throttled us: retry after a pause. */
  | 'rate_limited'
  /** The access token expired: refresh it, then retry. */
  | 'token_expired'
  /** Credentials are wrong or revoked: a person must re-authorize. */
  | 'auth'
  /** The account may not do this (scope, ban, allow-list). */
  | 'permission'
  /** The request itself is wrong; resending it unchanged fails the same way. */
  | 'bad_request'
  | 'not_found'
  /** The material breaks the platform's content rules: change it before trying again. */
  | 'content_violation'
  /** A daily or posting quota is used up. */
  | 'quota'
  /** No answer in time (3002). */
  | 'timeout';

const RETRYABLE: ReadonlySet<FailureClass> = new Set(['transient', 'rate_limited', 'token_expired', 'timeout']);

export function isRetryableClass(failureClass: FailureClass): boolean {
  return RETRYABLE.has(failureClass);
}

type CodeTable = Readonly<Record<number, FailureClass>>;

/** Business API v1.3 codes (official return-code page). */
const BUSINESS_CODES: CodeTable = {
  40000: 'bad_request',
  40001: 'permission',
  40002: 'bad_request',
  40007: 'not_found',
  40011: 'bad_request',
  40016: 'rate_limited',
  40064: 'permission',
  40100: 'rate_limited',
  40101: 'auth',
  40102: 'token_expired',
  40103: 'auth',
  40104: 'auth',
  40105: 'auth',
  40107: 'auth',
  40108: 'bad_request',
  40110: 'auth',
  40113: 'auth',
  40118: 'permission',
  40125: 'permission',
  40900: 'bad_request',
  40902: 'bad_request',
  40905: 'bad_request',
  40906: 'bad_request',
  40907: 'bad_request',
  40908: 'bad_request',
  40914: 'bad_request',
  40915: 'bad_request',
  50000: 'transient',
  50002: 'transient',
  51065: 'transient',
  60001: 'transient',
};

/** Shop platform codes (common errors and the creator content endpoints). */
const SHOP_CODES: CodeTable = {
  36009004: 'bad_request',
  106001: 'bad_request',
  36009002: 'rate_limited',
  36009003: 'transient',
  36009007: 'transient',
  38007001: 'transient',
  105001: 'auth',
  105002: 'token_expired',
  105005: 'permission',
  101000: 'auth',
  36004004: 'auth',
  // Refresh token unknown or revoked, and expired: a person must authorize again.
  36004005: 'auth',
  36004001: 'auth',
  36009009: 'not_found',
  16011007: 'bad_request',
  16011009: 'content_violation',
  16011069: 'bad_request',
  170001002: 'permission',
  170001003: 'permission',
  170001004: 'permission',
  170001005: 'permission',
  170001008: 'permission',
  170001009: 'bad_request',
  170001011: 'not_found',
  170001012: 'bad_request',
  170001014: 'content_violation',
  170001015: 'content_violation',
  170001016: 'not_found',
  170001019: 'quota',
  170001020: 'rate_limited',
  170001024: 'bad_request',
  170001025: 'bad_request',
  170001030: 'permission',
  170001031: 'permission',
  170001040: 'bad_request',
  170001050: 'transient',
  170001060: 'quota',
  170001061: 'quota',
  170001062: 'quota',
  18001405: 'permission',
};

const TABLES: Record<UpstreamPlatform, CodeTable> = { vplat: BUSINESS_CODES, shop: SHOP_CODES };

/** The class of an official failure: by its code, else by the HTTP status it came with. */
export function classifyOfficial(platform: UpstreamPlatform, officialCode: number | undefined, httpStatus: number): FailureClass {
  const known = officialCode === undefined ? undefined : TABLES[platform][officialCode];
  if (known) return known;
  if (httpStatus === 429) return 'rate_limited';
  if (httpStatus >= 500) return 'transient';
  if (httpStatus === 401) return 'auth';
  if (httpStatus === 403) return 'permission';
  if (httpStatus === 404) return 'not_found';
  return 'bad_request';
}

export interface UpstreamFailure {
  platform: UpstreamPlatform;
  /** Official endpoint path, for logs. */
  endpoint: string;
  failureClass: FailureClass;
  retryable: boolean;
  officialCode?: number;
  officialMessage?: string;
  requestId?: string;
  httpStatus?: number;
  retryAfterSeconds?: number;
}

/**
 * 3001 or 3002 with what the platform said. The envelope's `data` carries the official code and
 * request id so that a customer can quote them to the platform's support.
 */
export class UpstreamError extends ApiError {
  constructor(readonly failure: UpstreamFailure) {
    const timeout = failure.failureClass === 'timeout';
    super(
      timeout ? 3002 : 3001,
      failure.officialMessage ?? (timeout ? 'the official API did not answer in time' : 'the official API could not be reached'),
      {
        ...(failure.retryAfterSeconds !== undefined ? { retryAfterSeconds: failure.retryAfterSeconds } : {}),
        data: {
          platform: failure.platform,
          retryable: failure.retryable,
          ...(failure.officialCode !== undefined ? { officialCode: failure.officialCode } : {}),
          ...(failure.requestId ? { officialRequestId: failure.requestId } : {}),
        },
      },
    );
    this.name = 'UpstreamError';
  }

  get retryable(): boolean {
    return this.failure.retryable;
  }

  get failureClass(): FailureClass {
    return this.failure.failureClass;
  }
}
