/**
 * One signed webhook POST: the event's body signed with the endpoint's live keys, sent with a
 * per-attempt timeout over the worker's kept-alive connections, its answer turned into an attempt
 * record (status code, duration, failure reason). The receiver's answer is an outcome, never a throw.
 */
import { Agent, request } from 'undici';
import type { EventRow } from '../core/db/repositories/events';
import type { WebhookEndpointRow } from '../core/db/repositories/webhook-endpoints';
import { eventBody } from '../core/events/present';
import { DELIVERY_ID_HEADER, EVENT_ID_HEADER, pushSignature, SIGNATURE_HEADER } from '../core/events/push-signature';
import { isIP } from 'node:net';
import { contactableLookup, isContactable } from '../core/net/address-policy';

/** Enough of the receiver's answer to say why it failed, never the whole body. */
const MAX_REASON_BODY = 200;

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
  event: EventRow;
  deliveryId: string;
  timeoutMs: number;
}) => Promise<PushResult>;

/** `allowInsecure`: local development and tests only, http and loopback addresses may receive pushes. */
export function createWebhookPush(opts: { allowInsecure: boolean }): WebhookPush {
  // One agent per worker: keeps connections to receivers alive between attempts and drains.
  const agent = new Agent({ keepAliveTimeout: 30_000, connect: { lookup: contactableLookup(opts.allowInsecure) } });
  return async ({ endpoint, event, deliveryId, timeoutMs }) => {
    const body = JSON.stringify(eventBody(event));
    const startedAt = new Date();
    let statusCode: number | null = null;
    let error: string | null = null;
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
          [SIGNATURE_HEADER]: pushSignature(liveKeys(endpoint), Math.floor(Date.now() / 1000), body),
          [EVENT_ID_HEADER]: event.id,
          [DELIVERY_ID_HEADER]: deliveryId,
        },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      statusCode = response.statusCode;
      const text = await response.body.text().catch(() => '');
      if (statusCode < 200 || statusCode >= 300) error = `HTTP ${statusCode}${text ? `: ${text.slice(0, MAX_REASON_BODY)}` : ''}`;
    } catch (err) {
      error = describeNetworkError(err, timeoutMs);
    }
    const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
    return { startedAt, durationMs: Date.now() - startedAt.getTime(), statusCode, error, succeeded };
  };
}

/** The keys pushes are signed with: the current one, and the previous one during its grace period. */
function liveKeys(endpoint: WebhookEndpointRow): string[] {
  const previousLive = endpoint.previousSigningKey && endpoint.previousKeyExpiresAt && endpoint.previousKeyExpiresAt > new Date();
  return previousLive ? [endpoint.signingKey, endpoint.previousSigningKey!] : [endpoint.signingKey];
}

function describeNetworkError(err: unknown, timeoutMs: number): string {
  const code = (err as { code?: string }).code;
  const name = (err as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return `no response within ${timeoutMs} ms`;
  }
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'EADDRNOTPUBLIC' || code === 'EADDRNOTPUBLIC') return `refused: ${cause?.message ?? (err as Error).message}`;
  return `connection failed: ${cause?.code ?? code ?? (err as Error).message}`;
}
