/**
 * The media store: where uploaded and fetched videos live, behind one interface with two
 * implementations (a local folder for the embedded mode, an S3-compatible bucket for every
 * deployment with more than one process). Writes stream with constant memory; size and SHA-256
 * are computed on the way, and a write stops as soon as it passes its size cap, so an oversized
 * or endless body never fills the store. A reader never sees half an object.
 */
import { randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { DependencyUnavailableError } from '../errors';
import type { ResumableWrite, ResumePoint } from './resumable-write';
import type { StoredMedia, WriteOptions } from './written';
import { ThreadedSha256 } from './sha256-thread';

/** Enough of a file to recognise its container. */
export const HEAD_BYTES = 4096;

export class MediaTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is larger than the limit of ${maxBytes} bytes`);
    this.name = 'MediaTooLargeError';
  }
}

/** The object is not in the store (never written, or removed). */
export class MediaNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`no stored media under ${key}`);
    this.name = 'MediaNotFoundError';
  }
}

/**
 * The store could not be reached or refused the call for a reason of its own (not the caller's):
 * a transient condition the caller may retry, answered 5000 with Retry-After and data.retryable.
 */
export class MediaStoreUnavailableError extends DependencyUnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MediaStoreUnavailableError';
  }
}

export type { StoredMedia, WriteOptions } from './written';

export interface MediaStore {
  /** Where the media live, for the start banner and errors (no secrets). */
  readonly description: string;
  /** Proves at start-up that the store is there and writable; throws a message an operator can act on. */
  check(): Promise<void>;
  /** Stores a whole stream under `key`; on any failure nothing is left under it. */
  write(key: string, source: Readable | AsyncIterable<Uint8Array>, opts: WriteOptions): Promise<StoredMedia>;
  /** Opens the object (or an inclusive byte range of it); rejects with MediaNotFoundError before any byte when absent. */
  open(key: string, range?: { start: number; end: number }): Promise<Readable>;
  size(key: string): Promise<number | undefined>;
  /** Begins a resumable write of `key`, or goes on from `resume` when what it names is still stored. */
  resumableWrite(key: string, resume?: ResumePoint): Promise<ResumableWrite>;
  /** Removes what unfinished resumable writes of `key` left; the object itself, if any, stays. */
  discardResumable(key: string): Promise<void>;
  /** Removes the object; removing an absent one is not an error. */
  remove(key: string): Promise<void>;
  /**
   * Puts the object stored under `from` under `to` (replacing any there) and removes `from`: how an
   * upload written before its target was known takes its record's key. Rejects with
   * MediaNotFoundError when `from` is absent.
   */
  move(from: string, to: string): Promise<void>;
  /**
   * Removes what sits under STAGING_PREFIX since before `olderThan`: uploads a process stopped
   * between storing them and moving them to their record. Returns how many it removed.
   */
  removeStagedBefore(olderThan: Date): Promise<number>;
  close(): void;
}

/** Where an upload waits, stored, for the fields that name its target (stagingKey). */
export const STAGING_PREFIX = 'staging/';

/** A fresh key under STAGING_PREFIX. */
export function stagingKey(): string {
  return `${STAGING_PREFIX}${randomBytes(16).toString('hex')}`;
}

/** Keys are made by the service (`videos/<id>`); anything else is refused before touching the store. */
const KEY = /^[a-z0-9_]+(\/[a-z0-9_.-]+)+$/;

export function checkedKey(key: string): string {
  if (!KEY.test(key) || key.includes('..')) throw new Error(`invalid media key ${JSON.stringify(key)}`);
  return key;
}

/**
 * A pass-through that counts, hashes and keeps the head of what flows through it, and fails the
 * stream with MediaTooLargeError the moment the count passes the cap. The hash runs on a thread of
 * its own (sha256-thread.ts); the stream ends only once it is known, so `result()` is ready when
 * whatever consumed the stream has finished.
 */
export function meter(opts: Pick<WriteOptions, 'maxBytes' | 'onProgress'>): { stream: Transform; result(): StoredMedia } {
  const hash = new ThreadedSha256();
  const head: Buffer[] = [];
  let size = 0;
  let headSize = 0;
  let sha256: string | undefined;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > opts.maxBytes) return done(new MediaTooLargeError(opts.maxBytes));
      if (headSize < HEAD_BYTES) {
        head.push(chunk.subarray(0, HEAD_BYTES - headSize));
        headSize += Math.min(chunk.length, HEAD_BYTES - headSize);
      }
      opts.onProgress?.(size);
      // Passed on at once unless the hash is a few MiB behind: then this stream waits for it.
      const behind = hash.update(chunk);
      if (behind) behind.then(() => done(null, chunk), done);
      else done(null, chunk);
    },
    flush(done) {
      hash.digest().then((hex) => {
        sha256 = hex;
        done();
      }, done);
    },
    destroy(err, done) {
      if (sha256 === undefined) hash.abandon();
      done(err);
    },
  });
  return {
    stream,
    result() {
      if (sha256 === undefined) throw new Error('the metered stream has not ended');
      return { sizeBytes: size, sha256, head: Buffer.concat(head) };
    },
  };
}
