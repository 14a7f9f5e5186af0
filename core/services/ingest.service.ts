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
import { SeatMovedError, type EventRecorder } from '../events/recorder';
import { KeptMap } from '../kept-map';
import type { Logger } from '../logger';
import { holdsUnstorable } from '../unstorable-text';
import { verifyOfficialWebhook } from '../upstream/vplat/webhooks';

/**
 * Lookups of accounts not kept: the pushes that arrive together share one statement (on embedded
 * PGlite, where each statement costs about 2 ms of its one thread, a lookup per push was a fifth of
 * that thread's work at 100 pushes/s).
 */
const SEAT_LOOKUP_BATCHING = { maxBatch: 256, maxInFlight: 1, stallMs: 5_000, gather: 'turn' } as const;

/** What is kept of an account's seat: only what routing needs (not its sealed credentials). */
type KeptSeat = Pick<SeatRow, 'id' | 'customerId'>;

/** Accounts whose seat is kept in memory; one more drops the one read longest ago. */
const KEPT_ACCOUNTS = 50_000;

/** Fresh lookups of one push's seat that each found it moved before the event was stored; then it is stored unchecked. */
const SEAT_TRIES = 3;

export class IngestHandlers implements ServiceImpl<typeof IngestService> {
  private readonly lookups: Batcher<string, SeatRow | undefined>;
  /**
   * The seat holding each account, as last read. A binding may change at any time, so the event's
   * insert checks that the seat still holds the account (SeatMovedError if not, and the account is
   * read afresh). An account no seat holds is not kept: it is read again at its next push.
   */
  private readonly kept = new KeptMap<string, KeptSeat>(KEPT_ACCOUNTS);

  constructor(private readonly deps: { db: Db; events: EventRecorder; app: { appId: string; appSecret: string }; logger: Logger }) {
    this.lookups = new Batcher((accountIds) => findSeatsByAccounts(deps.db, 'video', accountIds), SEAT_LOOKUP_BATCHING);
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
    if (holdsUnstorable(webhook.user_openid)) return this.unbound(webhook);
    const account = webhook.user_openid;
    for (let tries = 1; ; tries++) {
      const seat = this.kept.get(account) ?? (await this.lookUp(account));
      if (!seat) return this.unbound(webhook);
      try {
        const { event, created } = await this.deps.events.record(
          {
            customerId: seat.customerId,
            seatId: seat.id,
            platform: PLATFORM,
            type: normalized.type,
            event: normalized.event,
            occurredAt: normalized.occurredAt,
            data: normalized.data,
            sourceKey: normalized.sourceKey,
          },
          tries <= SEAT_TRIES ? { seatAccount: account } : {},
        );
        return { outcome: created ? 'stored' : 'duplicate', eventId: event.id };
      } catch (err) {
        if (!(err instanceof SeatMovedError)) throw err;
        this.kept.delete(account);
      }
    }
  }

  private async lookUp(account: string): Promise<KeptSeat | undefined> {
    const seat = await this.lookups.call(account);
    if (!seat) return undefined;
    const kept = { id: seat.id, customerId: seat.customerId };
    this.kept.set(account, kept);
    return kept;
  }

  /** An account no seat holds (unbound since): nothing to log, and nobody to tell. */
  private unbound(webhook: { event: string; user_openid: string }) {
    this.deps.logger.info({ event: webhook.event, account: webhook.user_openid }, 'official webhook for an unbound account ignored');
    return { outcome: 'ignored', eventId: '' };
  }
}
