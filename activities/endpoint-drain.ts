/**
 * One drain of one endpoint's delivery queue, the body of the drainEndpointQueue activity. It
 * claims due rows under a lease, sends up to the endpoint's in-flight limit at once, hands each
 * outcome to the batched writer, and returns when its time is up or the queue has been idle for
 * the linger time; a deleted or disabled endpoint's queue is cancelled and closed.
 */
import type { Context } from '@temporalio/activity';
import type { Db } from '../core/db/client';
import {
  cancelPendingDeliveries,
  nextDueAt,
  type AttemptOutcome,
  type ClaimedDelivery,
  type ClaimRequest,
} from '../core/db/repositories/delivery-queue';
import { findEndpoint, markEndpointFailing, markEndpointHealthy, type WebhookEndpointRow } from '../core/db/repositories/webhook-endpoints';
import type { DeliveryAttemptOutcome, Metrics } from '../core/observability/metrics';
import type { DeliveryDispatcher, LocalDrain } from '../core/temporal/delivery-dispatcher';
import type { WebhookPush } from './webhook-push';

/** How much longer than an attempt's timeout its lease lasts: the outcome's write must fit in it. */
const LEASE_MARGIN_MS = 15_000;

/** How often a drain heartbeats: well inside the workflow's 10 s heartbeat timeout. */
const HEARTBEAT_EVERY_MS = 1_000;

/** How stale a drain's copy of its endpoint may be (its URL, whether it still exists); its keys come with each claim. */
const ENDPOINT_REFRESH_MS = 1_000;

/**
 * How long a drain trusts the next due time it read, kept up to date with the retries it schedules
 * itself: read each time the queue went idle, it cost a statement per event at a steady rate.
 * What the drain cannot see come due (a lease another worker left to lapse) waits for a later read:
 * at most this long while the drain is busy, the linger time while it is idle.
 */
const NEXT_DUE_REFRESH_MS = 1_000;

export interface DrainDeps {
  db: Db;
  dispatcher: DeliveryDispatcher;
  metrics: Metrics;
  push: WebhookPush;
  /** Claims due rows (batched with other drains' claims). */
  claim(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /** Writes an outcome (batched with others); resolves once it is stored. */
  record(outcome: AttemptOutcome): Promise<void>;
  /** Disables the endpoint and logs why. */
  disable(endpoint: WebhookEndpointRow, reason: string): Promise<void>;
  retryScheduleMs: readonly number[];
  attemptTimeoutMs: number;
  maxInFlight: number;
  disableAfterMs: number;
  lingerMs: number;
  maxDrainMs: number;
}

/** Whether the endpoint is gone or switched off, so its queue is to be closed. */
function isClosed(endpoint: WebhookEndpointRow | undefined): boolean {
  return !endpoint || !!endpoint.deletedAt || !!endpoint.disabledAt;
}

export class EndpointDrain {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly deadline: number;
  private local: LocalDrain;
  attempted = 0;
  private beatAt = 0;
  /** The endpoint as last read, and when; `stale` forces the next read (this drain disabled it). */
  private endpoint: WebhookEndpointRow | undefined;
  private endpointReadAt = 0;
  private stale = false;
  /** The endpoint's health as this drain last wrote it: failing since a time, or healthy. */
  private health: Date | 'healthy' | undefined;
  /** Whether the last claim filled every free slot: more rows are probably due. */
  private more = true;
  /** When the queue's next row not in flight is due (null: none), and when that was read. */
  private nextDue: { at: number | null; readAt: number } | undefined;
  /**
   * Rows were queued (or the endpoint deleted) after this drain last looked: a drain that ends
   * with this set tells its workflow to drain again, since the notice reached this drain and no
   * one else.
   */
  noticeLeft = false;

  constructor(
    private readonly deps: DrainDeps,
    private readonly ctx: Context,
    private readonly endpointId: string,
    /** Names this drain's leases: an outcome whose lease another drain took over writes its attempt only. */
    private readonly owner: string,
  ) {
    this.deadline = Date.now() + deps.maxDrainMs;
    this.local = deps.dispatcher.openDrain(endpointId);
  }

