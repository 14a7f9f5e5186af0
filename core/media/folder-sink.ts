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
 * - DirectOutput writes around the page cache (O_DIRECT) from aligned slots of shared memory, which
 *   the hashing thread reads in place. On our virtual machines the page cache's cost per new page
 *   swung tenfold from one write to the next (0.27 to 4.0 s of CPU per GiB, bench/README.md); a
 *   direct write costs the same each time, and a 1 GiB video need not push a gigabyte of other
 *   files out of the cache.
 * - PageCacheOutput writes batches of at least WRITE_BUFFER_BYTES through the page cache and the
 *   hashing thread reads the file back: where the file system refuses direct writes, or when all of
 *   the process's slots are taken.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ResumePoint } from './resumable-write';
import { FollowedFileSha256 } from './sha256-thread';
import { alignDown, alignUp, DIRECT_ALIGN, SLOT_BYTES, stagingProblem, takeRing, type StagingRing } from './staging-slots';
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

/** Where a sink's bytes go: into the file, and through its hash. */
interface FileOutput {
  /** Bytes of the file written so far, what it held before included. */
  readonly position: number;
  /** Takes a chunk, which the caller may reuse at once; a promise when the next must wait. */
  take(chunk: Buffer): Promise<void> | undefined;
  /** Writes out all it took: the file then holds exactly `position` bytes. */
  finish(): Promise<void>;
  digest(size: number): Promise<string>;
  /** Gives the write up: its hash, and whatever it holds once nothing uses it. */
  abandon(): void;
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
 * Direct writes of one file running at once. With one, the disk waited between two writes for the
 * main thread to see the first one end, and it sees that late while it copies chunks in; a second
 * write already queued keeps the disk busy. More would take more of libuv's pool (four threads, also
 * for DNS lookups and file reads) from the rest of the process.
 */
const WRITES_IN_FLIGHT = 2;

/**
 * Slots of shared memory written around the page cache, in order, WRITES_IN_FLIGHT at a time, and
 * hashed in place by the hashing thread meanwhile. A slot is filled again once both are done with
 * it. Only the last slot is short; its write is padded to the alignment, and the file cut back
 * after it.
 */
class DirectOutput implements FileOutput {
  position: number;
  private readonly hash: FollowedFileSha256;
  /** Where the slot being filled goes in the file: aligned. */
  private slotAt: number;
  private current = 0;
  private fill: number;
  /** Bytes at the start of the current slot that are the file's already (a resumed write's unaligned end). */
  private kept: number;
  /** Per slot: the write and the hash still using it, and who waits for it. */
  private readonly users: number[];
  private readonly waiting: Array<Array<() => void>>;
  /** Full slots waiting for their write, in file order, and the writes running. */
  private readonly queued: Array<{ index: number; at: number; length: number }> = [];
  private writing = 0;
  /** Writes finished ahead of one still running, by where they start; `position` waits for the gap. */
  private readonly finished = new Map<number, number>();
  private nextAt: number;
  private readonly idle: Array<() => void> = [];
  private failure: Error | undefined;

  /** `direct` is open with O_DIRECT on `path`, which holds `from` bytes ending in `storedTail` (from the last aligned offset). */
  constructor(
    private readonly direct: FileHandle,
    path: string,
    from: number,
    storedTail: Buffer,
    private readonly ring: StagingRing,
    private readonly written: () => void,
  ) {
    this.hash = new FollowedFileSha256(path);
    this.position = from;
    this.slotAt = this.nextAt = alignDown(from);
    this.fill = this.kept = storedTail.copy(ring.slots[0]!.bytes);
    this.users = ring.slots.map(() => 0);
    this.waiting = ring.slots.map(() => []);
  }

