/**
 * Aborts the multipart uploads a process killed mid-write left in the bucket (a write that fails
 * while its process lives aborts its own). Run by every worker: the sweeps are idempotent, and a
 * deployment always has a worker. Uploads younger than the age are left alone, since they may
 * belong to a write still running in another process.
 */
import type { Logger } from '../logger';

export interface SweepableStore {
  sweepIncompleteUploads(olderThan: Date): Promise<number>;
}

export function startOrphanSweep(store: SweepableStore, opts: { ageMs: number; intervalMs: number; logger: Logger }): { stop(): void } {
  const sweep = async () => {
    try {
      const aborted = await store.sweepIncompleteUploads(new Date(Date.now() - opts.ageMs));
      if (aborted > 0) opts.logger.info({ aborted }, 'aborted multipart uploads left by stopped processes');
    } catch (err) {
      // The store being away for a while is reported by the requests that need it; try next time.
      opts.logger.warn({ err }, 'could not sweep unfinished multipart uploads');
    }
  };
  const timer = setInterval(() => void sweep(), opts.intervalMs);
  timer.unref();
  void sweep();
  return { stop: () => clearInterval(timer) };
}
