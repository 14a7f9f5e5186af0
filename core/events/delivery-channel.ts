/**
 * The Postgres notification that tells the workers an endpoint's queue got due rows (or was
 * cancelled). It is sent inside the transaction that changes the queue, so it arrives only once the
 * rows are committed and claimable. Postgres folds identical notices of one transaction into one,
 * so an event fanned out to an endpoint, or a recover of a thousand events, is one notice per
 * endpoint. The notice names the task queue of the workers meant to drain it: deployments that
 * share a database with different task queues each wake only their own.
 */
export const DELIVERIES_CHANNEL = 'vps_deliveries';

export interface DeliveryNotice {
  customerId: string;
  endpointId: string;
  taskQueue: string;
}

/** Ids never hold a space; a task queue may, so it comes last. */
export function deliveryNotice(n: DeliveryNotice): string {
  return `${n.customerId} ${n.endpointId} ${n.taskQueue}`;
}

export function parseDeliveryNotice(payload: string): DeliveryNotice | undefined {
  const first = payload.indexOf(' ');
  const second = first < 0 ? -1 : payload.indexOf(' ', first + 1);
  if (first <= 0 || second <= first + 1 || second === payload.length - 1) return undefined;
  return { customerId: payload.slice(0, first), endpointId: payload.slice(first + 1, second), taskQueue: payload.slice(second + 1) };
}
