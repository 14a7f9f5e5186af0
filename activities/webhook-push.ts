/**
 * One signed webhook POST: the event's body signed with the endpoint's live keys (the spec's header
 * and the Standard Webhooks ones), sent with a per-attempt timeout over the worker's kept-alive
 * connections, its answer turned into an attempt record (status code, duration, failure reason).
 * The receiver's answer is an outcome, never a throw.
 */
import { Agent, request, type Dispatcher } from 'undici';
import type { StoredSigningKeys } from '../core/db/repositories/delivery-queue';
import type { EventRow } from '../core/db/repositories/events';
import type { WebhookEndpointRow } from '../core/db/repositories/webhook-endpoints';
import type { SealedBox } from '../core/crypto/sealed-box';
import { eventBody } from '../core/events/present';
import { openSigningKey, pushKeyOf } from '../core/events/signing-keys';
import { DELIVERY_ID_HEADER, EVENT_ID_HEADER, pushSignatureHeaders, type PushKey } from '../core/events/push-signature';
import { isIP } from 'node:net';
import { contactableLookup, isContactable } from '../core/net/address-policy';
import { replaceUnstorable } from '../core/unstorable-text';
import { KeptMap } from '../core/kept-map';

/**
 * The most of a receiver's answer a push reads. A short answer is read to its end, so the
 * kept-alive connection serves the next push; a longer one is cut here and its connection closed,
 * so a receiver answering megabytes costs the shared worker 4 KiB, never the body's size.
 */
export const MAX_REPLY_BYTES = 4096;

/** Enough of the receiver's answer to say why it failed, never the whole body. */
const MAX_REASON_CHARS = 200;

export interface PushResult {
  startedAt: Date;
  durationMs: number;
  /** The receiver's HTTP status; null when it gave none. */
  statusCode: number | null;
  error: string | null;
  succeeded: boolean;
}

export type WebhookPush = (push: {
  endpoint: WebhookEndpointRow;
  /** The keys as read with the delivery's claim, not the drain's copy of the endpoint. */
  signingKeys: StoredSigningKeys;
  event: EventRow;
  deliveryId: string;
  timeoutMs: number;
}) => Promise<PushResult>;

/**
 * `allowInsecure`: local development and tests only, http and loopback addresses may receive
 * pushes. `sealedBox` opens the endpoints' signing keys.
 */
export function createWebhookPush(opts: { allowInsecure: boolean; sealedBox: SealedBox }): WebhookPush {
  // One agent per worker: keeps connections to receivers alive between attempts and drains.
  const agent = new Agent({ keepAliveTimeout: 30_000, connect: { lookup: contactableLookup(opts.allowInsecure) } });
  const opened = new OpenedKeys(opts.sealedBox);
  return async ({ endpoint, signingKeys, event, deliveryId, timeoutMs }) => {
    const body = JSON.stringify(eventBody(event));
    // Outside the attempt: a key this worker cannot open (a key missing from its configuration) is
    // the service's fault, not the receiver's; it must not count against the endpoint's health.
    const keys = opened.of(endpoint.id, signingKeys);
    const startedAt = new Date();
    let statusCode: number | null = null;
    let error: string | null = null;
    // The attempt's bound, cleared when it ends: AbortSignal.timeout's timer would fire anyway, long
    // after the answer, and build and dispatch an abort for every push made.
    const attempt = new AbortController();
    const bound = setTimeout(() => attempt.abort(new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    try {
      // Connecting to an IP literal asks no lookup: checked here, for endpoints registered under an older policy.
      const host = new URL(endpoint.url).hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && !isContactable(host, opts.allowInsecure))
        throw Object.assign(new Error(`address ${host} is not one the service may contact`), { code: 'EADDRNOTPUBLIC' });
      const response = await request(endpoint.url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'vps-webhooks/1',
          ...pushSignatureHeaders(keys, event.id, Math.floor(Date.now() / 1000), body),
          [EVENT_ID_HEADER]: event.id,
          [DELIVERY_ID_HEADER]: deliveryId,
        },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: attempt.signal,
      });
      statusCode = response.statusCode;
      const reply = await readReplyHead(response.body, MAX_REPLY_BYTES, timeoutMs);
      if (statusCode < 200 || statusCode >= 300) error = failureReason(statusCode, reply);
    } catch (err) {
      error = describeNetworkError(err, timeoutMs);
    } finally {
      clearTimeout(bound);
    }
    const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
    return { startedAt, durationMs: Date.now() - startedAt.getTime(), statusCode, error, succeeded };
  };
}

