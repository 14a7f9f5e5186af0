/**
 * The receiver of the platform's webhooks: verifies the official signature, normalizes the push,
 * resolves the seat from the account, and stores the event once before answering. The platform
 * retries until it gets a 200, so every failure here is an error answer, never a silent drop.
 */
import type { ServiceImpl } from '@connectrpc/connect';
import type { IngestService, ReceiveOfficialWebhookRequest } from '../../gen/vps/event/v1/event_pb';
import type { Db } from '../db/client';
import { Batcher } from '../db/batcher';
import { findSeatsByAccounts, type SeatRow } from '../db/repositories/seats';
import { ApiError } from '../errors';
import { PLATFORM } from '../events/event-types';
import { normalizeOfficial } from '../events/official-events';
import type { EventRecorder } from '../events/recorder';
import type { Logger } from '../logger';
import { holdsUnstorable } from '../unstorable-text';
import { verifyOfficialWebhook } from '../upstream/vplat/webhooks';

/**
 * The seat of every push is read afresh (a binding may change at any time), but the pushes that
 * arrive together share one statement: on embedded PGlite, where each statement costs about 2 ms
 * of its one thread, a lookup per push was a fifth of that thread's work at 100 pushes/s.
 */
const SEAT_LOOKUP_BATCHING = { maxBatch: 256, maxInFlight: 1, stallMs: 5_000, gather: 'turn' } as const;

export class IngestHandlers implements ServiceImpl<typeof IngestService> {
  private readonly seats: Batcher<string, SeatRow | undefined>;

  constructor(private readonly deps: { db: Db; events: EventRecorder; app: { appId: string; appSecret: string }; logger: Logger }) {
    this.seats = new Batcher((accountIds) => findSeatsByAccounts(deps.db, 'video', accountIds), SEAT_LOOKUP_BATCHING);
  }

  async receiveOfficialWebhook(req: ReceiveOfficialWebhookRequest) {
    const verdict = verifyOfficialWebhook({
      appSecret: this.deps.app.appSecret,
      appId: this.deps.app.appId,
      signatureHeader: req.signature || undefined,
      rawBody: Buffer.from(req.body).toString('utf8'),
    });
    if (!verdict.ok) throw new ApiError(1001, `official webhook refused: ${verdict.reason}`);
    const { webhook, content } = verdict;
    const normalized = normalizeOfficial(webhook, content);
    if (!normalized) return { outcome: 'ignored', eventId: '' };
    // An account id Postgres cannot hold is no seat's: ignored like an unbound one (not refused,
    // which would only make the platform push it again for 72 hours).
    const seat = holdsUnstorable(webhook.user_openid) ? undefined : await this.seats.call(webhook.user_openid);
    if (!seat) {
      // An account no seat holds (unbound since): nothing to log, and nobody to tell.
      this.deps.logger.info({ event: webhook.event, account: webhook.user_openid }, 'official webhook for an unbound account ignored');
      return { outcome: 'ignored', eventId: '' };
    }
    const { event, created } = await this.deps.events.record({
      customerId: seat.customerId,
      seatId: seat.id,
      platform: PLATFORM,
      type: normalized.type,
      event: normalized.event,
      occurredAt: normalized.occurredAt,
      data: normalized.data,
      sourceKey: normalized.sourceKey,
    });
    return { outcome: created ? 'stored' : 'duplicate', eventId: event.id };
  }
}
