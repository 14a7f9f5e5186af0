/**
 * The folder store's direct writes (O_DIRECT): the output a folder sink hands its bytes to when the
 * folder takes them around the page cache, and the probe that finds out whether it does. Why, and
 * how the slots of aligned memory are shared with the hashing thread: folder-sink.ts and
 * docs/decisions/media-storage.md.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { FollowedFileSha256 } from './sha256-thread';
import { alignDown, alignUp, DIRECT_ALIGN, SLOT_BYTES, stagingProblem, takeRing, type StagingRing } from './staging-slots';

/** Where a sink's bytes go: into the file, and through its hash. */
export interface FileOutput {
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
export class DirectOutput implements FileOutput {
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
export async function writeAllAt(file: FileHandle, bytes: Buffer, at: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await file.write(bytes, done, bytes.length - done, at + done);
    if (bytesWritten === 0) throw new Error(`the disk took no more bytes at ${at + done}`);
    done += bytesWritten;
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
