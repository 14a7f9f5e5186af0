/**
 * The media store: files under one folder, written from streams with constant memory. Size and
 * SHA-256 are computed on the way, and a write stops as soon as it passes its size cap, so an
 * oversized or endless body never fills the disk. Writes land under a temporary name and are
 * renamed into place, so a reader never sees half a file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Enough of a file to recognise its container. */
export const HEAD_BYTES = 4096;

export class MediaTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is larger than the limit of ${maxBytes} bytes`);
    this.name = 'MediaTooLargeError';
  }
}

export interface StoredMedia {
  sizeBytes: number;
  sha256: string;
  /** The first bytes, for recognising the format. */
  head: Buffer;
}

/** Keys are made by the service (`videos/<id>`); anything else is refused before touching the disk. */
const KEY = /^[a-z0-9_]+(\/[a-z0-9_.-]+)+$/;

export class MediaStore {
  constructor(readonly root: string) {}

  private file(key: string): string {
    if (!KEY.test(key) || key.includes('..')) throw new Error(`invalid media key ${JSON.stringify(key)}`);
    return path.join(this.root, key);
  }

  async write(key: string, source: Readable | AsyncIterable<Uint8Array>, opts: { maxBytes: number; signal?: AbortSignal; onProgress?: (bytes: number) => void }): Promise<StoredMedia> {
    const target = this.file(key);
    await mkdir(path.dirname(target), { recursive: true });
    const partial = `${target}.part-${randomBytes(6).toString('hex')}`;
    const hash = createHash('sha256');
    const head: Buffer[] = [];
    let size = 0;
    let headSize = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > opts.maxBytes) return done(new MediaTooLargeError(opts.maxBytes));
        if (headSize < HEAD_BYTES) {
          head.push(chunk.subarray(0, HEAD_BYTES - headSize));
          headSize += Math.min(chunk.length, HEAD_BYTES - headSize);
        }
        hash.update(chunk);
        opts.onProgress?.(size);
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(partial), ...(opts.signal ? [{ signal: opts.signal }] : []));
      await rename(partial, target);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return { sizeBytes: size, sha256: hash.digest('hex'), head: Buffer.concat(head) };
  }

  open(key: string, range?: { start: number; end: number }): ReadStream {
    return createReadStream(this.file(key), range);
  }

  async size(key: string): Promise<number | undefined> {
    try {
      return (await stat(this.file(key))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }
}
