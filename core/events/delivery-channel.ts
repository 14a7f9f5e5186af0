/**
 * The Postgres notification that tells every worker an endpoint's queue got due rows. It is sent
 * inside the transaction that enqueues them, so it arrives only once they are committed and
 * claimable. Postgres folds identical notices of one transaction into one, so an event fanned out
 * to an endpoint, or a recover of a thousand events, is one notice per endpoint.
 */
export const DELIVERIES_CHANNEL = 'vps_deliveries';

export function deliveryNotice(customerId: string, endpointId: string): string {
  return `${customerId}:${endpointId}`;
}

export function parseDeliveryNotice(payload: string): { customerId: string; endpointId: string } | undefined {
  const at = payload.indexOf(':');
  if (at <= 0 || at === payload.length - 1) return undefined;
  return { customerId: payload.slice(0, at), endpointId: payload.slice(at + 1) };
}
