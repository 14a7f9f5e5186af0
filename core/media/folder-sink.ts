/**
 * The folder store's one stage between a source and its file. It counts what arrives against the
 * cap, keeps the file's head and hands the bytes to an output, which writes them at explicit
 * positions and has them hashed; a resumable write also gets checkpoints from it.
 *
 * Why one stage: every stream stage costs the main thread a few ticks and promises per socket
 * chunk (16 per MiB), each of which runs the async hooks that Temporal's context storage keeps on
 * in our processes. A meter, a writer and a hash fed with copies measured 0.5 s per GiB more than
 * this (bench/README.md).
 *
 * Two outputs, the first whenever the folder takes it (docs/decisions/media-storage.md):
 * - DirectOutput (direct-file-output.ts) writes around the page cache (O_DIRECT) from aligned
 *   slots of shared memory, which the hashing thread reads in place. On our virtual machines the
 *   page cache's cost per new page swung tenfold from one write to the next (0.27 to 4.0 s of CPU
 *   per GiB, bench/README.md); a direct write costs the same each time, and a 1 GiB video need not
 *   push a gigabyte of other files out of the cache.
 * - PageCacheOutput writes batches of at least WRITE_BUFFER_BYTES through the page cache and the
 *   hashing thread reads the file back: where the file system refuses direct writes, or when all of
 *   the process's slots are taken.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ResumePoint } from './resumable-write';
import { DirectOutput, type FileOutput } from './direct-file-output';
import { FollowedFileSha256 } from './sha256-thread';
import { alignDown, takeRing } from './staging-slots';
import { HEAD_BYTES, MediaTooLargeError } from './storage';
import type { StoredMedia, WriteOptions } from './written';

/**
 * What a write through the page cache may buffer ahead of the disk, and the least it writes at once.
 * Node's default (16 KiB) let one socket chunk through at a time, so the disk write and the next
 * chunk's parsing took turns (a bare receiver of 1 GiB: 2.5 s with the default, 1.4 s with 1 MiB;
 * bench/upload). Every write also wakes a thread of libuv's pool, which costs the main thread 60 µs
 * and more on our virtual machines: 4 MiB makes it 256 writes per GiB.
 */
export const WRITE_BUFFER_BYTES = 4 * 1024 * 1024;

export interface FileCheckpoints {
  /** Least time between two checkpoints. */
  everyMs: number;
  /** The boot a checkpoint is scoped to, given once its bytes are written; undefined: once they are flushed. */
  bootId: string | undefined;
  onCheckpoint(point: ResumePoint): void;
}

class MeteredFileSink extends Writable {
  private readonly head: Buffer[];
  private headSize: number;
  /** Bytes of the file, the stored prefix included: what the cap, the progress and the result count. */
  private size: number;
  private readonly output: FileOutput;
  private flushing: Promise<void> | undefined;
  private flushFailure: Error | undefined;
  private lastCheckpointAt = Date.now();

  /**
   * `file` is open for writing and holds `from` bytes already, whose head (up to HEAD_BYTES) is
   * `storedHead`; what arrives goes to the output after them. The output calls back after each write.
   */
  constructor(
    private readonly file: FileHandle,
    from: number,
    storedHead: Buffer,
    makeOutput: (written: () => void) => FileOutput,
    private readonly opts: Pick<WriteOptions, 'maxBytes' | 'onProgress'> & { checkpoints?: FileCheckpoints },
  ) {
    super({ highWaterMark: WRITE_BUFFER_BYTES });
    this.size = from;
    this.head = [storedHead];
    this.headSize = storedHead.length;
    this.output = makeOutput(() => this.checkpoint());
  }

  /** The file's size, SHA-256 and head, once the stream has finished. */
  async stored(): Promise<StoredMedia> {
    if (!this.writableFinished) throw new Error('the file sink has not finished');
    return { sizeBytes: this.size, sha256: await this.output.digest(this.size), head: Buffer.concat(this.head) };
  }

