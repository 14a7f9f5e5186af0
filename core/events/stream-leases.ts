/**
 * The cap on open event streams, per credential and per customer, held across every gateway and
 * core: each open stream holds a lease row in Postgres (../db/repositories/stream-leases.ts). A core
 * process renews the leases of all its streams together, in one statement every third of the
 * lease's lifetime, so a busy process spends one write per interval, not one per stream; a process
 * that dies stops renewing, and its streams' slots come back when their leases lapse.
 */
import type { Db } from '../db/client';
import { dropStreamLease, renewStreamLeases, takeStreamLease, type LeaseRefusal, type StreamCaps } from '../db/repositories/stream-leases';
import { ApiError } from '../errors';
import { newId } from '../ids';
import type { Logger } from '../logger';

export interface StreamLeaseSettings extends StreamCaps {
  /** How long a lease outlives its last renewal (SSE_STREAM_LEASE_MS). */
  leaseMs: number;
}

/** Who a stream counts against: an API key, or a console session (whose streams have no key). */
export type StreamCredential = { apiKeyId: string } | { sessionId: string };

export function credentialKey(credential: StreamCredential): string {
  return 'sessionId' in credential ? `session:${credential.sessionId}` : `key:${credential.apiKeyId}`;
}

/** A lease held by an open stream. */
export interface StreamLease {
  /** Aborted when the lease lapsed before it could be renewed: the stream should end (its client reconnects). */
  readonly lost: AbortSignal;
  /** Ends the lease; safe to call more than once. */
  release(): Promise<void>;
}

/** The refusal of a stream beyond a cap: 2002, HTTP 429, with the wait in Retry-After. */
export function streamCapError(refusal: LeaseRefusal): ApiError {
  const retryAfterSeconds = Math.max(1, Math.ceil(refusal.soonestExpiryMs / 1000));
  const whose = refusal.scope === 'credential' ? 'this API key (or console session)' : 'this customer';
  return new ApiError(
    2002,
    `too many open event streams: ${whose} has ${refusal.open} of at most ${refusal.cap}; close one, or retry after ${retryAfterSeconds} s`,
    { retryAfterSeconds, data: { scope: refusal.scope, open: refusal.open, limit: refusal.cap } },
  );
}

export class StreamLeases {
  private readonly held = new Map<string, AbortController>();
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;

  constructor(private readonly deps: { db: Db; logger: Logger; settings: StreamLeaseSettings }) {}

  /** Takes a lease for a new stream of `customerId`, or throws 2002 when a cap is reached. */
  async acquire(customerId: string, credential: StreamCredential): Promise<StreamLease> {
    const { db, settings } = this.deps;
    const id = newId('sse');
    const refusal = await takeStreamLease(db, { id, customerId, credential: credentialKey(credential), ttlMs: settings.leaseMs }, settings);
    if (refusal) throw streamCapError(refusal);
    const lost = new AbortController();
    this.held.set(id, lost);
    this.schedule();
    let released = false;
    return {
      lost: lost.signal,
      release: async () => {
        if (released) return;
        released = true;
        this.held.delete(id);
        if (this.held.size === 0) this.stop();
        try {
          await dropStreamLease(db, id);
        } catch (err) {
          // The slot comes back when the lease lapses; the stream has ended either way.
          this.deps.logger.warn({ err, leaseId: id }, 'could not end an event stream lease; it lapses by itself');
        }
      },
    };
  }

  /** Streams this process holds leases for, for tests and metrics. */
  get size(): number {
    return this.held.size;
  }

  private schedule(): void {
    if (this.timer) return;
    // A third of the lifetime: two renewals can fail (a database blip) before a lease lapses.
    this.timer = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.deps.settings.leaseMs / 3)));
    // Leases must not keep a stopping process alive; its streams end (and release) on their own.
    this.timer.unref();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private renew(): Promise<void> {
    // One renewal at a time: a slow database must not pile statements up behind each other.
    this.renewing ??= this.renewOnce().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    const ids = [...this.held.keys()];
    if (ids.length === 0) return;
    let kept: Set<string>;
    try {
      kept = await renewStreamLeases(this.deps.db, ids, this.deps.settings.leaseMs);
    } catch (err) {
      this.deps.logger.error({ err, leases: ids.length }, 'could not renew event stream leases; trying again at the next interval');
      return;
    }
    for (const id of ids) {
      const lost = this.held.get(id);
      if (!lost || kept.has(id)) continue;
      // Its slot may already be another stream's: ending this one keeps the cap true, and the
      // client resumes with Last-Event-ID, missing nothing.
      this.deps.logger.warn({ leaseId: id }, 'an event stream lease lapsed before it was renewed; ending the stream');
      this.held.delete(id);
      lost.abort();
    }
    if (this.held.size === 0) this.stop();
  }
}
