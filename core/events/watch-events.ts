/**
 * EventService.WatchEvents: a customer's events as they are stored, after replaying the ones after
 * a given event (the SSE Last-Event-ID). Every read of the log starts after the last position sent,
 * and an event that comes with its notice is sent only when its position is past that, so an event
 * is sent once, in position order, whether it arrives through the replay, a notice or a catch-up
 * read.
 *
 * Why a notice's row can stand in for a read: the stream subscribes before its first read, a
 * customer's events commit in position order (intake's lock), and notifications arrive in commit
 * order. So once a read has been issued, every event it does not return is announced afterwards,
 * in order; a notice without its row (too large for a notification), a lost connection (`resync`)
 * or a slow client's backlog sends the stream back to reading.
 */
import type { Event, WatchEventsRequest } from '../../gen/vps/event/v1/event_pb';
import type { CustomerPrincipal } from '../context';
import type { Db } from '../db/client';
import { findEvent, keptByEventsAfter, lastEvent, listEventsAfter, type EventRow } from '../db/repositories/events';
import { ApiError } from '../errors';
import type { EventHub, HubNotice } from './event-hub';
import { checkPatterns, hiddenTypes } from './event-types';
import { toEventMessage } from './present';
import type { StreamCredential, StreamLeases } from './stream-leases';

export interface WatchEventsDeps {
  db: Db;
  hub: EventHub;
  /** A message with no event is sent after this long without one (SSE_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** The cap on open streams; without it (tests of the stream alone) streams are not counted. */
  leases?: StreamLeases;
}

/**
 * The resume id of the start of a customer's log: what a stream opened before the customer's first
 * event starts after, so a client that reconnects before receiving anything still resumes without
 * a gap. Never an event id (those are `evt_…`); resuming from it replays the whole log.
 */
export const LOG_START_ID = 'start';

/** A WatchEventsResponse: an event, or a heartbeat without one. */
export interface WatchEventsMessage {
  event?: Event;
  /** First message only: the event the stream starts after. */
  resumeId?: string;
}

/** Events read per query; a long replay is sent in pages of this size. */
const PAGE_SIZE = 100;

/**
 * Events a stream keeps from notices while its client has not taken them; one more and it drops
 * them and reads the log instead, so a slow client costs memory only up to this.
 */
const MAX_NOTICED = 1_000;

/**
 * Messages, in this order: one without an event as soon as the stream is live (so a caller knows
 * the request was accepted and can commit its own response; every refusal comes before it), then
 * the events stored after `after_event_id`, then each new event, with a message without an event
 * after `heartbeatMs` of silence. Ends, without an error, when `requestSignal` aborts.
 *
 * An `after_event_id` that is not one of the caller's events is 1005, not "replay everything" nor
 * "replay nothing": a client resuming from an id it got somewhere else (another account, a purged
 * log) must learn that it cannot resume, and reconcile through GET /v1/events instead.
 *
 * The stream takes a lease under the caps on open streams after those checks and before its first
 * message (2002 beyond a cap), and holds it until it ends; it ends early, without an error, if the
 * lease lapses, since its slot may then be another stream's.
 */
export async function* watchEvents(
  deps: WatchEventsDeps,
  principal: CustomerPrincipal,
  req: WatchEventsRequest,
  requestSignal: AbortSignal,
  credential: StreamCredential = { apiKeyId: principal.apiKeyId },
): AsyncGenerator<WatchEventsMessage> {
  const { customerId } = principal;
  checkPatterns(req.types, 'types');
  const types = [...new Set(req.types)];
  const hidden = hiddenTypes(types, req.includeTest);
  let cursor: number | undefined;
  let resumeId = req.afterEventId;
  if (req.afterEventId === LOG_START_ID) {
    cursor = 0;
  } else if (req.afterEventId) {
    const after = await findEvent(deps.db, customerId, req.afterEventId);
    if (!after) {
      throw new ApiError(
        1005,
        `after_event_id: no event ${JSON.stringify(req.afterEventId)} of this customer; reconcile with GET /v1/events`,
        {
          data: { field: 'after_event_id' },
        },
      );
    }
    cursor = after.position;
  }

  const lease = await deps.leases?.acquire(customerId, credential);
  try {
    yield* follow(
      deps,
      customerId,
      { types, hidden, cursor, resumeId },
      lease ? AbortSignal.any([requestSignal, lease.lost]) : requestSignal,
    );
  } finally {
    await lease?.release();
  }
}

