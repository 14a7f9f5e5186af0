/**
 * The SHA-256 of media writes, computed on a thread of its own: the same digest as a hash on the
 * main thread whatever the chunking, several writes at once, and a write that stops midway (over
 * its cap) leaves the thread serving the next.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ThreadedSha256 } from '../../core/media/sha256-thread';
import { meter, MediaTooLargeError } from '../../core/media/storage';
import { chunked } from '../helpers/media-store-contract';

const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sink = () => new Writable({ write: (_chunk, _enc, done) => done() });

describe('SHA-256 on the hashing thread', () => {
  it('gives the digest of the bytes whatever their chunking, across many buffers', async () => {
    const bytes = randomBytes(9 * MiB + 12_345);
    const evenly = (size: number) => Array.from({ length: Math.ceil(bytes.length / size) }, () => size);
    // Single bytes only across the first buffer's end: a million one-byte calls took over a minute
    // in a long-lived CI test process, and the boundary is what they are there for.
    const singleBytesAcrossABuffer = [MiB - 100, ...Array.from({ length: 200 }, () => 1), bytes.length];
    for (const sizes of [singleBytesAcrossABuffer, evenly(4096), evenly(65_536), evenly(3 * MiB)]) {
      const hash = new ThreadedSha256();
      let at = 0;
      for (const size of sizes) {
        await hash.update(bytes.subarray(at, at + size));
        at += size;
      }
      expect(await hash.digest()).toBe(sha256(bytes));
    }
  });

  it('hashes a file smaller than one buffer, and an empty one', async () => {
    const small = randomBytes(1000);
    const hash = new ThreadedSha256();
    await hash.update(small);
    expect(await hash.digest()).toBe(sha256(small));
    expect(await new ThreadedSha256().digest()).toBe(sha256(Buffer.alloc(0)));
  });

  it('keeps several writes apart', async () => {
    const files = [randomBytes(5 * MiB), randomBytes(3 * MiB + 7), randomBytes(6 * MiB)];
    const metered = files.map(() => meter({ maxBytes: 10 * MiB }));
    await Promise.all(files.map((bytes, i) => pipeline(chunked(bytes, 64 * 1024), metered[i]!.stream, sink())));
    expect(metered.map((m) => m.result().sha256)).toEqual(files.map(sha256));
  });

  it('serves the next write after one stopped at its cap midway', async () => {
    const over = meter({ maxBytes: 3 * MiB });
    await expect(pipeline(chunked(randomBytes(8 * MiB), 64 * 1024), over.stream, sink())).rejects.toBeInstanceOf(MediaTooLargeError);
    expect(() => over.result()).toThrow(/has not ended/);
    const bytes = randomBytes(4 * MiB);
    const next = meter({ maxBytes: 10 * MiB });
    await pipeline(chunked(bytes, 64 * 1024), next.stream, sink());
    expect(next.result()).toMatchObject({ sizeBytes: bytes.length, sha256: sha256(bytes) });
  });
});
