/**
 * The error-code table of the spec, the one place that maps each code to its HTTP status and to the
 * Connect code used between gateway and core. Core raises ApiError; the gateway renders envelopes.
 */
import { Code, ConnectError } from '@connectrpc/connect';

export const ERROR_CODES = {
  1001: { http: 401, connect: Code.Unauthenticated, message: 'API key missing, invalid or revoked' },
  1002: { http: 403, connect: Code.PermissionDenied, message: 'user disabled' },
  1003: { http: 403, connect: Code.PermissionDenied, message: 'plan expired; write operations are rejected' },
  1004: { http: 403, connect: Code.ResourceExhausted, message: 'seat quota insufficient' },
  1005: { http: 404, connect: Code.NotFound, message: "resource does not exist or is not the caller's" },
  1006: { http: 409, connect: Code.AlreadyExists, message: 'account already bound to another seat' },
  1007: { http: 409, connect: Code.FailedPrecondition, message: 'seat not bound' },
  1008: { http: 409, connect: Code.FailedPrecondition, message: 'a seat can bind only one account of the platform' },
  2001: { http: 422, connect: Code.InvalidArgument, message: 'parameter or file validation failed' },
  2002: { http: 429, connect: Code.ResourceExhausted, message: 'rate limit exceeded' },
  2005: { http: 422, connect: Code.FailedPrecondition, message: 'video expired or deleted; upload again' },
  3001: { http: 502, connect: Code.Unavailable, message: 'the official API returned an error' },
  3002: { http: 504, connect: Code.DeadlineExceeded, message: 'the official API timed out' },
  5000: { http: 500, connect: Code.Internal, message: 'internal error' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Metadata keys that carry our code across Connect (headers on the wire, so any client can read them). */
export const CODE_HEADER = 'vps-code';
export const RETRY_AFTER_HEADER = 'retry-after';
/** The envelope's `data`, percent-encoded JSON: header values must be ASCII, and data may echo a caller's text. */
export const DATA_HEADER = 'vps-data';

export function isErrorCode(n: number): n is ErrorCode {
  return Object.hasOwn(ERROR_CODES, n);
}

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].http;
}

/** A failure with one of the spec's codes. `data` is rendered in the envelope (always an object). */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CODES[code].message,
    readonly options: { retryAfterSeconds?: number; data?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toConnectError(): ConnectError {
    const metadata = new Headers({ [CODE_HEADER]: String(this.code) });
    if (this.options.retryAfterSeconds !== undefined) metadata.set(RETRY_AFTER_HEADER, String(this.options.retryAfterSeconds));
    if (this.options.data) metadata.set(DATA_HEADER, encodeURIComponent(JSON.stringify(this.options.data)));
    return new ConnectError(this.message, ERROR_CODES[this.code].connect, metadata);
  }
}

/** 2001 naming the field, the most common failure; messages read `field: reason`. */
export function invalidField(field: string, reason: string): ApiError {
  return new ApiError(2001, `${field}: ${reason}`, { data: { field } });
}

/** What a gateway or SDK renders from a Connect failure. */
export interface RenderedError {
  code: ErrorCode;
  message: string;
  httpStatus: number;
  retryAfterSeconds?: number;
  data: Record<string, unknown>;
}

/**
 * The answer of a process that is stopping, or whose core cannot be reached for a moment: the
 * spec's table has no code for "unavailable", so it is 5000, with the HTTP status the table gives
 * 5000 (500), and what tells it from a bug: Retry-After, and data.retryable, which the SDK retries.
 */
export const UNAVAILABLE: RenderedError = {
  code: 5000,
  message: 'the service is briefly unavailable (an instance restarting); retry after the Retry-After seconds',
  httpStatus: ERROR_CODES[5000].http,
  retryAfterSeconds: 1,
  data: { retryable: true },
};

/** Set on a ConnectError whose Unavailable is one of our dependencies', so its message reaches the client. */
export const DEPENDENCY_HEADER = 'vps-unavailable';

/**
 * A dependency of ours (the media store) is down or refusing for reasons of its own: not the
 * caller's fault and not a bug, so it is answered like UNAVAILABLE, with a message saying what.
 */
export class DependencyUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DependencyUnavailableError';
  }

  toConnectError(): ConnectError {
    return new ConnectError(this.message, Code.Unavailable, new Headers({ [DEPENDENCY_HEADER]: '1' }));
  }

  render(): RenderedError {
    return { ...UNAVAILABLE, message: `${this.message}; retry after the Retry-After seconds` };
  }
}

/**
 * Reads our code back from a ConnectError. An error without one did not come from our rules: core
 * unreachable or stopping (Unavailable) is UNAVAILABLE; anything else (a bug) is 5000, with the
 * cause left to the caller's log.
 */
export function renderConnectError(err: ConnectError): RenderedError {
  const raw = Number(err.metadata.get(CODE_HEADER));
  if (!isErrorCode(raw)) {
    if (err.code === Code.Unavailable && err.metadata.has(DEPENDENCY_HEADER))
      return new DependencyUnavailableError(err.rawMessage).render();
    if (err.code === Code.Unavailable && err.metadata.get(CODE_HEADER) === null) return UNAVAILABLE;
    return { code: 5000, message: ERROR_CODES[5000].message, httpStatus: 500, data: {} };
  }
  const retry = Number(err.metadata.get(RETRY_AFTER_HEADER));
  let data: Record<string, unknown> = {};
  const rawData = err.metadata.get(DATA_HEADER);
  if (rawData) {
    try {
      data = JSON.parse(decodeURIComponent(rawData)) as Record<string, unknown>;
    } catch {
      data = {};
    }
  }
  return {
    code: raw,
    message: err.rawMessage,
    httpStatus: httpStatusOf(raw),
    ...(Number.isFinite(retry) && retry > 0 ? { retryAfterSeconds: retry } : {}),
    data,
  };
}
