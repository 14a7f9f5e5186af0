/**
 * One per webhook endpoint (`endpoint-deliveries-<endpointId>`): drains the endpoint's delivery
 * queue in batch activities, each of which claims due rows, sends them concurrently and records
 * their outcomes. Between drains it sleeps until its next row is due or a wake-up signal comes;
 * quiet for an hour it ends, and the next row starts it again. Its history grows by a few events
 * per drain, not per delivery, and it continues as new long before the history is large.
 */
import { condition, continueAsNew, defineQuery, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ENDPOINT_DELIVERIES_QUERY, ENDPOINT_DELIVERIES_WAKE_SIGNAL, type EndpointDeliveriesInput, type QueueFigures } from './shared';

export const wakeSignal = defineSignal(ENDPOINT_DELIVERIES_WAKE_SIGNAL);
export const queueQuery = defineQuery<QueueFigures | null>(ENDPOINT_DELIVERIES_QUERY);

const { drainEndpointQueue } = proxyActivities<Activities>({
  // A drain ends by itself within its configured time (a minute at most, plus the last attempts'
  // timeouts); this only bounds one whose worker hangs.
  startToCloseTimeout: '10 minutes',
  // A drain heartbeats every second: a killed worker's drain moves to another within this, and its
  // claimed rows follow as soon as their leases lapse.
  heartbeatTimeout: '10 seconds',
  // Only infrastructure failures reach here (the receivers' answers are outcomes): retry until the
  // database or the worker is back.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** A queue quiet this long ends its workflow; a new row starts it again. */
const IDLE_END_MS = 60 * 60_000;
/** Well under the server's limits: each drain adds about six events. */
const MAX_HISTORY_EVENTS = 3_000;

export async function endpointDeliveriesWorkflow(input: EndpointDeliveriesInput): Promise<'closed' | 'idle'> {
  // A start is itself a wake-up; signals only ever set this flag, so none is lost at continue-as-new
  // (the next run drains first whatever happened).
  let woken = true;
  let figures: QueueFigures | null = input.figures ?? null;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  setHandler(queueQuery, () => figures);

  const idleEndMs = input.limits?.idleEndMs ?? IDLE_END_MS;
  const maxHistoryEvents = input.limits?.maxHistoryEvents ?? MAX_HISTORY_EVENTS;
  while (workflowInfo().historyLength < maxHistoryEvents && !workflowInfo().continueAsNewSuggested) {
    woken = false;
    const result = await drainEndpointQueue({ endpointId: input.endpointId });
    figures = result.figures;
    if (result.closed) return 'closed';
    if (woken || result.noticeLeft) continue;
    const next = figures.nextDueAt ? Date.parse(figures.nextDueAt) : undefined;
    const wait = next === undefined ? idleEndMs : Math.max(0, next - Date.now());
    if (wait === 0) continue;
    const signalled = await condition(() => woken, wait);
    if (!signalled && next === undefined) return 'idle';
  }
  return continueAsNew<typeof endpointDeliveriesWorkflow>({ ...input, ...(figures ? { figures } : {}) });
}
