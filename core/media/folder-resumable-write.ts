/**
 * The folder store's resumable write: the file grows under a name derived from its key
 * (`<key>.fetch-partial`), so the next attempt, in this process or another on the machine, finds
 * it. On resume the file is cut back to the checkpoint (what came after it may be torn) and written
 * on from there; at the end it is renamed into place. A failed write leaves the partial file for
 * the next attempt; discard removes it.
 *
 * What a checkpoint promises depends on what the next attempt can meet. A worker killed or crashed
 * loses nothing the kernel took from it: the bytes written are on the disk (direct writes) or in the
 * page cache, and any process on the machine reads them back until it restarts. Only a restart of
 * the machine (a power cut, a kernel crash) can lose bytes not yet flushed to the disk or out of
 * its own cache. So a checkpoint names the boot it was
 * made in (Linux's boot id) and is given as soon as the bytes are written; a resume in a later boot
 * starts over, and a resume in the same boot first flushes the partial file (fdatasync), which also
 * reports a write-back error that happened meanwhile. Flushing during the fetch instead cost a 1 GiB
 * fetch 2.2 s against 1.8 s, as each flush forced to the disk what the page cache would have
 * absorbed. Where there is no boot id (not Linux), a checkpoint is given only for bytes flushed.
 */
import { readFileSync } from 'node:fs';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { writeAfter } from './folder-sink';
import type { ResumableWrite, ResumableWriteOptions, ResumePoint } from './resumable-write';
import type { StoredMedia } from './storage';

export interface FolderResumableSettings {
  /** Least time between two checkpoints. */
  checkpointEveryMs: number;
  /**
   * The machine's boot id, which scopes checkpoints to the boot that made them; undefined makes
   * every checkpoint wait for a flush. Read from the system unless given (tests).
   */
  bootId?: string | undefined;
  /** Writes around the page cache (the store has found that the folder takes them). */
  direct?: boolean;
}

/** Four checkpoints a second: a fast fetch (1 GiB in a couple of seconds) has one in Temporal well before its midpoint. */
export const FOLDER_CHECKPOINT_EVERY_MS = 250;

let machineBootId: string | null | undefined;

/** This boot's id (Linux), or undefined where the system has none. */
export function currentBootId(): string | undefined {
  if (machineBootId === undefined) {
    try {
      machineBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      machineBootId = null;
    }
  }
  return machineBootId ?? undefined;
}

export const partialFileOf = (target: string) => `${target}.fetch-partial`;

export async function beginFolderResumableWrite(
  target: string,
  resume: ResumePoint | undefined,
  settings: FolderResumableSettings,
): Promise<ResumableWrite> {
  const partial = partialFileOf(target);
  await mkdir(path.dirname(target), { recursive: true });
  const bootId = 'bootId' in settings ? settings.bootId : currentBootId();
  let offset = 0;
  let lostResume: string | undefined;
  if (resume && resume.offset > 0) {
    lostResume = await unusablePartial(partial, resume, bootId);
    if (!lostResume) offset = resume.offset;
  }
  return {
    get offset() {
      return offset;
    },
    lostResume,
    restart() {
      offset = 0;
    },
    async complete(rest: Readable | AsyncIterable<Uint8Array>, opts: ResumableWriteOptions): Promise<StoredMedia> {
      // On failure the partial file stays for the next attempt.
      const file = await open(partial, offset > 0 ? 'r+' : 'w');
      const stored = await writeAfter(file, partial, offset, rest, {
        ...opts,
        direct: settings.direct,
        checkpoints: { everyMs: settings.checkpointEveryMs, bootId, onCheckpoint: (point) => opts.onCheckpoint?.(point) },
      });
      await rename(partial, target);
      return stored;
    },
  };
}

/** Why the partial file cannot be resumed from `resume`, or undefined when it can. */
async function unusablePartial(partial: string, resume: ResumePoint, bootId: string | undefined): Promise<string | undefined> {
  if (resume.bootId !== undefined && resume.bootId !== bootId)
    return 'the machine restarted since the interrupted attempt, so the part it stored may not all have reached the disk';
  let file: FileHandle;
  try {
    file = await open(partial, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'the part stored by the interrupted attempt is gone';
    throw err;
  }
  try {
    const { size } = await file.stat();
    if (size < resume.offset)
      return `the part stored by the interrupted attempt holds ${size} bytes, fewer than its checkpoint's ${resume.offset}`;
    if (resume.bootId === undefined) return undefined;
    // Written in this boot but maybe not flushed: flushed now, and a write-back that failed since is reported here.
    try {
      await file.datasync();
    } catch (err) {
      return `the part stored by the interrupted attempt could not be flushed to the disk (${(err as Error).message})`;
    }
    return undefined;
  } finally {
    await file.close();
  }
}

export async function discardFolderResumableWrite(target: string): Promise<void> {
  await rm(partialFileOf(target), { force: true });
}
