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
    // Single bytes just past the first 1 MiB buffer only: enough to fill and send one, with the
    // fewest calls (two million of them took over a minute on a loaded CI machine).
    for (const [size, length] of [[1, MiB + 1], [4096, bytes.length], [65_536, bytes.length], [3 * MiB, bytes.length]] as const) {
      const part = bytes.subarray(0, length);
      const hash = new ThreadedSha256();
      for (let i = 0; i < part.length; i += size) await hash.update(part.subarray(i, i + size));
      expect(await hash.digest()).toBe(sha256(part));
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
