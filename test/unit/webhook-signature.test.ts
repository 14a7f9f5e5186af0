/**
 * The SDK's push verifier on fixed vectors. The signatures below were computed outside this code
 * base with openssl (key = `printf %s "$secret" | openssl dgst -sha256 -hex`, then
 * `printf %s "$t.$body" | openssl dgst -sha256 -hmac "$key" -hex`), so they pin the spec's steps,
 * not this implementation's reading of them.
 */
import {
  constructWebhookEvent,
  MalformedSignatureHeaderError,
  MissingSignatureHeaderError,
  parseSignatureHeader,
  SignatureMismatchError,
  SignatureTimestampError,
  standardWebhooksSecret,
  verifyWebhookSignature,
  WebhookSignatureError,
  type WebhookSignatureFailure,
} from '../../sdk';

const T = 1_800_000_000;
const BODY = '{"id":"evt_1","type":"vplat.comment.created"}';
const SECRET = 'whsec_example';
const SIGNED = '0b14dbbb4ee3019153019a851d5d586b5a4abe201cbbbd70c6e6ad1d71667416';
/** The same body and time signed with the secret "whsec_old", as during a rotation. */
const SIGNED_OLD = 'd6f64c57b3692abe48b20a44daf1f0439f5e870fc7d8c8bc365be1d8e3f2ac73';
const at = (seconds: number) => ({ now: new Date(seconds * 1000) });

function failure(fn: () => unknown): WebhookSignatureFailure {
  try {
    fn();
  } catch (err) {
    if (err instanceof WebhookSignatureError) return err.reason;
    throw err;
  }
  throw new Error('verification passed');
}

describe('verifyWebhookSignature', () => {
  it('accepts the spec-signed body as a string or as the raw bytes, and returns its timestamp', () => {
    expect(verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, SECRET, at(T))).toEqual({ timestamp: T });
    expect(verifyWebhookSignature(Buffer.from(BODY), `t=${T},v1=${SIGNED}`, SECRET, at(T + 10))).toEqual({ timestamp: T });
  });

  it('accepts any of several v1 values, so both secrets verify during a rotation', () => {
    const header = `t=${T},v1=${SIGNED},v1=${SIGNED_OLD}`;
    expect(verifyWebhookSignature(BODY, header, SECRET, at(T)).timestamp).toBe(T);
    expect(verifyWebhookSignature(BODY, header, 'whsec_old', at(T)).timestamp).toBe(T);
    expect(failure(() => verifyWebhookSignature(BODY, header, 'whsec_other', at(T)))).toBe('no_matching_signature');
  });

  it('refuses a header that is missing or sent twice', () => {
    expect(() => verifyWebhookSignature(BODY, undefined, SECRET, at(T))).toThrow(MissingSignatureHeaderError);
    expect(() => verifyWebhookSignature(BODY, '', SECRET, at(T))).toThrow(MissingSignatureHeaderError);
    expect(() => verifyWebhookSignature(BODY, [`t=${T},v1=${SIGNED}`, `t=${T},v1=${SIGNED}`], SECRET, at(T))).toThrow(
      MalformedSignatureHeaderError,
    );
  });

  it.each([
    ['no timestamp', `v1=${SIGNED}`],
    ['no signature', `t=${T}`],
    ['a timestamp that is not unix seconds', `t=2027-01-15T08:00:00Z,v1=${SIGNED}`],
    ['two timestamps', `t=${T},t=${T},v1=${SIGNED}`],
    ['upper-case hex', `t=${T},v1=${SIGNED.toUpperCase()}`],
    ['a truncated signature', `t=${T},v1=${SIGNED.slice(0, 63)}`],
    ['a part without =', `t=${T},${SIGNED}`],
    ['another format altogether', `sha256=${SIGNED}`],
  ])('calls a header with %s malformed', (_, header) => {
    expect(failure(() => verifyWebhookSignature(BODY, header, SECRET, at(T)))).toBe('malformed_header');
  });

  it('skips schemes it does not know, as a later v2 would be', () => {
    expect(parseSignatureHeader(`t=${T},v0=abc,v1=${SIGNED}`)).toEqual({ timestamp: T, signatures: [SIGNED] });
  });

  it('refuses a timestamp more than 300 s away in either direction, and takes another tolerance', () => {
    expect(verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, SECRET, at(T + 300)).timestamp).toBe(T);
    expect(verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, SECRET, at(T - 300)).timestamp).toBe(T);
    const old = () => verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, SECRET, at(T + 301));
    expect(old).toThrow(SignatureTimestampError);
    expect(old).toThrow('301 s from now');
    expect(failure(() => verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, SECRET, at(T - 301)))).toBe('timestamp_outside_tolerance');
    expect(verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, SECRET, { ...at(T + 3_600), toleranceSeconds: 3_600 }).timestamp).toBe(T);
    expect(failure(() => verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, SECRET, { ...at(T + 61), toleranceSeconds: 60 }))).toBe(
      'timestamp_outside_tolerance',
    );
  });

  it('refuses a changed body, another secret, or another timestamp', () => {
    expect(() => verifyWebhookSignature(`${BODY} `, `t=${T},v1=${SIGNED}`, SECRET, at(T))).toThrow(SignatureMismatchError);
    expect(failure(() => verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, 'whsec_other', at(T)))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhookSignature(BODY, `t=${T + 1},v1=${SIGNED}`, SECRET, at(T)))).toBe('no_matching_signature');
  });

  it('treats a missing secret or a negative tolerance as a programming error, not a bad push', () => {
    expect(() => verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, '', at(T))).toThrow(TypeError);
    expect(() => verifyWebhookSignature(BODY, `t=${T},v1=${SIGNED}`, SECRET, { ...at(T), toleranceSeconds: -1 })).toThrow(RangeError);
  });
});

