/**
 * What a call can throw: the service answered with a non-zero code (VpsApiError), or it could not
 * be reached or its answer could not be read (VpsNetworkError). Nothing else escapes the client.
 */

/** The envelope every /v1 route answers with. */
export interface Envelope<T = unknown> {
  code: number;
  message: string;
  data: T;
}

export class VpsApiError extends Error {
  override readonly name = 'VpsApiError';
  constructor(
    /** The envelope's code (1001 … 5000): the thing to branch on, never the HTTP status. */
    readonly code: number,
    message: string,
    readonly httpStatus: number,
    /** The envelope's data: for 3001 the official code, request id and whether a retry can help. */
    readonly data: Record<string, unknown>,
    /** Seconds from the Retry-After header (2002), when sent. */
    readonly retryAfterSeconds: number | undefined,
    /** The service's request id, to quote to support. */
    readonly requestId: string | undefined,
  ) {
    super(message);
  }
}

export class VpsNetworkError extends Error {
  override readonly name = 'VpsNetworkError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function isEnvelope(value: unknown): value is Envelope {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'number' && typeof v.message === 'string';
}

/** Retry-After in seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  // Every HTTP date names its month; without this, Date.parse reads "-5" or "1.5" as a year.
  if (!/[A-Za-z]/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
