/**
 * What every media store must do, run against each implementation: the folder (unit) and the S3
 * store on a real MinIO (integration). `leftovers` lists whatever the store holds besides finished
 * objects (partial files, multipart uploads), which a failed write must never leave.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { HEAD_BYTES, MediaNotFoundError, MediaTooLargeError, type MediaStore } from '../../core/media/storage';

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
      const stored = await t.store.write('videos/vid_a', chunked(bytes, 64 * 1024), { maxBytes: opts.largeBytes, onProgress: (n) => progress.push(n) });
      expect(stored).toEqual({ sizeBytes: opts.largeBytes, sha256: createHash('sha256').update(bytes).digest('hex'), head: bytes.subarray(0, HEAD_BYTES) });
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
      await expect(t.store.write('videos/vid_d', chunked(Buffer.alloc(2000)), { maxBytes: 2000 })).resolves.toMatchObject({ sizeBytes: 2000 });
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