describe('constructWebhookEvent', () => {
  it('returns the verified body as an event, and parses nothing it cannot verify', () => {
    expect(constructWebhookEvent(BODY, `t=${T},v1=${SIGNED}`, SECRET, at(T))).toEqual({ id: 'evt_1', type: 'vplat.comment.created' });
    expect(() => constructWebhookEvent('not json', `t=${T},v1=${SIGNED}`, SECRET, at(T))).toThrow(SignatureMismatchError);
  });
});

/**
 * The Standard Webhooks headers, on vectors computed with openssl as well: the key is the secret's
 * base64 part decoded (`base64 -d | xxd -p`), or for an older base64url secret its SHA-256, and the
 * signature `printf %s "$id.$t.$body" | openssl dgst -sha256 -mac HMAC -macopt hexkey:$key -binary | base64`.
 */
describe('verifyWebhookSignature given the request headers', () => {
  const NEW_SECRET = 'whsec_v9iV6Xgjpa51NCZo4qdKVsLneAXs3NAu8pHAN5Eiruk=';
  const NEW_SIGNED = 'lhIKr13vIACv7L8ciMtrrd3jgQbAMdlXW2p2GmcUdzs=';
  const OLD_SECRET = 'whsec_q-3vZ_8kYl0mF2xNwR7aJbC4dE5fG6hI9jK1lM2nO3p';
  const OLD_SIGNED = 'Iq530TzB//6xOfYc5TORjmlBcVKWUPJMINEu8AomuH8=';
  const standard = (signature: string, extra: Record<string, string> = {}) => ({
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(T),
    'webhook-signature': signature,
    ...extra,
  });

  it('accepts the standard headers with a secret of today’s form, and with an old base64url one as it is', () => {
    expect(verifyWebhookSignature(BODY, standard(`v1,${NEW_SIGNED}`), NEW_SECRET, at(T))).toEqual({ timestamp: T });
    expect(verifyWebhookSignature(BODY, standard(`v1,${OLD_SIGNED}`), OLD_SECRET, at(T))).toEqual({ timestamp: T });
    // A rotation's two signatures, and versions it does not know, skipped.
    expect(() => verifyWebhookSignature(BODY, standard(`v1,${NEW_SIGNED} v1a,abc v1,${OLD_SIGNED}`), OLD_SECRET, at(T))).not.toThrow();
    // A fetch Headers object works the same.
    expect(() => verifyWebhookSignature(BODY, new Headers(standard(`v1,${NEW_SIGNED}`)), NEW_SECRET, at(T))).not.toThrow();
  });

  it('gives the key of an old secret in the form the Standard Webhooks packages decode', () => {
    expect(standardWebhooksSecret(OLD_SECRET)).toBe('whsec_3TqWuCTXW+gpftvzWxGuqdpHZBS/ZmJ5Gz/R822tpCE=');
    expect(standardWebhooksSecret(NEW_SECRET)).toBe(NEW_SECRET);
  });

  it('prefers X-Service-Signature when both are there, and says why a push fails', () => {
    // The spec's header decides: a broken standard signature beside it does not matter.
    expect(verifyWebhookSignature(BODY, { 'x-service-signature': `t=${T},v1=${SIGNED}`, ...standard('v1,AAAA') }, SECRET, at(T))).toEqual({
      timestamp: T,
    });
    expect(failure(() => verifyWebhookSignature(BODY, standard(`v1,${NEW_SIGNED}`), OLD_SECRET, at(T)))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhookSignature(`${BODY} `, standard(`v1,${NEW_SIGNED}`), NEW_SECRET, at(T)))).toBe(
      'no_matching_signature',
    );
    expect(failure(() => verifyWebhookSignature(BODY, standard(`v1,${NEW_SIGNED}`), NEW_SECRET, at(T + 301)))).toBe(
      'timestamp_outside_tolerance',
    );
    expect(failure(() => verifyWebhookSignature(BODY, standard(`v2,${NEW_SIGNED}`), NEW_SECRET, at(T)))).toBe('malformed_header');
    expect(
      failure(() => verifyWebhookSignature(BODY, standard(`v1,${NEW_SIGNED}`, { 'webhook-timestamp': 'soon' }), NEW_SECRET, at(T))),
    ).toBe('malformed_header');
    expect(failure(() => verifyWebhookSignature(BODY, { 'content-type': 'application/json' }, NEW_SECRET, at(T)))).toBe('missing_header');
  });
});
