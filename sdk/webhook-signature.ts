/**
 * Verifying a push, step by step as the spec's "Signature verification" says: parse
 * `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, refuse a timestamp more than the
 * tolerance (300 s, the replay window) away from now, derive the key as the lower-case hex SHA-256
 * of the endpoint secret, compute the lower-case hex HMAC-SHA256 of "<t>.<raw body>" with that key
 * (as text), and accept when any v1 equals it, compared in constant time. Several v1 values arrive
 * while a secret is being rotated: one per live secret, so the old and the new secret both verify.
 *
 * Pushes also carry the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`: base64 HMAC-SHA256 over "<id>.<timestamp>.<raw body>", keyed with the
 * secret's bytes). Given a request's headers rather than one header's value, verification takes the
 * spec's header when it is there and the Standard Webhooks ones otherwise, so a push verifies
 * either way, with the secret as issued, old (`whsec_` + base64url) or new (`whsec_` + base64).
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
/** The Standard Webhooks headers every push also carries. */
export const STANDARD_WEBHOOK_HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;

/** A request's headers: Node's `req.headers`, a fetch `Headers`, or a plain object of lower-case names. */
export type WebhookHeaders = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

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
  constructor(message = `no ${SIGNATURE_HEADER} header`) {
    super(message);
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
 * not. `rawBody` is the request body exactly as received (a Buffer or its UTF-8 text), `secret`
 * the endpoint's secret as the creation or rotation answer returned it. `header` is either the
 * X-Service-Signature value (`req.headers['x-service-signature']` as is) or the request's headers
 * (`req.headers`, a fetch `Headers`): then X-Service-Signature is checked when present, and the
 * Standard Webhooks headers otherwise.
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  header: string | readonly string[] | WebhookHeaders | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
): { timestamp: number } {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('verifyWebhookSignature needs the endpoint secret');
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  if (!(toleranceSeconds >= 0)) throw new RangeError(`toleranceSeconds must be 0 or more, got ${toleranceSeconds}`);
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (isHeaders(header)) {
    const service = headerOf(header, SIGNATURE_HEADER);
    if (service === undefined && headerOf(header, STANDARD_WEBHOOK_HEADERS.signature) !== undefined) {
      return verifyStandard(rawBody, header, secret, nowSeconds, toleranceSeconds);
    }
    if (service === undefined)
      throw new MissingSignatureHeaderError(`neither ${SIGNATURE_HEADER} nor ${STANDARD_WEBHOOK_HEADERS.signature} is among the headers`);
    header = service;
  }
  const { timestamp, signatures } = parseSignatureHeader(header);
  checkTimestamp(timestamp, nowSeconds, toleranceSeconds);
  const expected = Buffer.from(expectedSignature(secret, timestamp, rawBody), 'utf8');
  // Every value is compared in full; parsing guaranteed each has the expected length.
  const matches = signatures.filter((s) => timingSafeEqual(Buffer.from(s, 'utf8'), expected)).length;
  if (matches === 0) throw new SignatureMismatchError(signatures.length);
  return { timestamp };
}

function checkTimestamp(timestamp: number, nowSeconds: number, toleranceSeconds: number): void {
  // Both directions: the spec bounds the absolute difference, so a future t is a replay kept for later.
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) throw new SignatureTimestampError(timestamp, nowSeconds, toleranceSeconds);
}

function isHeaders(value: unknown): value is WebhookHeaders {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function headerOf(headers: WebhookHeaders, name: string): string | readonly string[] | undefined {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  return (headers as Readonly<Record<string, string | readonly string[] | undefined>>)[name];
}

const SECRET_PREFIX = 'whsec_';
const PADDED_BASE64 = /^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The secret to give a Standard Webhooks verifier (the `standardwebhooks` or `svix` packages) for
 * an endpoint secret: a secret of today's form (`whsec_` + base64) as it is; for an older one
 * (`whsec_` + base64url, which those packages cannot decode), `whsec_` + base64 of its SHA-256, the
 * key the service signs its Standard Webhooks headers with for it.
 */
export function standardWebhooksSecret(secret: string): string {
  return `${SECRET_PREFIX}${standardKeyOf(secret).toString('base64')}`;
}

/** The Standard Webhooks HMAC key of an endpoint secret. */
function standardKeyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : '';
  if (PADDED_BASE64.test(encoded)) return Buffer.from(encoded, 'base64');
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Standard Webhooks signatures: `v1,<base64>` entries separated by spaces; other versions are skipped. */
function parseStandardSignatures(value: string | readonly string[] | undefined): string[] {
  if (value === undefined || value === '') throw new MissingSignatureHeaderError(`no ${STANDARD_WEBHOOK_HEADERS.signature} header`);
  if (typeof value !== 'string')
    throw new MalformedSignatureHeaderError(`${STANDARD_WEBHOOK_HEADERS.signature} was sent ${value.length} times; expected once`);
  const signatures: string[] = [];
  for (const entry of value.split(' ').filter(Boolean)) {
    const comma = entry.indexOf(',');
    if (comma <= 0) throw new MalformedSignatureHeaderError(`"${entry}" is not <version>,<signature>`);
    if (entry.slice(0, comma) === 'v1') signatures.push(entry.slice(comma + 1));
  }
  if (signatures.length === 0) throw new MalformedSignatureHeaderError('no v1, signature');
  return signatures;
}

function verifyStandard(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  nowSeconds: number,
  toleranceSeconds: number,
): { timestamp: number } {
  const id = headerOf(headers, STANDARD_WEBHOOK_HEADERS.id);
  const stamp = headerOf(headers, STANDARD_WEBHOOK_HEADERS.timestamp);
  if (typeof id !== 'string' || id === '' || typeof stamp !== 'string')
    throw new MalformedSignatureHeaderError(
      `${STANDARD_WEBHOOK_HEADERS.signature} needs ${STANDARD_WEBHOOK_HEADERS.id} and ${STANDARD_WEBHOOK_HEADERS.timestamp}, once each`,
    );
  if (!/^\d{1,12}$/.test(stamp))
    throw new MalformedSignatureHeaderError(`${STANDARD_WEBHOOK_HEADERS.timestamp} must be unix seconds, got "${stamp}"`);
  const timestamp = Number(stamp);
  const signatures = parseStandardSignatures(headerOf(headers, STANDARD_WEBHOOK_HEADERS.signature));
  checkTimestamp(timestamp, nowSeconds, toleranceSeconds);
  const expected = createHmac('sha256', standardKeyOf(secret)).update(`${id}.${timestamp}.`, 'utf8').update(rawBody).digest();
  const matches = signatures.filter((s) => {
    const given = Buffer.from(s, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }).length;
  if (matches === 0) throw new SignatureMismatchError(signatures.length);
  return { timestamp };
}

/** Verifies a push as verifyWebhookSignature does, then returns its body as the event it is. */
export function constructWebhookEvent(
  rawBody: string | Uint8Array,
  header: string | readonly string[] | WebhookHeaders | null | undefined,
  secret: string,
  options?: VerifyWebhookOptions,
): WebhookEvent {
  verifyWebhookSignature(rawBody, header, secret, options);
  return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')) as WebhookEvent;
}
