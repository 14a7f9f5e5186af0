/**
 * The Postgres notification that tells every core instance an event was stored. It is sent inside
 * the storing transaction, so it arrives only once the event is committed and readable, in commit
 * order. The payload names the customer and position and, when it fits a notification
 * (EVENT_IN_NOTICE_BYTES), carries the stored row as JSON after a space: a stream that has seen
 * every notice since its last read sends the event from it without reading the log.
 */
export const EVENTS_CHANNEL = 'vps_events';

/**
 * Where intake announces the events it stores, each notice with its row when it fits: a channel of
 * its own, so that a release that reads only positions on EVENTS_CHANNEL (during a rolling
 * upgrade) never sees a row it cannot parse; its streams then catch up at their heartbeats.
 * Current releases listen on both.
 */
export const EVENT_ROWS_CHANNEL = 'vps_event_rows';

export function eventNotice(customerId: string, position: number): string {
  return `${eventNoticePrefix(customerId)}${position}`;
}

/**
 * The largest row (as JSON) a notice carries; a larger event's notice names its position only.
 * Postgres refuses payloads of 8,000 bytes, but the limit is set far lower: its notification queue
 * never splits an entry across its 8 KB pages, so entries over about 4 KB take a page each, and a
 * listener that stops reading fills the queue (and then fails every insert) that much sooner.
 */
export const EVENT_IN_NOTICE_BYTES = 2_000;

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

/** An event stored at a position (with its row as JSON text, when it fitted), or the customer's credentials changed. */
export type StreamNotice = { customerId: string; position: number; row?: string } | { customerId: string; credentials: true };

export function parseEventNotice(payload: string): StreamNotice | undefined {
  const space = payload.indexOf(' ');
  const head = space < 0 ? payload : payload.slice(0, space);
  const at = head.lastIndexOf(':');
  if (at <= 0) return undefined;
  const customerId = head.slice(0, at);
  const tail = head.slice(at + 1);
  if (tail === CREDENTIALS_CHANGED && space < 0) return { customerId, credentials: true };
  const position = Number(tail);
  if (!/^\d+$/.test(tail) || !Number.isSafeInteger(position)) return undefined;
  return space < 0 ? { customerId, position } : { customerId, position, row: payload.slice(space + 1) };
}
