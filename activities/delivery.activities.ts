/**
 * Webhook delivery: one drain of an endpoint's queue claims its due rows under a lease, POSTs each
 * signed event with a per-attempt timeout (up to the endpoint's in-flight limit at once, over
 * kept-alive connections), and writes the outcomes in batches: the attempt (time, status code,
 * duration, failure reason) and the row's next state, a retry time on the schedule or its end.
 * The receiver's answer is an outcome, not an activity failure: only a broken database or worker
 * makes Temporal retry the drain, and then the leases and attempt numbers keep the log free of doubles.
 */
import { Context } from '@temporalio/activity';
import { Agent, request } from 'undici';
import type { Db } from '../core/db/client';
import { Batcher } from '../core/db/batcher';
import {
  adoptLegacyDelivery,
  cancelQueue,
  claimDueDeliveries,
  nextDueAt,
  queueFigures,
  recordOutcomes,
  type AttemptOutcome,
  type ClaimedDelivery,
} from '../core/db/repositories/delivery-queue';
import { findDelivery } from '../core/db/repositories/events';
import { disableEndpoint, findEndpoint, markEndpointFailing, markEndpointHealthy, type WebhookEndpointRow } from '../core/db/repositories/webhook-endpoints';
import type { EventRecorder } from '../core/events/recorder';
import { eventBody } from '../core/events/present';
import { pushSignature, SIGNATURE_HEADER } from '../core/events/push-signature';
import { publicOnlyLookup } from '../core/net/address-policy';
import type { DeliveryDispatcher } from '../core/temporal/delivery-dispatcher';
import { workflowIds } from '../core/temporal/workflow-ids';
import type { DeliveryOutcome, DrainResult, QueueFigures } from '../workflows/shared';
import type { DeliveryAttemptOutcome, Metrics } from '../core/observability/metrics';

export interface DeliveryQueueSettings {
  /** An idle drain waits this long for new rows before it ends (so a steady trickle needs no wake-ups). */
  lingerMs: number;
  /** A drain ends after this long, so its workflow's figures stay fresh and its history moves on. */
  maxDrainMs: number;
}

export interface DeliveryActivityDeps {
  db: Db;
  workerIdentity: string;
  /** Local development and tests only: http and private addresses may receive pushes. */
  allowInsecureWebhookUrls: boolean;
  /** An endpoint failing every attempt for this long is disabled. */
  disableEndpointAfterMs: number;
  /** Attempts in flight to one endpoint at most. */
  maxInFlightPerEndpoint: number;
  events: EventRecorder;
  metrics: Metrics;
  dispatcher: DeliveryDispatcher;
  deliveryQueue: DeliveryQueueSettings;
}

/** How much longer than an attempt's timeout its lease lasts: the outcome's write must fit in it. */
const LEASE_MARGIN_MS = 15_000;

/** Enough of the receiver's answer to say why it failed, never the whole body. */
const MAX_REASON_BODY = 200;

/** How often a drain heartbeats: well inside the workflow's 10 s heartbeat timeout. */
const HEARTBEAT_EVERY_MS = 1_000;

/** How stale a drain's copy of its endpoint may be (its keys, whether it still exists). */
const ENDPOINT_REFRESH_MS = 1_000;

/** Outcomes written in one statement at most. */
const MAX_OUTCOME_BATCH = 256;