  take(chunk: Buffer): Promise<void> | undefined {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.failure) return Promise.reject(this.failure);
      if (this.fill === 0 && this.users[this.current]! > 0) {
        const rest = chunk.subarray(offset);
        return this.free(this.current).then(() => this.take(rest));
      }
      const copied = chunk.copy(this.ring.slots[this.current]!.bytes, this.fill, offset);
      this.fill += copied;
      offset += copied;
      if (this.fill === SLOT_BYTES) this.send();
    }
    return undefined;
  }

  async finish(): Promise<void> {
    if (this.fill > this.kept) this.send();
    if (this.writing > 0 || this.queued.length > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    if (this.failure) throw this.failure;
    // The last write was padded to the alignment.
    await this.direct.truncate(this.position);
  }

  async digest(size: number): Promise<string> {
    try {
      return await this.hash.digest(size);
    } finally {
      this.releaseWhenFree();
    }
  }

  abandon(): void {
    this.failure ??= new Error('the write was given up');
    this.hash.abandon();
    this.releaseWhenFree();
  }

  private send(): void {
    const index = this.current;
    const slot = this.ring.slots[index]!;
    const at = this.slotAt;
    const length = this.fill;
    const kept = this.kept;
    this.slotAt += length;
    this.current = (index + 1) % this.ring.slots.length;
    this.fill = this.kept = 0;
    this.users[index] = 2;
    void this.hash.slot(slot, kept, length - kept, at + kept).then(() => this.done(index));
    this.queued.push({ index, at, length });
    this.write();
  }

  /** Starts queued writes, WRITES_IN_FLIGHT at most. */
  private write(): void {
    while (this.writing < WRITES_IN_FLIGHT && this.queued.length > 0) {
      const { index, at, length } = this.queued.shift()!;
      // After a failure the file is given up: what is queued is not written.
      if (this.failure) {
        this.done(index);
        continue;
      }
      this.writing += 1;
      writeAllAt(this.direct, this.ring.slots[index]!.bytes.subarray(0, alignUp(length)), at)
        .then(
          () => this.wrote(at, at + length),
          (err: Error) => {
            this.failure ??= err;
          },
        )
        .finally(() => {
          this.writing -= 1;
          this.done(index);
          this.write();
          if (this.writing === 0 && this.queued.length === 0) for (const resume of this.idle.splice(0)) resume();
        });
    }
  }

  /** Bytes up to `end` are on disk from `at`: the file holds them once every write before them is done too. */
  private wrote(at: number, end: number): void {
    this.finished.set(at, end);
    const before = this.position;
    for (let next = this.finished.get(this.nextAt); next !== undefined; next = this.finished.get(this.nextAt)) {
      this.finished.delete(this.nextAt);
      this.position = this.nextAt = next;
    }
    if (this.position !== before) this.written();
  }

  private done(index: number): void {
    this.users[index]! -= 1;
    if (this.users[index] !== 0) return;
    const waiting = this.waiting[index]!;
    this.waiting[index] = [];
    for (const resume of waiting) resume();
  }

  private free(index: number): Promise<void> {
    if (this.users[index] === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting[index]!.push(resolve));
  }

  private releaseWhenFree(): void {
    void Promise.all(this.ring.slots.map((_, i) => this.free(i))).then(() => this.ring.release());
  }
}

/** Writes all of `bytes` at `at`. */
async function writeAllAt(file: FileHandle, bytes: Buffer, at: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await file.write(bytes, done, bytes.length - done, at + done);
    if (bytesWritten === 0) throw new Error(`the disk took no more bytes at ${at + done}`);
    done += bytesWritten;
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

/** What a folder said to a direct write: taken, or refused for good (its file system has none), or failed this time. */
export type DirectWriteProbe = { taken: true } | { taken: false; lasting: boolean; reason: string };

/** Writes one aligned page to a new file in `folder` around the page cache, and removes it. */
export async function probeDirectWrite(folder: string): Promise<DirectWriteProbe> {
  if (constants.O_DIRECT === undefined) return { taken: false, lasting: true, reason: 'this system has no O_DIRECT' };
  const problem = stagingProblem();
  if (problem) return { taken: false, lasting: true, reason: `no aligned memory in this process: ${problem}` };
  const ring = takeRing();
  if (!ring) return { taken: false, lasting: false, reason: 'every slot of aligned memory is in use' };
  const probe = join(folder, `.direct-write-probe-${randomBytes(6).toString('hex')}`);
  try {
    const file = await open(probe, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT);
    try {
      await writeAllAt(file, ring.slots[0]!.bytes.subarray(0, DIRECT_ALIGN), 0);
    } finally {
      await file.close();
    }
    return { taken: true };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // What Linux answers where a file system has no direct I/O (tmpfs before 6.6, some FUSE ones).
    const lasting = code === 'EINVAL' || code === 'EOPNOTSUPP' || code === 'ENOTSUP';
    return { taken: false, lasting, reason: (err as Error).message };
  } finally {
    ring.release();
    await rm(probe, { force: true });
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
