/**
 * Verifying a push, step by step as the spec's "Signature verification" says: parse
 * `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, refuse a timestamp more than the
 * tolerance (300 s, the replay window) away from now, derive the key as the lower-case hex SHA-256
 * of the endpoint secret, compute the lower-case hex HMAC-SHA256 of "<t>.<raw body>" with that key
 * (as text), and accept when any v1 equals it, compared in constant time. Several v1 values arrive
 * while a secret is being rotated: one per live secret, so the old and the new secret both verify.
 *
 * Written apart from the service's signer (core/events/push-signature.ts) on purpose: a verifier
 * that shared the signer's code would agree with any mistake in it. Stripe's own verifier accepts
 * the same header (docs/decisions/webhook-delivery.md, "Verifying pushes"), which checks both from outside.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { EventJson } from './api-types';

/** A push's body: the same shape as GET /v1/events items and streamed events. */
export type WebhookEvent = EventJson;

/** The push's signature header, lower case as Node's `req.headers` spells it. */
export const SIGNATURE_HEADER = 'x-service-signature';

/** The spec's replay window (Limits: "Signature replay window, 300 seconds"). */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

export type WebhookSignatureFailure = 'missing_header' | 'malformed_header' | 'timestamp_outside_tolerance' | 'no_matching_signature';

/**
 * Every way a push can fail verification. Answer any of them with a 4xx and do not process the
 * body; branch on `reason` (or on the subclass) to log why.
 */
export abstract class WebhookSignatureError extends Error {
  abstract readonly reason: WebhookSignatureFailure;
}

/** The request carries no X-Service-Signature header: not a push of the service. */
export class MissingSignatureHeaderError extends WebhookSignatureError {
  override readonly name = 'MissingSignatureHeaderError';
  readonly reason = 'missing_header';
  constructor() {
    super(`no ${SIGNATURE_HEADER} header`);
  }
}

/** The header is there but is not `t=<unix seconds>,v1=<64 lower-case hex>[,v1=…]`. */
export class MalformedSignatureHeaderError extends WebhookSignatureError {
  override readonly name = 'MalformedSignatureHeaderError';
  readonly reason = 'malformed_header';
}

/** The signed timestamp is further from now than the tolerance: a replay, or a badly wrong clock. */
export class SignatureTimestampError extends WebhookSignatureError {
  override readonly name = 'SignatureTimestampError';
  readonly reason = 'timestamp_outside_tolerance';
  constructor(
    readonly timestamp: number,
    readonly nowSeconds: number,
    readonly toleranceSeconds: number,
  ) {
    super(
      `signature timestamp ${timestamp} is ${Math.abs(nowSeconds - timestamp)} s from now (${nowSeconds}); the tolerance is ${toleranceSeconds} s`,
    );
  }
}

/** No v1 value is the HMAC of this body with this secret: another secret, or a changed body. */
export class SignatureMismatchError extends WebhookSignatureError {
  override readonly name = 'SignatureMismatchError';
  readonly reason = 'no_matching_signature';
  constructor(readonly signatureCount: number) {
    super(
      `none of the ${signatureCount} v1 signature(s) matches the body and secret: check the secret, and verify the raw body as received, before any JSON parsing`,
    );
  }
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance, in seconds, between the signed timestamp and now; 300 by default. */
  toleranceSeconds?: number;
  /** The time to check the timestamp against; the current time by default. */
  now?: Date;
}

export interface ParsedSignatureHeader {
  timestamp: number;
  /** Every v1 value, in header order (the newest secret's first). */
  signatures: string[];
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** Step 1: the header's t and v1 values. Unknown keys are skipped, as a later scheme (v2=…) would be. */
export function parseSignatureHeader(header: string | readonly string[] | null | undefined): ParsedSignatureHeader {
  if (header === undefined || header === null || header === '') throw new MissingSignatureHeaderError();
  if (typeof header !== 'string')
    throw new MalformedSignatureHeaderError(`${SIGNATURE_HEADER} was sent ${header.length} times; expected once`);
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) throw new MalformedSignatureHeaderError(`"${part.trim()}" is not key=value`);
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined) throw new MalformedSignatureHeaderError('t is given more than once');
      if (!/^\d{1,12}$/.test(value)) throw new MalformedSignatureHeaderError(`t must be unix seconds, got "${value}"`);
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) throw new MalformedSignatureHeaderError('a v1 value is not 64 lower-case hex digits');
      signatures.push(value);
    }
  }
  if (timestamp === undefined) throw new MalformedSignatureHeaderError('no t= timestamp');
  if (signatures.length === 0) throw new MalformedSignatureHeaderError('no v1= signature');
  return { timestamp, signatures };
}

/** Steps 3 and 4: the v1 value the service computes for this body with this secret. */
export function expectedSignature(secret: string, timestamp: number, rawBody: string | Uint8Array): string {
  const key = createHash('sha256').update(secret, 'utf8').digest('hex');
  // The raw bytes as received: a re-serialized JSON body would not verify.
  return createHmac('sha256', key).update(`${timestamp}.`, 'utf8').update(rawBody).digest('hex');
}

/**
 * Verifies a push and returns its signed timestamp; throws a WebhookSignatureError saying why
 * not. `rawBody` is the request body exactly as received (a Buffer or its UTF-8 text), `header`
 * the X-Service-Signature value (`req.headers['x-service-signature']` as is), `secret` the
 * endpoint's secret as the creation or rotation answer returned it.
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  header: string | readonly string[] | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
): { timestamp: number } {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('verifyWebhookSignature needs the endpoint secret');
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  if (!(toleranceSeconds >= 0)) throw new RangeError(`toleranceSeconds must be 0 or more, got ${toleranceSeconds}`);
  const { timestamp, signatures } = parseSignatureHeader(header);
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  // Both directions: the spec bounds the absolute difference, so a future t is a replay kept for later.
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) throw new SignatureTimestampError(timestamp, nowSeconds, toleranceSeconds);
  const expected = Buffer.from(expectedSignature(secret, timestamp, rawBody), 'utf8');
  // Every value is compared in full; parsing guaranteed each has the expected length.
  const matches = signatures.filter((s) => timingSafeEqual(Buffer.from(s, 'utf8'), expected)).length;
  if (matches === 0) throw new SignatureMismatchError(signatures.length);
  return { timestamp };
}

/** Verifies a push as verifyWebhookSignature does, then returns its body as the event it is. */
export function constructWebhookEvent(
  rawBody: string | Uint8Array,
  header: string | readonly string[] | null | undefined,
  secret: string,
  options?: VerifyWebhookOptions,
): WebhookEvent {
  verifyWebhookSignature(rawBody, header, secret, options);
  return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')) as WebhookEvent;
}