  /** Drains until the time is up or the queue stays idle; true when the queue was closed. */
  async run(): Promise<boolean> {
    try {
      for (;;) {
        this.beat();
        const timeLeft = this.deadline - Date.now();
        const stopping = timeLeft <= 0 || this.ctx.cancellationSignal.aborted || this.deps.dispatcher.stopping;
        const free = this.deps.maxInFlight - this.inFlight.size;
        // Left for the next round while no slot is free, so a deletion's notice is never lost.
        const noticed = !stopping && free > 0 && this.local.takeNotice();
        // Claim for new rows (a notice), or for a queue that had more when last claimed, in batches
        // of at least half the slots while some are busy. A claim that came back short found every
        // due row: until a notice or the time of the next due row, another would find none, and
        // each wake-up paid for that empty claim.
        const worthClaiming = noticed || (this.more && (this.inFlight.size === 0 || free >= Math.ceil(this.deps.maxInFlight / 2)));
        if (!stopping && free > 0 && worthClaiming) {
          const endpoint = await this.currentEndpoint();
          if (!endpoint || isClosed(endpoint)) return this.close(endpoint);
          const rows = await this.deps.claim({
            endpointId: endpoint.id,
            limit: free,
            leaseMs: this.deps.attemptTimeoutMs + LEASE_MARGIN_MS,
            owner: this.owner,
          });
          this.more = rows.length === free;
          // A due time already passed named rows this claim has just taken or found gone.
          if (rows.length > 0 && this.nextDue && this.nextDue.at !== null && this.nextDue.at <= Date.now()) this.nextDue = undefined;
          for (const row of rows) this.start(row, endpoint);
          if (rows.length > 0) continue;
          // A notice that brought no rows may be the endpoint's deletion, which cancels its rows
          // and notifies: read it afresh. Reading on every notice cost a statement per event.
          if (noticed) {
            this.stale = true;
            const fresh = await this.currentEndpoint();
            if (isClosed(fresh)) return this.close(fresh);
          }
        }
        if (this.inFlight.size > 0) {
          // Until an attempt ends or new rows arrive.
          await this.waitBeating(HEARTBEAT_EVERY_MS);
          continue;
        }
        if (stopping) return false;
        const next = await this.nextDueTime();
        const untilNext = next === null ? Infinity : next - Date.now();
        if (untilNext <= 0) {
          this.more = true;
          // Claimed now; if the claim finds nothing after all, the next round reads the time afresh.
          this.nextDue = undefined;
          continue;
        }
        // Woken by a notice, which the next round takes.
        if (await this.waitBeating(Math.min(this.deps.lingerMs, timeLeft, untilNext))) continue;
        if (untilNext <= this.deps.lingerMs && untilNext <= timeLeft) {
          this.more = true;
          continue;
        }
        // Idle: leave the registry first, then look once more, so a row committed in between is
        // either seen here or its notice signals the workflow.
        this.local.close();
        const late = await nextDueAt(this.deps.db, this.endpointId);
        if (!late || late.getTime() > Date.now()) return false;
        this.local = this.deps.dispatcher.openDrain(this.endpointId);
        this.more = true;
        this.nextDue = undefined;
      }
    } finally {
      this.noticeLeft = this.local.takeNotice();
      this.local.close();
      await this.settleInFlight();
    }
  }

  private start(row: ClaimedDelivery, endpoint: WebhookEndpointRow): void {
    this.attempted++;
    const running: Promise<void> = this.send(row, endpoint)
      .catch((err: unknown) => {
        // The outcome could not be written, or the push not signed (a signing key this worker
        // cannot open): the row keeps its lease, which lapses, and the attempt is made again (the
        // receiver deduplicates by event id).
        this.ctx.log.warn('a delivery attempt was not recorded; it is retried when its lease lapses', { deliveryId: row.id, err });
      })
      .finally(() => {
        this.inFlight.delete(running);
        this.local.nudge();
      });
    this.inFlight.add(running);
  }

