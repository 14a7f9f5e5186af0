import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { HEAD_BYTES, MediaStore, MediaTooLargeError } from '../../core/media/storage';

/** A stream of the buffer in chunks of `size`, as a network body arrives. */
const chunked = (bytes: Buffer, size = 1000) =>
  Readable.from((function* () {
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  })());

const filesUnder = (dir: string): string[] => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);

describe('MediaStore', () => {
  let root: string;
  let store: MediaStore;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vps-media-unit-'));
    store = new MediaStore(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('stores a stream whole and reports its size, SHA-256 and first bytes', async () => {
    const bytes = randomBytes(50_000);
    const progress: number[] = [];
    const stored = await store.write('videos/vid_a', chunked(bytes), { maxBytes: 50_000, onProgress: (n) => progress.push(n) });
    expect(stored).toEqual({ sizeBytes: 50_000, sha256: createHash('sha256').update(bytes).digest('hex'), head: bytes.subarray(0, HEAD_BYTES) });
    expect(progress.at(-1)).toBe(50_000);
    expect(await store.size('videos/vid_a')).toBe(50_000);
    const read: Buffer[] = [];
    for await (const chunk of store.open('videos/vid_a', { start: 10, end: 19 })) read.push(chunk as Buffer);
    expect(Buffer.concat(read)).toEqual(bytes.subarray(10, 20));
  });

  it('keeps the whole file as head when it is shorter than the head', async () => {
    const stored = await store.write('videos/vid_b', chunked(Buffer.from('tiny'), 2), { maxBytes: 100 });
    expect(stored.head).toEqual(Buffer.from('tiny'));
  });

  it('stops at the first byte past the cap and leaves no partial file', async () => {
    const consumed: number[] = [];
    let sent = 0;
    // An endless body: the write must end by itself, at the cap.
    const endless = new Readable({
      read() {
        sent += 1000;
        consumed.push(sent);
        this.push(Buffer.alloc(1000, 7));
      },
    });
    await expect(store.write('videos/vid_c', endless, { maxBytes: 10_500 })).rejects.toBeInstanceOf(MediaTooLargeError);
    expect(sent).toBeLessThan(100_000);
    expect(await store.size('videos/vid_c')).toBeUndefined();
    expect(filesUnder(root)).toEqual([]);
  });

  it('accepts a file of exactly the cap', async () => {
    await expect(store.write('videos/vid_d', chunked(Buffer.alloc(2000)), { maxBytes: 2000 })).resolves.toMatchObject({ sizeBytes: 2000 });
  });

  it('leaves no partial file when the source fails midway, and keeps an earlier complete file intact', async () => {
    await store.write('videos/vid_e', chunked(Buffer.alloc(3000, 1)), { maxBytes: 10_000 });
    const failing = new Readable({
      read() {
        this.destroy(new Error('connection reset'));
      },
    });
    await expect(store.write('videos/vid_e', failing, { maxBytes: 10_000 })).rejects.toThrow('connection reset');
    expect(await store.size('videos/vid_e')).toBe(3000);
    expect(filesUnder(root)).toEqual(['vid_e']);
  });

  it('refuses keys it did not make, before touching the disk', async () => {
    for (const key of ['../etc/passwd', 'videos/../../x', '/abs/path', 'videos', 'Videos/A']) {
      await expect(store.write(key, chunked(Buffer.alloc(10)), { maxBytes: 100 })).rejects.toThrow(/invalid media key/);
    }
  });

  it('removes a file, and removing again is harmless', async () => {
    await store.write('videos/vid_f', chunked(Buffer.alloc(10)), { maxBytes: 100 });
    await store.remove('videos/vid_f');
    await store.remove('videos/vid_f');
    expect(await store.size('videos/vid_f')).toBeUndefined();
  });
});
