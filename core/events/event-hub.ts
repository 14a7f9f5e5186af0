/**
 * One LISTEN per core process, shared by every open event stream of that process. Postgres sends
 * each notification to every listening connection, so every core instance (and through it, every
 * gateway instance) learns of every stored event, whichever instance stored it; a connection per
 * stream would spend a database connection per open SSE client instead.
 */
import type { Database } from '../db/client';
import { eventFromNotice, type EventRow } from '../db/repositories/events';
import type { Logger } from '../logger';
import { EVENT_ROWS_CHANNEL, EVENTS_CHANNEL, parseEventNotice } from './stream-channel';

/**
 * What a subscriber is told: a newly committed event of the subscribed customer (with its row when
 * the notice carried it), one of the customer's credentials withdrawn, or `resync` when
 * notifications may have been lost (the listening connection was re-established): every notice
 * since the subscriber's last read of the log can no longer be assumed to have arrived.
 */
export type HubNotice = { kind: 'event'; position: number; row?: EventRow } | { kind: 'credentials' } | { kind: 'resync' };

export type NoticeListener = (notice: HubNotice) => void;

export class EventHub {
  private readonly subscribers = new Map<string, Set<NoticeListener>>();
  private listening: Promise<() => Promise<void>> | undefined;
  /** Notices received and not yet handed on (see receive). */
  private received: string[] = [];
  private closed = false;

  constructor(private readonly deps: { listen: Database['listen']; logger: Logger }) {}

  /**
   * Resolves once notifications are being received, so an event committed after it resolves is
   * never missed; the returned function ends the subscription. The LISTEN starts with the first
   * subscriber and stays until close(): idle, it costs one connection and no traffic.
   */
  async subscribe(customerId: string, listener: NoticeListener): Promise<() => void> {
    if (this.closed) throw new Error('event hub is closed');
    let listeners = this.subscribers.get(customerId);
    if (!listeners) this.subscribers.set(customerId, (listeners = new Set()));
    listeners.add(listener);
    const unsubscribe = () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.subscribers.get(customerId) === listeners) this.subscribers.delete(customerId);
    };
    try {
      await this.start();
    } catch (err) {
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  /** Open subscriptions, for tests and metrics. */
  get size(): number {
    let n = 0;
    for (const listeners of this.subscribers.values()) n += listeners.size;
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
    const listening = this.listening;
    this.listening = undefined;
    if (!listening) return;
    let unlisten: () => Promise<void>;
    try {
      unlisten = await listening;
    } catch {
      // It never listened (start() logged why): there is nothing to end.
      return;
    }
    await unlisten();
  }

  private start(): Promise<unknown> {
    if (!this.listening) {
      const listen = (channel: string) =>
        this.deps.listen(
          channel,
          (payload) => this.receive(payload),
          () => this.tellAll({ kind: 'resync' }),
        );
      const listening = Promise.all([listen(EVENT_ROWS_CHANNEL), listen(EVENTS_CHANNEL)]).then(
        (ends) => async () => void (await Promise.all(ends.map((end) => end()))),
      );
      this.listening = listening;
      // A failed LISTEN (database unreachable) must not stick: the next subscriber tries again.
      listening.catch((err: unknown) => {
        if (this.listening === listening) this.listening = undefined;
        this.deps.logger.error({ err, channel: EVENT_ROWS_CHANNEL }, 'could not listen for stored events');
      });
    }
    return this.listening;
  }

  /**
   * Notices are handed on a turn later. postgres.js passes a re-established connection's first
   * notices on as it reads them, but says the LISTEN is back (resync) only a few promise ticks
   * later: handed on at once, a row could reach a stream before the resync that says notices were
   * lost before it, and the stream would send it past the lost one. A turn later, every resync of
   * the same read has been told first.
   */
  private receive(payload: string): void {
    this.received.push(payload);
    if (this.received.length === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const payloads = this.received;
    this.received = [];
    for (const payload of payloads) this.dispatch(payload);
  }

  private dispatch(payload: string): void {
    const notice = parseEventNotice(payload);
    if (!notice) {
      this.deps.logger.warn({ payload: payload.slice(0, 200), channel: EVENTS_CHANNEL }, 'ignored a malformed event notification');
      return;
    }
    const listeners = this.subscribers.get(notice.customerId);
    if (!listeners) return;
    if ('credentials' in notice) return this.tell(notice.customerId, listeners, { kind: 'credentials' });
    let row: EventRow | undefined;
    if (notice.row !== undefined) {
      try {
        row = eventFromNotice(notice.row);
      } catch (err) {
        // Without the row, subscribers read the event from the log.
        this.deps.logger.warn({ err, customerId: notice.customerId }, 'an event notification carried a row that could not be read');
      }
    }
    this.tell(notice.customerId, listeners, { kind: 'event', position: notice.position, ...(row ? { row } : {}) });
  }

  private tellAll(notice: HubNotice): void {
    for (const [customerId, listeners] of this.subscribers) this.tell(customerId, listeners, notice);
  }

  private tell(customerId: string, listeners: ReadonlySet<NoticeListener>, notice: HubNotice): void {
    for (const listener of listeners) {
      try {
        listener(notice);
      } catch (err) {
        // One faulty subscriber must not starve the others of the same notification.
        this.deps.logger.error({ err, customerId }, 'event stream subscriber failed on a notification');
      }
    }
  }
}
