/**
 * Removes what processes killed mid-upload left in the media store: the multipart uploads of an
 * S3 write cut short (a write that fails while its process lives aborts its own), and uploads
 * stored under the staging prefix but never moved to their record (a refusal while the process
 * lives removes its own). Run by every worker: the sweeps are idempotent, and a deployment always
 * has a worker. What is younger than the age is left alone, since it may belong to an upload still
 * running in another process.
 */
import type { Logger } from '../logger';

export interface SweepableStore {
  /** S3 only: multipart uploads begun before `olderThan`. */
  sweepIncompleteUploads?(olderThan: Date): Promise<number>;
  removeStagedBefore(olderThan: Date): Promise<number>;
}

export function startOrphanSweep(store: SweepableStore, opts: { ageMs: number; intervalMs: number; logger: Logger }): { stop(): void } {
  const sweep = async () => {
    try {
      const olderThan = new Date(Date.now() - opts.ageMs);
      const aborted = (await store.sweepIncompleteUploads?.(olderThan)) ?? 0;
      if (aborted > 0) opts.logger.info({ aborted }, 'aborted multipart uploads left by stopped processes');
      const staged = await store.removeStagedBefore(olderThan);
      if (staged > 0) opts.logger.info({ staged }, 'removed staged uploads left by stopped processes');
    } catch (err) {
      // The store being away for a while is reported by the requests that need it; try next time.
      opts.logger.warn({ err }, 'could not sweep what stopped uploads left in the media store');
    }
  };
  const timer = setInterval(() => void sweep(), opts.intervalMs);
  timer.unref();
  void sweep();
  return { stop: () => clearInterval(timer) };
}
