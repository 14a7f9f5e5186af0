/**
 * What every media store must do, run against each implementation: the folder (unit) and the S3
 * store on a real MinIO (integration). `leftovers` lists whatever the store holds besides finished
 * objects (partial files, multipart uploads), which a failed write must never leave, and a failed
 * resumable write keeps for the next attempt until it is discarded. A store under test checkpoints
 * its resumable writes often (each part, or each flush), so files of `largeBytes` get several.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ResumePoint } from '../../core/media/resumable-write';
import { HEAD_BYTES, MediaNotFoundError, MediaTooLargeError, type MediaStore } from '../../core/media/storage';
import { mp4Bytes } from './videos';

export interface StoreUnderTest {
  store: MediaStore;
  /** Object keys present (finished or not) and unfinished uploads, as short descriptions. */
  leftovers(): Promise<string[]>;
  cleanup(): Promise<void>;
}

/** A stream of the buffer in chunks of `size`, as a network body arrives. */
export const chunked = (bytes: Buffer, size = 1000) =>
  Readable.from(
    (function* () {
      for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
    })(),
  );

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function readAll(store: MediaStore, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.open(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function describeMediaStoreContract(name: string, make: () => Promise<StoreUnderTest>, opts: { largeBytes: number }): void {
  describe(`${name}: the media store contract`, () => {
    let t: StoreUnderTest;
    beforeEach(async () => {
      t = await make();
    });
    afterEach(async () => {
      await t.cleanup();
    });

    it('stores a stream whole and reports its size, SHA-256 and first bytes; reads a byte range back', async () => {
      const bytes = randomBytes(opts.largeBytes);
      const progress: number[] = [];
      const stored = await t.store.write('videos/vid_a', chunked(bytes, 64 * 1024), {
        maxBytes: opts.largeBytes,
        onProgress: (n) => progress.push(n),
      });
      expect(stored).toEqual({
        sizeBytes: opts.largeBytes,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        head: bytes.subarray(0, HEAD_BYTES),
      });
      expect(progress.at(-1)).toBe(opts.largeBytes);
      expect(await t.store.size('videos/vid_a')).toBe(opts.largeBytes);
      const read: Buffer[] = [];
      for await (const chunk of await t.store.open('videos/vid_a', { start: 10, end: 19 })) read.push(chunk as Buffer);
      expect(Buffer.concat(read)).toEqual(bytes.subarray(10, 20));
      const whole = createHash('sha256');
      for await (const chunk of await t.store.open('videos/vid_a')) whole.update(chunk as Buffer);
      expect(whole.digest('hex')).toBe(stored.sha256);
      expect(await t.leftovers()).toEqual(['videos/vid_a']);
    });

    it('moves an object to another key, whole, and leaves nothing under the first; an absent one is not found', async () => {
      const bytes = randomBytes(opts.largeBytes);
      await t.store.write('staging/up_a', chunked(bytes, 64 * 1024), { maxBytes: opts.largeBytes });
      await t.store.move('staging/up_a', 'videos/vid_moved');
      expect(sha256(await readAll(t.store, 'videos/vid_moved'))).toBe(sha256(bytes));
      expect(await t.store.size('staging/up_a')).toBeUndefined();
      expect(await t.leftovers()).toEqual(['videos/vid_moved']);
      await expect(t.store.move('staging/up_gone', 'videos/vid_other')).rejects.toBeInstanceOf(MediaNotFoundError);
    });

    it('removes staged uploads older than the given time, and only those and only staged ones', async () => {
      await t.store.write('staging/up_left', chunked(Buffer.from('left behind')), { maxBytes: 100 });
      await t.store.write('videos/vid_kept', chunked(Buffer.from('a record names it')), { maxBytes: 100 });
      expect(await t.store.removeStagedBefore(new Date(Date.now() - 60_000))).toBe(0);
      expect((await t.leftovers()).sort()).toEqual(['staging/up_left', 'videos/vid_kept']);
      expect(await t.store.removeStagedBefore(new Date(Date.now() + 60_000))).toBe(1);
      expect(await t.leftovers()).toEqual(['videos/vid_kept']);
    });

    it('keeps the whole file as head when it is shorter than the head', async () => {
      const stored = await t.store.write('videos/vid_b', chunked(Buffer.from('tiny'), 2), { maxBytes: 100 });
      expect(stored.head).toEqual(Buffer.from('tiny'));
    });

    it('stops at the first byte past the cap and leaves nothing behind', async () => {
      let sent = 0;
      // An endless body: the write must end by itself, at the cap.
      const endless = new Readable({
        read() {
          sent += 64 * 1024;
          this.push(Buffer.alloc(64 * 1024, 7));
        },
      });
      await expect(t.store.write('videos/vid_c', endless, { maxBytes: opts.largeBytes })).rejects.toBeInstanceOf(MediaTooLargeError);
      expect(sent).toBeLessThan(opts.largeBytes * 2 + 1024 * 1024);
      expect(await t.store.size('videos/vid_c')).toBeUndefined();
      expect(await t.leftovers()).toEqual([]);
    });

    it('accepts a file of exactly the cap', async () => {
      await expect(t.store.write('videos/vid_d', chunked(Buffer.alloc(2000)), { maxBytes: 2000 })).resolves.toMatchObject({
        sizeBytes: 2000,
      });
    });

    it('leaves nothing of a body cut midway, and keeps an earlier complete file intact', async () => {
      await t.store.write('videos/vid_e', chunked(Buffer.alloc(3000, 1)), { maxBytes: 10_000 });
      let sent = 0;
      const cut = new Readable({
        read() {
          // Past a part or two of the S3 store, then the connection drops.
          if (sent >= opts.largeBytes / 2) return this.destroy(new Error('connection reset'));
          sent += 64 * 1024;
          this.push(randomBytes(64 * 1024));
        },
      });
      await expect(t.store.write('videos/vid_e', cut, { maxBytes: opts.largeBytes })).rejects.toThrow('connection reset');
      expect(await t.store.size('videos/vid_e')).toBe(3000);
      expect(await t.leftovers()).toEqual(['videos/vid_e']);
    });

    it('stops a write when its signal aborts, leaving nothing', async () => {
      const controller = new AbortController();
      let sent = 0;
      const slow = new Readable({
        read() {
          sent += 64 * 1024;
          if (sent > opts.largeBytes / 4) controller.abort();
          this.push(Buffer.alloc(64 * 1024, 2));
        },
      });
      await expect(t.store.write('videos/vid_g', slow, { maxBytes: opts.largeBytes * 4, signal: controller.signal })).rejects.toThrow();
      expect(await t.store.size('videos/vid_g')).toBeUndefined();
      expect(await t.leftovers()).toEqual([]);
    });

    it('refuses keys it did not make, before touching the store', async () => {
      for (const key of ['../etc/passwd', 'videos/../../x', '/abs/path', 'videos', 'Videos/A']) {
        await expect(t.store.write(key, chunked(Buffer.alloc(10)), { maxBytes: 100 })).rejects.toThrow(/invalid media key/);
      }
    });

    describe('resumable writes', () => {
      /**
       * The file's first `cutAt` bytes, then (once a checkpoint past none has come) a dropped
       * connection: what an attempt cut short stores.
       */
      async function interrupted(key: string, bytes: Buffer, cutAt: number, resume?: ResumePoint) {
        const points: ResumePoint[] = [];
        const writing = await t.store.resumableWrite(key, resume);
        let sent = writing.offset;
        const cut = new Readable({
          read() {
            if (sent < cutAt) {
              const chunk = bytes.subarray(sent, Math.min(sent + 64 * 1024, cutAt));
              sent += chunk.length;
              return void this.push(chunk);
            }
            const drop = () =>
              points.some((p) => p.offset > writing.offset) ? this.destroy(new Error('connection reset')) : setTimeout(drop, 20);
            drop();
          },
        });
        await expect(writing.complete(cut, { maxBytes: bytes.length, onCheckpoint: (p) => points.push(p) })).rejects.toThrow(
          'connection reset',
        );
        return { last: points.at(-1)!, points };
      }

      it('stores the whole file with checkpoints of what is stored', async () => {
        const bytes = randomBytes(opts.largeBytes);
        const points: ResumePoint[] = [];
        const writing = await t.store.resumableWrite('videos/vid_r1');
        expect(writing.offset).toBe(0);
        const stored = await writing.complete(chunked(bytes, 64 * 1024), { maxBytes: bytes.length, onCheckpoint: (p) => points.push(p) });
        expect(stored).toEqual({ sizeBytes: bytes.length, sha256: sha256(bytes), head: bytes.subarray(0, HEAD_BYTES) });
        const offsets = points.map((p) => p.offset);
        expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
        expect(offsets.every((o) => o > 0 && o <= bytes.length)).toBe(true);
        expect(await t.leftovers()).toEqual(['videos/vid_r1']);
      });

      it('goes on from the last checkpoint of an attempt cut short: the whole file, hashed whole, and nothing else left', async () => {
        const bytes = mp4Bytes(opts.largeBytes);
        const { last } = await interrupted('videos/vid_r2', bytes, Math.floor(bytes.length * 0.6));
        expect(last.offset).toBeGreaterThan(0);
        expect(await t.store.size('videos/vid_r2')).toBeUndefined();
        // Through JSON, as it travels in a heartbeat.
        const writing = await t.store.resumableWrite('videos/vid_r2', JSON.parse(JSON.stringify(last)) as ResumePoint);
        expect({ offset: writing.offset, lostResume: writing.lostResume }).toEqual({ offset: last.offset, lostResume: undefined });
        const progress: number[] = [];
        const stored = await writing.complete(chunked(bytes.subarray(writing.offset), 64 * 1024), {
          maxBytes: bytes.length,
          onProgress: (n) => progress.push(n),
        });
        expect(stored).toEqual({ sizeBytes: bytes.length, sha256: sha256(bytes), head: bytes.subarray(0, HEAD_BYTES) });
        expect(progress.at(-1)).toBe(bytes.length);
        expect(sha256(await readAll(t.store, 'videos/vid_r2'))).toBe(sha256(bytes));
        expect(await t.leftovers()).toEqual(['videos/vid_r2']);
      });

      it('survives a resume cut short, and a second resume from the same point', async () => {
        const bytes = randomBytes(opts.largeBytes);
        const first = await interrupted('videos/vid_r3', bytes, Math.floor(bytes.length * 0.4));
        // Cut before it stored anything more: the next attempt still has only the first checkpoint.
        const again = await t.store.resumableWrite('videos/vid_r3', first.last);
        expect(again.offset).toBe(first.last.offset);
        await expect(
          again.complete(
            Readable.from(
              (async function* () {
                yield* [];
                throw new Error('connection reset');
              })(),
            ),
            { maxBytes: bytes.length },
          ),
        ).rejects.toThrow('connection reset');
        const second = await interrupted('videos/vid_r3', bytes, Math.floor(bytes.length * 0.8), first.last);
        expect(second.last.offset).toBeGreaterThan(first.last.offset);
        const writing = await t.store.resumableWrite('videos/vid_r3', second.last);
        expect(writing.offset).toBe(second.last.offset);
        const stored = await writing.complete(chunked(bytes.subarray(writing.offset)), { maxBytes: bytes.length });
        expect(stored.sha256).toBe(sha256(bytes));
        expect(sha256(await readAll(t.store, 'videos/vid_r3'))).toBe(sha256(bytes));
        expect(await t.leftovers()).toEqual(['videos/vid_r3']);
      });

      it('starts over when what the resume point names is gone, or when told to', async () => {
        const bytes = randomBytes(opts.largeBytes);
        const lost = await t.store.resumableWrite('videos/vid_r4', { offset: 1000, uploadId: 'no-such-upload', parts: 1 });
        expect(lost.offset).toBe(0);
        expect(lost.lostResume).toEqual(expect.any(String));
        await expect(lost.complete(chunked(bytes), { maxBytes: bytes.length })).resolves.toMatchObject({ sha256: sha256(bytes) });

        const other = randomBytes(opts.largeBytes);
        const { last } = await interrupted('videos/vid_r5', bytes, Math.floor(bytes.length * 0.6));
        const writing = await t.store.resumableWrite('videos/vid_r5', last);
        expect(writing.offset).toBe(last.offset);
        // The source answered with the whole file (another one, even): the stored part is not used.
        writing.restart();
        expect(writing.offset).toBe(0);
        await expect(writing.complete(chunked(other), { maxBytes: other.length })).resolves.toMatchObject({
          sizeBytes: other.length,
          sha256: sha256(other),
        });
        expect(sha256(await readAll(t.store, 'videos/vid_r5'))).toBe(sha256(other));
        expect(await t.leftovers()).toEqual(['videos/vid_r4', 'videos/vid_r5']);
      });

      it('counts the stored part against the cap, and leaves nothing once discarded', async () => {
        const bytes = randomBytes(opts.largeBytes);
        const { last } = await interrupted('videos/vid_r6', bytes, Math.floor(bytes.length * 0.6));
        expect(await t.leftovers()).not.toEqual([]);
        const writing = await t.store.resumableWrite('videos/vid_r6', last);
        await expect(writing.complete(chunked(bytes.subarray(writing.offset)), { maxBytes: bytes.length - 1 })).rejects.toBeInstanceOf(
          MediaTooLargeError,
        );
        expect(await t.store.size('videos/vid_r6')).toBeUndefined();
        await t.store.discardResumable('videos/vid_r6');
        await t.store.discardResumable('videos/vid_r6');
        expect(await t.leftovers()).toEqual([]);
      });
    });

    it('opens a missing object as not found, and removes idempotently', async () => {
      await expect(t.store.open('videos/vid_none')).rejects.toBeInstanceOf(MediaNotFoundError);
      await t.store.write('videos/vid_f', chunked(Buffer.alloc(10)), { maxBytes: 100 });
      await t.store.remove('videos/vid_f');
      await t.store.remove('videos/vid_f');
      expect(await t.store.size('videos/vid_f')).toBeUndefined();
      await expect(t.store.open('videos/vid_f')).rejects.toBeInstanceOf(MediaNotFoundError);
    });
  });
}