/**
 * The first `maxBytes` of the answer as text. The rest is never read: the body is destroyed, which
 * closes its connection rather than draining it. The attempt's signal bounds the read too, so a
 * receiver that trickles its body is cut off at the attempt timeout with what it had sent.
 */
async function readReplyHead(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  timeoutMs: number,
): Promise<{ text: string; brokenOff?: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let brokenOff: string | undefined;
  try {
    // Leaving the loop early destroys the body, and with it the connection.
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) break;
    }
  } catch (err) {
    // The status already decides the outcome; an answer broken off (the attempt's time ran out,
    // the receiver reset) is only said in the reason, after what had arrived.
    brokenOff = isTimeout(err)
      ? `the attempt's ${timeoutMs} ms ran out`
      : `connection failed: ${(err as { code?: string }).code ?? (err as Error).message}`;
  } finally {
    if (!body.destroyed) body.destroy();
  }
  const text = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
  return brokenOff ? { text, brokenOff } : { text };
}

/**
 * The attempt's failure reason: the status and the start of the answer, with U+FFFD for the
 * characters Postgres cannot hold (a NUL in the answer, a pair the cut split), since one such
 * reason would fail the batched write of every outcome beside it.
 */
function failureReason(statusCode: number, reply: { text: string; brokenOff?: string }): string {
  const head = reply.text.slice(0, MAX_REASON_CHARS);
  const brokenOff = reply.brokenOff ? ` (answer broken off: ${reply.brokenOff})` : '';
  return replaceUnstorable(`HTTP ${statusCode}${head ? `: ${head}` : ''}${brokenOff}`);
}

/** Endpoints whose opened keys a worker keeps; past it, the oldest is dropped. */
const OPENED_KEYS_KEPT = 10_000;

/**
 * The keys pushes are signed with (the current one, and the previous one during its grace
 * period), opened once per stored value: opening and building the HMAC keys cost every push more
 * than signing did. Keyed by the stored values as a claim read them, so a rotation is a new entry.
 */
class OpenedKeys {
  private readonly kept = new KeptMap<string, { stored: string; keys: PushKey[] }>(OPENED_KEYS_KEPT);

  constructor(private readonly box: SealedBox) {}

  of(endpointId: string, stored: StoredSigningKeys): PushKey[] {
    const value = `${stored.current}\n${stored.currentStandard}\n${stored.previous}\n${stored.previousStandard}`;
    const hit = this.kept.get(endpointId);
    if (hit?.stored === value) return hit.keys;
    const keys = liveKeys(this.box, endpointId, stored);
    this.kept.set(endpointId, { stored: value, keys });
    return keys;
  }
}

function liveKeys(box: SealedBox, endpointId: string, keys: StoredSigningKeys): PushKey[] {
  const open = (stored: string | null) => (stored === null ? null : openSigningKey(box, endpointId, stored));
  const stored: Array<[string, string | null]> = [[keys.current, keys.currentStandard]];
  if (keys.previous) stored.push([keys.previous, keys.previousStandard]);
  return stored.map(([signing, standard]) => pushKeyOf(open(signing)!, open(standard)));
}

function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  const name = (err as { name?: string }).name;
  return name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

function describeNetworkError(err: unknown, timeoutMs: number): string {
  const code = (err as { code?: string }).code;
  if (isTimeout(err)) return `no response within ${timeoutMs} ms`;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'EADDRNOTPUBLIC' || code === 'EADDRNOTPUBLIC') return `refused: ${cause?.message ?? (err as Error).message}`;
  return `connection failed: ${cause?.code ?? code ?? (err as Error).message}`;
}
