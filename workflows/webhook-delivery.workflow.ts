/**
 * The per-delivery workflow of the previous release (`deliver-<eventId>-<endpointId>`), no longer
 * started: deliveries go through each endpoint's queue (endpoint-deliveries.workflow.ts). It stays
 * registered, unchanged, so that runs still open replay; their next attempt now hands the delivery
 * to its endpoint's queue (outcome `queued`) and the run ends. Remove it once none is open.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DeliveryOutcome, WebhookDeliveryInput } from './shared';

/**
 * Only infrastructure failures reach Temporal's retry (the receiver's answers are outcomes): retry
 * those until the database or network is back.
 */
const RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;
/** Beyond the HTTP attempt itself, the reads and writes around it (delivery, endpoint, lease, attempt row). */
const ATTEMPT_MARGIN_MS = 20_000;

const { finishDelivery } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: RETRY });

/** Waits while the endpoint is at its concurrency limit: short at first, then up to half a minute. */
const BUSY_WAIT_MS = [250, 500, 1_000, 2_000, 5_000, 10_000, 30_000];

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<DeliveryOutcome> {
  // Bounded by the attempt's own timeout: an attempt lost with its worker (killed, or a task that
  // never ran) is given to another worker within seconds, not minutes, and an event arrives late
  // by that much at most. The attempt number keeps the log free of doubles.
  const { attemptDelivery } = proxyActivities<Activities>({
    startToCloseTimeout: input.attemptTimeoutMs + ATTEMPT_MARGIN_MS,
    retry: RETRY,
  });
  let busy = 0;
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptDelivery({ deliveryId: input.deliveryId, attempt, timeoutMs: input.attemptTimeoutMs });
    if (outcome === 'busy') {
      // Not an attempt: the same attempt number goes again after a jittered pause.
      const base = BUSY_WAIT_MS[Math.min(busy++, BUSY_WAIT_MS.length - 1)]!;
      await sleep(base / 2 + Math.random() * base);
      attempt--;
      continue;
    }
    busy = 0;
    if (outcome !== 'retry') return outcome;
    const pause = input.retryScheduleMs[attempt - 1];
    if (pause === undefined) {
      await finishDelivery({ deliveryId: input.deliveryId, status: 'failed' });
      return 'failed';
    }
    await sleep(pause);
  }
}
