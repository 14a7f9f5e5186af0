/**
 * One attempt of a webhook delivery: the event's body signed with the endpoint's live keys, POSTed
 * with a per-attempt timeout, the attempt recorded (time, status code, duration, failure reason).
 * The receiver's answer is an outcome, not an activity failure: only a broken database or worker
 * makes Temporal retry the activity, and then the attempt number keeps the log free of doubles.
 */
import { Agent, request } from 'undici';
import type { Db } from '../core/db/client';
import { acquireDeliveryLease, findDelivery, findEventById, finishDelivery, recordAttempt, releaseDeliveryLease, type DeliveryRow } from '../core/db/repositories/events';
import { disableEndpoint, findEndpoint, markEndpointFailing, markEndpointHealthy, type WebhookEndpointRow } from '../core/db/repositories/webhook-endpoints';
import type { EventRecorder } from '../core/events/recorder';
import type { DeliveryStatus } from '../core/db/schema';
import { eventBody } from '../core/events/present';
import { pushSignature, SIGNATURE_HEADER } from '../core/events/push-signature';
import { publicOnlyLookup } from '../core/net/address-policy';
import type { DeliveryOutcome } from '../workflows/shared';
import type { DeliveryAttemptOutcome, Metrics } from '../core/observability/metrics';

export interface DeliveryActivityDeps {
  db: Db;
  /** Local development and tests only: http and private addresses may receive pushes. */
  allowInsecureWebhookUrls: boolean;
  /** An endpoint failing every attempt for this long is disabled. */
  disableEndpointAfterMs: number;
  /** Attempts in flight to one endpoint at most, across every worker. */
  maxInFlightPerEndpoint: number;
  events: EventRecorder;
  metrics: Metrics;
}

/** How much longer than an attempt's timeout its concurrency slot is held before it lapses. */
const LEASE_MARGIN_MS = 30_000;

/** Enough of the receiver's answer to say why it failed, never the whole body. */
const MAX_REASON_BODY = 200;

export function createDeliveryActivities(deps: DeliveryActivityDeps) {
  // One agent per worker: keeps connections to receivers alive between attempts.
  const agent = new Agent(deps.allowInsecureWebhookUrls ? {} : { connect: { lookup: publicOnlyLookup } });

  /** Disables the endpoint and, the first time, logs service.endpoint.disabled for the customer. */
  const disable = async (endpoint: WebhookEndpointRow, reason: string) => {
    if (!(await disableEndpoint(deps.db, endpoint.id, reason))) return;
    await deps.events.record({
      customerId: endpoint.customerId,
      seatId: null,
      platform: 'service',
      type: 'service.endpoint.disabled',
      event: 'endpoint_disabled',
      occurredAt: new Date(),
      data: { endpoint_id: endpoint.id, url: endpoint.url, reason },
      sourceKey: `endpoint-disabled:${endpoint.id}:${Date.now()}`,
    });
  };

  return {
    async attemptDelivery(input: { deliveryId: string; attempt: number; timeoutMs: number }): Promise<DeliveryOutcome> {
      const delivery = await findDelivery(deps.db, input.deliveryId);
      if (!delivery) return 'cancelled';
      // A retried activity whose first run already ended the delivery reports that ending again.
      if (delivery.status !== 'pending') return delivery.status === 'succeeded' ? 'delivered' : delivery.status === 'failed' ? 'failed' : 'cancelled';
      const endpoint = await findEndpoint(deps.db, delivery.endpointId);
      if (!endpoint || endpoint.deletedAt || endpoint.disabledAt) {
        await finishDelivery(deps.db, delivery.id, 'cancelled');
        return 'cancelled';
      }
      const slot = await acquireDeliveryLease(deps.db, {
        endpointId: endpoint.id,
        deliveryId: delivery.id,
        limit: deps.maxInFlightPerEndpoint,
        // Outlives the attempt's own timeout, so a live attempt never loses its slot.
        leaseMs: input.timeoutMs + LEASE_MARGIN_MS,
      });
      if (slot === undefined) return 'busy';
      try {
        return await attempt(delivery, endpoint, input);
      } finally {
        await releaseDeliveryLease(deps.db, { endpointId: endpoint.id, slot, deliveryId: delivery.id });
      }
    },

    async finishDelivery(input: { deliveryId: string; status: Exclude<DeliveryStatus, 'pending'> }): Promise<void> {
      await finishDelivery(deps.db, input.deliveryId, input.status);
    },
  };

  async function attempt(delivery: DeliveryRow, endpoint: WebhookEndpointRow, input: { attempt: number; timeoutMs: number }): Promise<DeliveryOutcome> {
    const event = (await findEventById(deps.db, delivery.eventId))!;
    const body = JSON.stringify(eventBody(event));
    const startedAt = new Date();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const response = await request(endpoint.url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'vps-webhooks/1',
          [SIGNATURE_HEADER]: pushSignature(liveKeys(endpoint), Math.floor(Date.now() / 1000), body),
          'x-service-event-id': event.id,
          'x-service-delivery-id': delivery.id,
        },
        body,
        headersTimeout: input.timeoutMs,
        bodyTimeout: input.timeoutMs,
        signal: AbortSignal.timeout(input.timeoutMs),
      });
      statusCode = response.statusCode;
      const text = await response.body.text().catch(() => '');
      if (statusCode < 200 || statusCode >= 300) error = `HTTP ${statusCode}${text ? `: ${text.slice(0, MAX_REASON_BODY)}` : ''}`;
    } catch (err) {
      error = describeNetworkError(err, input.timeoutMs);
    }
    const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
    const durationMs = Date.now() - startedAt.getTime();
    const counted = (outcome: DeliveryAttemptOutcome) => {
      deps.metrics.deliveryAttempts.inc({ outcome });
      deps.metrics.deliveryDuration.observe({ outcome }, durationMs / 1000);
    };
    await recordAttempt(deps.db, {
      deliveryId: delivery.id,
      attempt: input.attempt,
      startedAt,
      durationMs,
      statusCode,
      error,
      succeeded,
    });
    if (succeeded) {
      if (endpoint.failingSince) await markEndpointHealthy(deps.db, endpoint.id);
      await finishDelivery(deps.db, delivery.id, 'succeeded');
      counted('delivered');
      return 'delivered';
    }
    if (statusCode === 410) {
      // The receiver says it is gone for good: stop pushing to it until the customer enables it again.
      await disable(endpoint, 'the receiver answered 410 Gone');
      await finishDelivery(deps.db, delivery.id, 'failed');
      counted('gone');
      return 'gone';
    }
    const failingSince = await markEndpointFailing(deps.db, endpoint.id);
    if (Date.now() - failingSince.getTime() >= deps.disableEndpointAfterMs) {
      await disable(endpoint, `every attempt failed since ${failingSince.toISOString()}`);
      await finishDelivery(deps.db, delivery.id, 'failed');
      counted('gone');
      return 'gone';
    }
    counted('failed');
    return 'retry';
  }
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
