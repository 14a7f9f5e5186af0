/**
 * The folder store's resumable write: the file grows under a name derived from its key
 * (`<key>.fetch-partial`), so the next attempt, in this process or another on the machine, finds
 * it. A checkpoint is given only for bytes flushed to the disk (fdatasync), since a checkpoint
 * that claimed bytes a power cut lost would resume into a file with a hole and a wrong SHA-256.
 * The flush runs beside the writes that follow, so it costs the stream no wait. On resume the file
 * is cut back to the checkpoint (what came after it may be torn) and written on from there; at
 * the end it is renamed into place. A failed write leaves the partial file for the next attempt;
 * discard removes it.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { pipeResumed } from './resumed-stream';
import type { ResumableWrite, ResumableWriteOptions, ResumePoint } from './resumable-write';
import { meter, type StoredMedia } from './storage';

export interface FolderResumableSettings {
  /** Least time between two flushes, each of which gives a checkpoint. */
  checkpointEveryMs: number;
}

/**
 * Four flushes a second: a fast fetch (1 GiB in a couple of seconds) has a checkpoint in Temporal
 * well before its midpoint. Durable checkpoints are not free: a 1 GiB write took about 2.2 s with
 * them against 1.8 s without, whatever the interval, since each flush forces to the disk what the
 * page cache would otherwise have absorbed.
 */
export const FOLDER_CHECKPOINT_EVERY_MS = 250;

/** What a write may buffer ahead of the disk, so waiting chunks go out in one writev. */
const WRITE_BUFFER_BYTES = 1024 * 1024;

export const partialFileOf = (target: string) => `${target}.fetch-partial`;

export async function beginFolderResumableWrite(
  target: string,
  resume: ResumePoint | undefined,
  settings: FolderResumableSettings,
): Promise<ResumableWrite> {
  const partial = partialFileOf(target);
  await mkdir(path.dirname(target), { recursive: true });
  let offset = 0;
  let lostResume: string | undefined;
  if (resume && resume.offset > 0) {
    const size = await stat(partial).then(
      (s) => s.size,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      },
    );
    if (size === undefined) lostResume = 'the part stored by the interrupted attempt is gone';
    else if (size < resume.offset)
      lostResume = `the part stored by the interrupted attempt holds ${size} bytes, fewer than its checkpoint's ${resume.offset}`;
    else offset = resume.offset;
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
      const from = offset;
      const file = await open(partial, from > 0 ? 'r+' : 'w');
      const metered = meter(opts);
      try {
        if (from > 0) await file.truncate(from);
        const prefix = from > 0 ? async () => createReadStream(partial, { start: 0, end: from - 1 }) : undefined;
        const sink = new CheckpointedFileSink(file, from, settings.checkpointEveryMs, (durable) =>
          opts.onCheckpoint?.({ offset: durable }),
        );
        await pipeResumed({ prefix, rest, from, metered: metered.stream, sink, ...(opts.signal ? { signal: opts.signal } : {}) });
      } finally {
        await file.close();
      }
      await rename(partial, target);
      return metered.result();
    },
  };
}

export async function discardFolderResumableWrite(target: string): Promise<void> {
  await rm(partialFileOf(target), { force: true });
}

/** Writes at explicit positions from `position` on, and flushes now and then, reporting what is durable. */
class CheckpointedFileSink extends Writable {
  private flushing: Promise<void> | undefined;
  private flushFailure: Error | undefined;
  private lastFlushAt = Date.now();

  constructor(
    private readonly file: FileHandle,
    private position: number,
    private readonly everyMs: number,
    private readonly onDurable: (offset: number) => void,
  ) {
    super({ highWaterMark: WRITE_BUFFER_BYTES });
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, done: (err?: Error | null) => void): void {
    this.put(chunks.map((c) => c.chunk)).then(() => done(), done);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.put([chunk]).then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    // The rename that follows needs no flush of its own (a plain write has none either); a flush
    // still running must end first, so the file is not closed under it.
    Promise.resolve(this.flushing).then(() => done(this.flushFailure), done);
  }

  private async put(buffers: Buffer[]): Promise<void> {
    if (this.flushFailure) throw this.flushFailure;
    let at = this.position;
    while (buffers.length > 0) {
      const { bytesWritten } = await this.file.writev(buffers, at);
      at += bytesWritten;
      buffers = dropWritten(buffers, bytesWritten);
    }
    this.position = at;
    if (!this.flushing && Date.now() - this.lastFlushAt >= this.everyMs) this.flush();
  }

  private flush(): void {
    const durable = this.position;
    this.lastFlushAt = Date.now();
    this.flushing = this.file
      .datasync()
      .then(() => this.onDurable(durable))
      .catch((err: Error) => {
        // Reported by the next write, or at the end: the stream fails with it.
        this.flushFailure = err;
      })
      .finally(() => {
        this.flushing = undefined;
      });
  }
}

/** What a partial writev left to write. */
function dropWritten(buffers: Buffer[], written: number): Buffer[] {
  const left: Buffer[] = [];
  for (const b of buffers) {
    if (written >= b.length) written -= b.length;
    else {
      left.push(written > 0 ? b.subarray(written) : b);
      written = 0;
    }
  }
  return left;
}