  /** Gives up a write that is not to be stored after all (its file failed to close, say); nothing once its hash was asked for. */
  abandon(): void {
    this.output.abandon();
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, done: (err?: Error | null) => void): void {
    this.take(chunks.map((c) => c.chunk)).then(() => done(), done);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.take([chunk]).then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    // The rename that follows needs no flush of its own (a plain write has none either); a flush
    // still running must end first, so the file is not closed under it.
    this.output
      .finish()
      .then(() => this.flushing)
      .then(() => done(this.flushFailure), done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    // A finished sink is destroyed too (autoDestroy): its hash is still to be asked for.
    if (err || !this.writableFinished) this.output.abandon();
    done(err);
  }

  private async take(chunks: Buffer[]): Promise<void> {
    if (this.flushFailure) throw this.flushFailure;
    for (const chunk of chunks) {
      if (this.size + chunk.length > this.opts.maxBytes) throw new MediaTooLargeError(this.opts.maxBytes);
      this.size += chunk.length;
      if (this.headSize < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - this.headSize);
        this.head.push(part);
        this.headSize += part.length;
      }
      const taking = this.output.take(chunk);
      if (taking) await taking;
    }
    this.opts.onProgress?.(this.size);
  }

  private checkpoint(): void {
    const checkpoints = this.opts.checkpoints;
    if (!checkpoints || this.flushing || Date.now() - this.lastCheckpointAt < checkpoints.everyMs) return;
    this.lastCheckpointAt = Date.now();
    const offset = this.output.position;
    if (checkpoints.bootId !== undefined) return checkpoints.onCheckpoint({ offset, bootId: checkpoints.bootId });
    this.flushing = this.file
      .datasync()
      .then(() => checkpoints.onCheckpoint({ offset }))
      .catch((err: Error) => {
        // Reported by the next write, or at the end: the stream fails with it.
        this.flushFailure = err;
      })
      .finally(() => {
        this.flushing = undefined;
      });
  }
}

/** Batches written through the page cache, hashed by reading the file back. */
class PageCacheOutput implements FileOutput {
  private readonly hash: FollowedFileSha256;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly file: FileHandle,
    path: string,
    public position: number,
    private readonly written: () => void,
  ) {
    this.hash = new FollowedFileSha256(path);
    this.hash.written(position);
  }

  take(chunk: Buffer): Promise<void> | undefined {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    return this.pendingBytes >= WRITE_BUFFER_BYTES ? this.writeOut() : undefined;
  }

  finish(): Promise<void> {
    return this.writeOut();
  }

  digest(size: number): Promise<string> {
    return this.hash.digest(size);
  }

  abandon(): void {
    this.hash.abandon();
  }

  private async writeOut(): Promise<void> {
    let buffers = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    while (buffers.length > 0) {
      const { bytesWritten } = await this.file.writev(buffers, this.position);
      this.position += bytesWritten;
      buffers = dropWritten(buffers, bytesWritten);
    }
    this.hash.written(this.position);
    this.written();
  }
}

/**
 * Writes `source` into `file` (open for writing at `path`) after its first `from` bytes, cutting
 * anything beyond them off first, and closes the file: its size, SHA-256 and head. `direct` asks for
 * direct writes, which the caller has found the folder to take. However it ends, the file is closed
 * and its hash given up unless asked for; the file itself is the caller's.
 */
export async function writeAfter(
  file: FileHandle,
  path: string,
  from: number,
  source: Readable | AsyncIterable<Uint8Array>,
  opts: WriteOptions & { checkpoints?: FileCheckpoints; direct?: boolean },
): Promise<StoredMedia> {
  let sink: MeteredFileSink | undefined;
  let ring = opts.direct ? takeRing() : undefined;
  let direct: FileHandle | undefined;
  try {
    try {
      // What the file holds already is its head, and part of its size and hash; the rest follows it.
      const storedHead = Buffer.alloc(Math.min(HEAD_BYTES, from));
      const storedTail = Buffer.alloc(ring ? from - alignDown(from) : 0);
      if (from > 0) {
        await file.truncate(from);
        await file.read(storedHead, 0, storedHead.length, 0);
        await file.read(storedTail, 0, storedTail.length, from - storedTail.length);
      }
      let makeOutput = (written: () => void): FileOutput => new PageCacheOutput(file, path, from, written);
      if (ring) {
        direct = await open(path, constants.O_WRONLY | constants.O_DIRECT);
        const [handle, slots] = [direct, ring];
        ring = undefined; // the output's from here on
        makeOutput = (written) => new DirectOutput(handle, path, from, storedTail, slots, written);
      }
      sink = new MeteredFileSink(file, from, storedHead, makeOutput, opts);
      await pipeline(source, sink, ...(opts.signal ? [{ signal: opts.signal }] : []));
    } finally {
      ring?.release();
      await direct?.close();
      await file.close();
    }
    return await sink.stored();
  } catch (err) {
    sink?.abandon();
    throw err;
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
