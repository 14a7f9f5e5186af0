/**
 * The Postgres notification that tells every core instance an event was stored. It is sent inside
 * the storing transaction, so it arrives only once the event is committed and readable, in commit
 * order. The payload names the customer and position; listeners read the event from the log.
 */
export const EVENTS_CHANNEL = 'vps_events';

export function eventNotice(customerId: string, position: number): string {
  return `${eventNoticePrefix(customerId)}${position}`;
}

/** The notice without its position, for a statement that appends the position it generates. */
export function eventNoticePrefix(customerId: string): string {
  return `${customerId}:`;
}

export function parseEventNotice(payload: string): { customerId: string; position: number } | undefined {
  const at = payload.lastIndexOf(':');
  const position = Number(payload.slice(at + 1));
  if (at <= 0 || !Number.isSafeInteger(position)) return undefined;
  return { customerId: payload.slice(0, at), position };
}