/** The live part of watchEvents, from the subscription on. */
async function* follow(
  deps: WatchEventsDeps,
  customerId: string,
  start: { types: string[]; hidden: string[]; cursor: number | undefined; resumeId: string },
  signal: AbortSignal,
): AsyncGenerator<WatchEventsMessage> {
  const { types, hidden } = start;
  let { cursor, resumeId } = start;
  let stale = true;
  /** Events from notices that came after the last read was issued, in commit order. */
  let noticed: EventRow[] = [];
  let wake: (() => void) | undefined;
  /** A credential of the customer was withdrawn: a heartbeat now makes the caller check this stream's. */
  let checkNow = false;
  const poke = (notice?: HubNotice) => {
    if (notice?.kind === 'credentials') checkNow = true;
    else if (notice?.kind === 'event' && notice.row && !stale && noticed.length < MAX_NOTICED) noticed.push(notice.row);
    // While stale, the read still to come finds the event: it committed before that read starts.
    else if (notice?.kind !== 'event' || !stale) {
      stale = true;
      noticed = [];
    }
    wake?.();
  };
  // Subscribed before the log is read: an event committed from here on is either in the read
  // that follows or announced after it, so none falls between the replay and the live part.
  const unsubscribe = await deps.hub.subscribe(customerId, poke);
  const onAbort = () => poke();
  signal.addEventListener('abort', onAbort);
  let timer: NodeJS.Timeout | undefined;
  try {
    // Without a Last-Event-ID the stream starts now (the spec: only events after the connection).
    if (cursor === undefined) {
      const latest = await lastEvent(deps.db, customerId);
      cursor = latest?.position ?? 0;
      resumeId = latest?.id ?? LOG_START_ID;
    }
    if (signal.aborted) return;
    yield { resumeId };
    let quietSince = Date.now();
    while (!signal.aborted) {
      if (stale) {
        stale = false;
        noticed = [];
        const rows = await listEventsAfter(deps.db, { customerId, afterPosition: cursor, types, hiddenTypes: hidden, limit: PAGE_SIZE });
        for (const row of rows) {
          if (signal.aborted) return;
          cursor = row.position;
          yield { event: toEventMessage(row) };
          quietSince = Date.now();
        }
        if (rows.length === PAGE_SIZE) stale = true;
        continue;
      }
      const next = noticed.shift();
      if (next) {
        // Already sent (it was in a read), or not one this stream asked for: only the cursor moves.
        if (next.position <= cursor) continue;
        cursor = next.position;
        if (!keptByEventsAfter({ types, hiddenTypes: hidden }, next.type)) continue;
        yield { event: toEventMessage(next) };
        quietSince = Date.now();
        continue;
      }
      const idleFor = Date.now() - quietSince;
      if (checkNow) {
        checkNow = false;
        yield {};
        continue;
      }
      if (idleFor >= deps.heartbeatMs) {
        // A catch-up read with every heartbeat: a notification lost while the listening connection
        // reconnected delays an event by one heartbeat at most, never drops it.
        stale = true;
        yield {};
        quietSince = Date.now();
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, deps.heartbeatMs - idleFor);
      });
      clearTimeout(timer);
      wake = undefined;
    }
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}

/** The customer's latest position (0 before the first event): where a stream without a resume id starts. */

/** How often an event stream that never falls idle checks that its caller is still admitted. */
export const ADMISSION_RECHECK_MS = 15_000;

/**
 * Ends a stream with 1001 once its credential stops being valid (key revoked, session ended, user
 * disabled), so revoking a key cuts off its open streams too, not only its next request. Checked
 * with every heartbeat, and with an event when the last check is older than `recheckMs`; the
 * stream's first message follows the authentication itself and is not checked again.
 */
export async function* whileAdmitted<T extends { event?: unknown }>(
  messages: AsyncIterable<T>,
  admitted: () => Promise<boolean>,
  recheckMs = ADMISSION_RECHECK_MS,
): AsyncGenerator<T> {
  let first = true;
  let checkedAt = Date.now();
  for await (const message of messages) {
    if (!first && (!message.event || Date.now() - checkedAt >= recheckMs)) {
      checkedAt = Date.now();
      if (!(await admitted()))
        throw new ApiError(1001, 'the API key or console session of this stream was revoked or has ended, or its user was disabled');
    }
    first = false;
    yield message;
  }
}