  /** One attempt and what it decides: delivered, retried on the schedule, failed, or the endpoint disabled. */
  private async send(row: ClaimedDelivery, endpoint: WebhookEndpointRow): Promise<void> {
    const attempt = row.attemptsMade + 1;
    const result = await this.deps.push({
      endpoint,
      signingKeys: row.signingKeys,
      event: row.event,
      deliveryId: row.id,
      timeoutMs: this.deps.attemptTimeoutMs,
    });
    const outcome: AttemptOutcome = { deliveryId: row.id, owner: this.owner, attempt, ...result, status: 'pending', nextAttemptAt: null };
    let counted: DeliveryAttemptOutcome;
    if (result.succeeded) {
      outcome.status = 'succeeded';
      counted = 'delivered';
      if (this.health !== 'healthy') {
        if (this.health || endpoint.failingSince) await markEndpointHealthy(this.deps.db, endpoint.id);
        this.health = 'healthy';
      }
    } else if (result.statusCode === 410) {
      // The receiver says it is gone for good: stop pushing to it until the customer enables it again.
      outcome.status = 'failed';
      counted = 'gone';
      await this.disable(endpoint, 'the receiver answered 410 Gone');
    } else {
      if (!(this.health instanceof Date)) this.health = await markEndpointFailing(this.deps.db, endpoint.id);
      const failingSince = this.health;
      const pause = this.deps.retryScheduleMs[attempt - 1];
      if (Date.now() - failingSince.getTime() >= this.deps.disableAfterMs) {
        outcome.status = 'failed';
        counted = 'gone';
        await this.disable(endpoint, `every attempt failed since ${failingSince.toISOString()}`);
      } else if (pause === undefined) {
        outcome.status = 'failed';
        counted = 'failed';
      } else {
        outcome.nextAttemptAt = new Date(Date.now() + pause);
        counted = 'failed';
        if (this.nextDue) this.nextDue.at = Math.min(this.nextDue.at ?? Infinity, outcome.nextAttemptAt.getTime());
      }
    }
    await this.deps.record(outcome);
    this.deps.metrics.deliveryAttempts.inc({ outcome: counted });
    this.deps.metrics.deliveryDuration.observe({ outcome: counted }, result.durationMs / 1000);
  }

  private async disable(endpoint: WebhookEndpointRow, reason: string): Promise<void> {
    await this.deps.disable(endpoint, reason);
    // The next round reads it again and closes the queue.
    this.stale = true;
  }

  /** Ends the drain of a deleted or disabled endpoint: its pending rows are cancelled, its queue closed. */
  private async close(endpoint: WebhookEndpointRow | undefined): Promise<true> {
    await this.settleInFlight();
    // No notice: the queue's only listener is this drain's workflow, which ends with this answer; a
    // notice arriving after it would start the workflow again for nothing.
    if (endpoint) await cancelPendingDeliveries(this.deps.db, endpoint.id);
    return true;
  }

  private async nextDueTime(): Promise<number | null> {
    if (!this.nextDue || Date.now() - this.nextDue.readAt >= NEXT_DUE_REFRESH_MS) {
      const readAt = Date.now();
      const at = await nextDueAt(this.deps.db, this.endpointId);
      this.nextDue = { at: at?.getTime() ?? null, readAt };
    }
    return this.nextDue.at;
  }

  private async currentEndpoint(): Promise<WebhookEndpointRow | undefined> {
    if (!this.endpoint || this.stale || Date.now() - this.endpointReadAt >= ENDPOINT_REFRESH_MS) {
      const previousUrl = this.endpoint?.url;
      this.endpoint = await findEndpoint(this.deps.db, this.endpointId);
      this.endpointReadAt = Date.now();
      // A new URL is a new receiver: the failures of the old one (cleared in the row by the update)
      // must not count toward disabling it.
      if (previousUrl !== undefined && this.endpoint?.url !== previousUrl) this.health = undefined;
      this.stale = false;
    }
    return this.endpoint;
  }

  /** At most once a second: the SDK throttles what it sends, but each call still encodes its details. */
  private beat(): void {
    if (Date.now() - this.beatAt < HEARTBEAT_EVERY_MS) return;
    this.ctx.heartbeat({ attempted: this.attempted });
    this.beatAt = Date.now();
  }

  /**
   * Waits up to `ms` for a wake-up, in slices, heartbeating between them: whatever the drain waits
   * for (a receiver hanging until its timeout, the linger), a silent drain would be taken for dead.
   */
  private async waitBeating(ms: number): Promise<boolean> {
    for (const until = Date.now() + ms; ;) {
      if (await this.local.wait(Math.min(HEARTBEAT_EVERY_MS, until - Date.now()))) return true;
      this.beat();
      if (Date.now() >= until) return false;
    }
  }

  private async settleInFlight(): Promise<void> {
    while (this.inFlight.size > 0) await this.waitBeating(HEARTBEAT_EVERY_MS);
  }
}
