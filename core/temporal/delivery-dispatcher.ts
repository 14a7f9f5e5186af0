/**
 * Runs in every worker process and gets each endpoint's queued deliveries to its queue workflow
 * without a Temporal call per event:
 * - a notice for an endpoint whose drain runs in this process pokes that drain, in memory;
 * - otherwise it signals the endpoint's workflow (starting it when it has ended), at most once per
 *   `wakeCoalesceMs` for each endpoint, with one trailing signal for notices inside that window;
 * - a periodic sweep wakes every queue with rows overdue and unclaimed, which catches a notice lost
 *   while Postgres restarted or a worker died between a notice and its signal.
 */
import type { Client } from '@temporalio/client';
import type { Database, Db } from '../db/client';
import { overdueQueues } from '../db/repositories/delivery-queue';
import { DELIVERIES_CHANNEL, parseDeliveryNotice } from '../events/delivery-channel';
import type { Logger } from '../logger';
import { wakeEndpointDeliveries } from './client';

export interface DispatcherSettings {
  taskQueue: string;
  /** A queue is signalled at most once in this window; notices inside it share one trailing signal. */
  wakeCoalesceMs: number;
  /** How often every queue's overdue rows are looked for. */
  sweepIntervalMs: number;
  /** Rows due this long and unclaimed count as overdue (their drain should have had them by then). */
  sweepGraceMs: number;
}

/** A drain's side of the registry: woken when its endpoint gets rows, or by its own attempts ending. */
export interface LocalDrain {
  /** Resolves true when woken (now or since the last wait), false after `ms`. */
  wait(ms: number): Promise<boolean>;
  /** New rows were queued: wakes the drain and leaves a notice for takeNotice. */
  poke(): void;
  /** Something the drain waits for happened (an attempt ended): wakes it without a notice. */
  nudge(): void;
  /** Whether new rows were queued since the last call. */
  takeNotice(): boolean;
  /** Leaves the registry: notices for the endpoint go to its workflow again. */
  close(): void;
}

class Drain implements LocalDrain {
  private woken = false;
  private noticed = false;
  private waiter: (() => void) | undefined;

  constructor(private readonly onClose: () => void) {}

  poke(): void {
    this.noticed = true;
    this.nudge();
  }

  nudge(): void {
    this.woken = true;
    const wake = this.waiter;
    this.waiter = undefined;
    wake?.();
  }

  takeNotice(): boolean {
    const noticed = this.noticed;
    this.noticed = false;
    return noticed;
  }

  wait(ms: number): Promise<boolean> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          this.waiter = undefined;
          resolve(false);
        },
        Math.max(0, ms),
      );
      this.waiter = () => {
        clearTimeout(timer);
        this.woken = false;
        resolve(true);
      };
    });
  }

  close(): void {
    this.onClose();
  }
}

export class DeliveryDispatcher {
  private readonly drains = new Map<string, Drain>();
  private readonly lastWake = new Map<string, number>();
  private readonly trailing = new Map<string, NodeJS.Timeout>();
  private unlisten: (() => Promise<void>) | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  /**
   * Wake-up signals still in flight. close() waits for them: a Temporal call left retrying when
   * its connection closes throws from its retry timer ("Channel has been shut down"), out of reach
   * of any catch, and takes the process down with it.
   */
  private readonly signalling = new Set<Promise<void>>();
  private closed = false;
  private shuttingDown = false;

  constructor(
    private readonly deps: {
      db: Db;
      listen: Database['listen'];
      temporalClient: () => Promise<Client>;
      logger: Logger;
      settings: DispatcherSettings;
    },
  ) {}

  /** Listens for notices and sweeps once at once (rows left by a previous run), then periodically. */
  async start(): Promise<void> {
    this.unlisten = await this.deps.listen(DELIVERIES_CHANNEL, (payload) => this.onNotice(payload));
    this.sweeper = setInterval(() => void this.sweep(), this.deps.settings.sweepIntervalMs);
    this.sweeper.unref();
    void this.sweep();
  }

  /** Registers a drain of `endpointId` running in this process; one at a time per endpoint. */
  openDrain(endpointId: string): LocalDrain {
    const drain: Drain = new Drain(() => {
      if (this.drains.get(endpointId) === drain) this.drains.delete(endpointId);
    });
    this.drains.set(endpointId, drain);
    return drain;
  }

  /** True once the worker is stopping: drains stop claiming, finish what is in flight and return. */
  get stopping(): boolean {
    return this.shuttingDown;
  }

  beginShutdown(): void {
    this.shuttingDown = true;
    for (const drain of this.drains.values()) drain.poke();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const timer of this.trailing.values()) clearTimeout(timer);
    this.trailing.clear();
    await this.unlisten?.();
    await Promise.allSettled([...this.signalling]);
  }

  private onNotice(payload: string): void {
    const notice = parseDeliveryNotice(payload);
    if (!notice) {
      this.deps.logger.warn({ payload, channel: DELIVERIES_CHANNEL }, 'ignored a malformed delivery notice');
      return;
    }
    if (notice.taskQueue !== this.deps.settings.taskQueue) return;
    this.wake(notice.customerId, notice.endpointId);
  }

  /** Pokes the local drain, or signals the workflow within the coalescing window. */
  private wake(customerId: string, endpointId: string): void {
    if (this.closed) return;
    const local = this.drains.get(endpointId);
    if (local) {
      local.poke();
      return;
    }
    const since = Date.now() - (this.lastWake.get(endpointId) ?? 0);
    const window = this.deps.settings.wakeCoalesceMs;
    if (since >= window) {
      this.signal(customerId, endpointId);
      return;
    }
    if (this.trailing.has(endpointId)) return;
    const timer = setTimeout(() => {
      this.trailing.delete(endpointId);
      this.wake(customerId, endpointId);
    }, window - since);
    timer.unref();
    this.trailing.set(endpointId, timer);
  }

  private signal(customerId: string, endpointId: string): void {
    this.lastWake.set(endpointId, Date.now());
    const signalling: Promise<void> = this.signalWithStart(customerId, endpointId)
      .catch((err: unknown) => {
        // The rows stay queued; the sweep wakes the queue once Temporal answers again.
        this.lastWake.delete(endpointId);
        this.deps.logger.warn({ err, endpointId }, 'could not wake an endpoint delivery queue; the sweep will');
      })
      .finally(() => this.signalling.delete(signalling));
    this.signalling.add(signalling);
  }

  private async signalWithStart(customerId: string, endpointId: string): Promise<void> {
    await wakeEndpointDeliveries(await this.deps.temporalClient(), this.deps.settings.taskQueue, { customerId, endpointId });
  }

  private async sweep(): Promise<void> {
    if (this.closed) return;
    try {
      const overdue = await overdueQueues(this.deps.db, {
        taskQueue: this.deps.settings.taskQueue,
        graceMs: this.deps.settings.sweepGraceMs,
        limit: 1_000,
      });
      for (const q of overdue) if (!this.drains.has(q.endpointId)) this.wake(q.customerId, q.endpointId);
    } catch (err) {
      this.deps.logger.warn({ err }, 'delivery queue sweep failed; trying again at the next interval');
    }
  }
}
