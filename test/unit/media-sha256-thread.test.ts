/**
 * The SHA-256 of media writes, computed on a thread of its own: the same digest as a hash on the
 * main thread whatever the chunking, several writes at once, and a write that stops midway (over
 * its cap) leaves the thread serving the next. A followed file is read back by the thread as it
 * grows: the digest of the whole file, a file shorter than it was said to be is an error, and one
 * abandoned midway leaves the thread serving the next. Bytes handed over in slots of shared memory
 * are hashed in place, after whatever precedes them in the file, and every slot is given back, even
 * one handed to a hash abandoned meanwhile. The thread runs at a lower priority than the process's
 * other threads.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FollowedFileSha256, ThreadedSha256 } from '../../core/media/sha256-thread';
import { SLOT_BYTES, takeRing } from '../../core/media/staging-slots';
import { meter, MediaTooLargeError } from '../../core/media/storage';
import { chunked } from '../helpers/media-store-contract';

const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sink = () => new Writable({ write: (_chunk, _enc, done) => done() });

describe('SHA-256 on the hashing thread', () => {
  // The threads there were before this file's first hash: in a test process that ran other files
  // first, each file's module copy left a hashing thread of its own among them.
  let tasksBefore: Set<string>;
  beforeAll(() => {
    tasksBefore = new Set(readdirSync('/proc/self/task'));
  });

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

  it('runs below the priority of the threads that take the bytes in', async () => {
    const hash = new ThreadedSha256();
    await hash.update(randomBytes(2 * MiB));
    await hash.digest();
    // Field 19 of a thread's stat is its nice value; the thread idles on, unreferenced, after a hash.
    // A thread that ended between the listing and the read has none.
    const niceOf = (task: string): number | undefined => {
      try {
        const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      } catch {
        return undefined;
      }
    };
    const main = niceOf(String(process.pid))!;
    const lower = readdirSync('/proc/self/task')
      .filter((task) => !tasksBefore.has(task))
      .map(niceOf)
      .filter((nice) => nice !== undefined && nice > main);
    expect(lower).toEqual([Math.min(19, main + 10)]);
  });

  describe('a followed file', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'vps-sha-follow-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('gives the digest of the whole file, told of its growth in steps or not at all', async () => {
      const bytes = randomBytes(21 * MiB + 333);
      for (const step of [3 * MiB + 1, 64 * 1024, bytes.length]) {
        const file = path.join(dir, `grown-${step}`);
        writeFileSync(file, '');
        const hash = new FollowedFileSha256(file);
        for (let at = 0; at < bytes.length; at += step) {
          appendFileSync(file, bytes.subarray(at, at + step));
          hash.written(Math.min(at + step, bytes.length));
        }
        expect(await hash.digest(bytes.length)).toBe(sha256(bytes));
      }
      // A prefix already in the file counts, as on a resumed write; and an empty file.
      const resumed = path.join(dir, 'resumed');
      writeFileSync(resumed, bytes.subarray(0, 5 * MiB));
      const hash = new FollowedFileSha256(resumed);
      hash.written(5 * MiB);
      appendFileSync(resumed, bytes.subarray(5 * MiB));
      expect(await hash.digest(bytes.length)).toBe(sha256(bytes));
      writeFileSync(path.join(dir, 'empty'), '');
      expect(await new FollowedFileSha256(path.join(dir, 'empty')).digest(0)).toBe(sha256(Buffer.alloc(0)));
    });

    it('hashes bytes handed over in slots where they lie, after what precedes them on disk, and frees every slot', async () => {
      const ring = takeRing()!;
      try {
        const bytes = randomBytes(3 * MiB + 5 * SLOT_BYTES + 77);
        const prefix = 3 * MiB;
        const file = path.join(dir, 'slots');
        // Only the prefix is on disk: the rest reaches the hash through the slots alone.
        writeFileSync(file, bytes.subarray(0, prefix));
        const hash = new FollowedFileSha256(file);
        const handed: Array<Promise<void>> = [];
        for (let at = prefix, i = 0; at < bytes.length; i++) {
          const slot = ring.slots[i % ring.slots.length]!;
          await handed[i - ring.slots.length]; // the slot is free again before it is refilled
          // A slot's bytes need not start at its beginning (a resumed write keeps bytes before them).
          const from = i === 0 ? 100 : 0;
          const length = Math.min(SLOT_BYTES - from, bytes.length - at);
          bytes.copy(slot.bytes, from, at, at + length);
          handed.push(hash.slot(slot, from, length, at));
          at += length;
        }
        expect(await hash.digest(bytes.length)).toBe(sha256(bytes));
        await Promise.all(handed);

        // Handed over, then abandoned before the thread got to it: the slot still comes back.
        const dropped = new FollowedFileSha256(file);
        const back = dropped.slot(ring.slots[0]!, 0, SLOT_BYTES, prefix);
        dropped.abandon();
        await back;
      } finally {
        ring.release();
      }
    });

    it('fails the digest of a file shorter than it was said to be, or gone, and then serves the next', async () => {
      const short = path.join(dir, 'short');
      writeFileSync(short, randomBytes(MiB));
      await expect(new FollowedFileSha256(short).digest(2 * MiB)).rejects.toThrow(/ends at 1048576 bytes, short of the 2097152 written/);
      await expect(new FollowedFileSha256(path.join(dir, 'no-such-file')).digest(10)).rejects.toThrow(/ENOENT/);
      const abandoned = new FollowedFileSha256(short);
      abandoned.written(MiB);
      abandoned.abandon();
      const bytes = randomBytes(3 * MiB);
      const next = path.join(dir, 'next');
      writeFileSync(next, bytes);
      expect(await new FollowedFileSha256(next).digest(bytes.length)).toBe(sha256(bytes));
    });
  });
});