export function createDeliveryActivities(deps: DeliveryActivityDeps) {
  // One agent per worker: keeps connections to receivers alive between attempts and drains.
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    ...(deps.allowInsecureWebhookUrls ? {} : { connect: { lookup: publicOnlyLookup } }),
  });
  // One statement in flight; outcomes that finish meanwhile share the next one.
  const outcomes = new Batcher<AttemptOutcome, void>(
    async (batch) => {
      await recordOutcomes(deps.db, batch);
      return batch.map(() => undefined);
    },
    { maxBatch: MAX_OUTCOME_BATCH, maxInFlight: 1, stallMs: 5_000 },
  );

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

  const figuresOf = async (endpointId: string): Promise<QueueFigures> => {
    const f = (await queueFigures(deps.db, [endpointId])).get(endpointId)!;
    return {
      backlog: f.backlog,
      due: f.due,
      inFlight: f.inFlight,
      oldestDueAt: f.oldestDueAt?.toISOString() ?? null,
      nextDueAt: f.nextDueAt?.toISOString() ?? null,
      measuredAt: new Date().toISOString(),
    };
  };

  return {
    /**
     * Drains the endpoint's queue until it has been idle for the linger time or the drain's time is
     * up. A deleted or disabled endpoint's pending rows are cancelled and the queue is closed.
     */
    async drainEndpointQueue(input: { endpointId: string }): Promise<DrainResult> {
      const ctx = Context.current();
      const { attemptTimeoutMs, retryScheduleMs } = deps.events.delivery;
      const { lingerMs, maxDrainMs } = deps.deliveryQueue;
      const owner = `${deps.workerIdentity}/${ctx.info.workflowExecution?.runId ?? ''}/${ctx.info.activityId}/${ctx.info.attempt}`;
      const deadline = Date.now() + maxDrainMs;
      const inFlight = new Set<Promise<void>>();
      let attempted = 0;
      let closed = false;
      // The endpoint's health as this drain last wrote it: failing since a time, or healthy.
      let health: Date | 'healthy' | undefined;
      // Set when this drain disabled the endpoint: the next round reads it again and closes the queue.
      let stale = false;
      let local = deps.dispatcher.openDrain(input.endpointId);

      const send = async (row: ClaimedDelivery, endpoint: WebhookEndpointRow) => {
        const attempt = row.attemptsMade + 1;
        const result = await post(endpoint, row, attemptTimeoutMs);
        const outcome: AttemptOutcome = { deliveryId: row.id, owner, attempt, ...result, status: 'pending', nextAttemptAt: null };
        let counted: DeliveryAttemptOutcome;
        if (result.succeeded) {
          outcome.status = 'succeeded';
          counted = 'delivered';
          if (health !== 'healthy') {
            if (health || endpoint.failingSince) await markEndpointHealthy(deps.db, endpoint.id);
            health = 'healthy';
          }
        } else if (result.statusCode === 410) {
          // The receiver says it is gone for good: stop pushing to it until the customer enables it again.
          outcome.status = 'failed';
          counted = 'gone';
          await disable(endpoint, 'the receiver answered 410 Gone');
          stale = true;
        } else {
          if (!(health instanceof Date)) health = await markEndpointFailing(deps.db, endpoint.id);
          const failingSince = health;
          const pause = retryScheduleMs[attempt - 1];
          if (Date.now() - failingSince.getTime() >= deps.disableEndpointAfterMs) {
            outcome.status = 'failed';
            counted = 'gone';
            await disable(endpoint, `every attempt failed since ${failingSince.toISOString()}`);
            stale = true;
          } else if (pause === undefined) {
            outcome.status = 'failed';
            counted = 'failed';
          } else {
            outcome.nextAttemptAt = new Date(Date.now() + pause);
            counted = 'failed';
          }
        }
        await outcomes.call(outcome);
        deps.metrics.deliveryAttempts.inc({ outcome: counted });
        deps.metrics.deliveryDuration.observe({ outcome: counted }, result.durationMs / 1000);
      };

      const start = (row: ClaimedDelivery, endpoint: WebhookEndpointRow) => {
        attempted++;
        const running: Promise<void> = send(row, endpoint)
          .catch((err: unknown) => {
            // The outcome could not be written: the row keeps its lease, which lapses, and the
            // attempt is made again (the receiver deduplicates by event id).
            ctx.log.warn('a delivery outcome could not be recorded; it is retried when its lease lapses', { deliveryId: row.id, err });
          })
          .finally(() => {
            inFlight.delete(running);
            local.nudge();
          });
        inFlight.add(running);
      };

      // Re-read at most this often: a rotated secret signs within a second, a deletion stops the queue.
      let endpoint: WebhookEndpointRow | undefined;
      let endpointReadAt = 0;
      // A notice may be the endpoint's deletion (deleting it notifies its queue): then read it afresh.
      const currentEndpoint = async (noticed: boolean) => {
        if (!endpoint || stale || noticed || Date.now() - endpointReadAt >= ENDPOINT_REFRESH_MS) {
          endpoint = await findEndpoint(deps.db, input.endpointId);
          endpointReadAt = Date.now();
          stale = false;
        }
        return endpoint;
      };
      // Whether the last claim filled every free slot: more rows are probably due.
      let more = true;
      // Every wait is sliced so the drain heartbeats at least once a second, whatever it waits for
      // (a receiver hanging until its timeout, the linger): a silent drain would be taken for dead.
      let beatAt = 0;
      const beat = () => {
        // The SDK throttles what it sends, but each call still encodes its details.
        if (Date.now() - beatAt < HEARTBEAT_EVERY_MS) return;
        ctx.heartbeat({ attempted });
        beatAt = Date.now();
      };
      const waitBeating = async (ms: number): Promise<boolean> => {
        for (const until = Date.now() + ms; ; ) {
          if (await local.wait(Math.min(HEARTBEAT_EVERY_MS, until - Date.now()))) return true;
          beat();
          if (Date.now() >= until) return false;
        }
      };
      const settleInFlight = async () => {
        while (inFlight.size > 0) await waitBeating(HEARTBEAT_EVERY_MS);
      };
      try {
        for (;;) {
          beat();
          const timeLeft = deadline - Date.now();
          const stopping = timeLeft <= 0 || ctx.cancellationSignal.aborted || deps.dispatcher.stopping;
          const free = deps.maxInFlightPerEndpoint - inFlight.size;
          // Claim for new rows, for a queue that had more, in batches of at least half the slots.
          // Left for the next round while no slot is free, so a deletion's notice is never lost.
          const noticed = !stopping && free > 0 && local.takeNotice();
          const worthClaiming = noticed || inFlight.size === 0 || (more && free >= Math.ceil(deps.maxInFlightPerEndpoint / 2));
          if (!stopping && free > 0 && worthClaiming) {
            const current = await currentEndpoint(noticed);
            if (!current || current.deletedAt || current.disabledAt) {
              await settleInFlight();
              if (current) await cancelQueue(deps.db, current, deps.events.delivery.taskQueue);
              closed = true;
              break;
            }
            const rows = await claimDueDeliveries(deps.db, { endpointId: current.id, limit: free, leaseMs: attemptTimeoutMs + LEASE_MARGIN_MS, owner });
            more = rows.length === free;
            for (const row of rows) start(row, current);
            if (rows.length > 0) continue;
          }
          if (inFlight.size > 0) {
            // Until an attempt ends or new rows arrive.
            await waitBeating(HEARTBEAT_EVERY_MS);
            continue;
          }
          if (stopping) break;
          const next = await nextDueAt(deps.db, input.endpointId);
          const untilNext = next ? next.getTime() - Date.now() : Infinity;
          if (untilNext <= 0) continue;
          if (await waitBeating(Math.min(lingerMs, timeLeft, untilNext))) continue;
          if (untilNext <= lingerMs && untilNext <= timeLeft) continue;
          // Idle: leave the registry first, then look once more, so a row committed in between is
          // either seen here or its notice signals the workflow.
          local.close();
          const late = await nextDueAt(deps.db, input.endpointId);
          if (!late || late.getTime() > Date.now()) break;
          local = deps.dispatcher.openDrain(input.endpointId);
        }
      } finally {
        local.close();
        await settleInFlight();
      }
      return { attempted, closed, figures: await figuresOf(input.endpointId) };
    },

    /**
     * The activity of the per-delivery workflows of the previous release. It no longer sends: it
     * hands a pending delivery to its endpoint's queue with the attempts made so far, and its
     * workflow ends; an ended delivery reports how it ended.
     */
    async attemptDelivery(input: { deliveryId: string; attempt: number; timeoutMs: number }): Promise<DeliveryOutcome> {
      const delivery = await findDelivery(deps.db, input.deliveryId);
      if (!delivery) return 'cancelled';
      if (delivery.status === 'pending') {
        const adopted = await adoptLegacyDelivery(deps.db, { deliveryId: delivery.id, attemptsMade: input.attempt - 1, queueWorkflowId: workflowIds.endpointDeliveries(delivery.endpointId), taskQueue: deps.events.delivery.taskQueue });
        if (adopted) return 'queued';
      }
      const ended = (await findDelivery(deps.db, input.deliveryId))!;
      return ended.status === 'succeeded' ? 'delivered' : ended.status === 'failed' ? 'failed' : 'cancelled';
    },

    /** The previous release's workflows call this after their last attempt; the queue owns the row now. */
    async finishDelivery(input: { deliveryId: string; status?: string }): Promise<void> {
      const delivery = await findDelivery(deps.db, input.deliveryId);
      if (delivery?.status === 'pending') {
        await adoptLegacyDelivery(deps.db, { deliveryId: delivery.id, attemptsMade: delivery.attemptsMade, queueWorkflowId: workflowIds.endpointDeliveries(delivery.endpointId), taskQueue: deps.events.delivery.taskQueue });
      }
    },
  };

  async function post(
    endpoint: WebhookEndpointRow,
    row: ClaimedDelivery,
    timeoutMs: number,
  ): Promise<Pick<AttemptOutcome, 'startedAt' | 'durationMs' | 'statusCode' | 'error' | 'succeeded'>> {
    const body = JSON.stringify(eventBody(row.event));
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
          'x-service-event-id': row.event.id,
          'x-service-delivery-id': row.id,
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
