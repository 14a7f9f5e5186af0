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

/**
 * Sent on the same channel when one of the customer's credentials is withdrawn (a key revoked, a
 * user disabled, a console session ended): every instance's open streams of that customer check
 * their credential at once instead of at their next heartbeat, so a revoked key's streams end
 * within a second on every gateway.
 */
export const CREDENTIALS_CHANGED = 'credentials';

export function credentialsNotice(customerId: string): string {
  return `${eventNoticePrefix(customerId)}${CREDENTIALS_CHANGED}`;
}

/** An event stored at a position, or the customer's credentials changed. */
export type StreamNotice = { customerId: string; position: number } | { customerId: string; credentials: true };

export function parseEventNotice(payload: string): StreamNotice | undefined {
  const at = payload.lastIndexOf(':');
  if (at <= 0) return undefined;
  const customerId = payload.slice(0, at);
  const tail = payload.slice(at + 1);
  if (tail === CREDENTIALS_CHANGED) return { customerId, credentials: true };
  const position = Number(tail);
  if (!/^\d+$/.test(tail) || !Number.isSafeInteger(position)) return undefined;
  return { customerId, position };
}
