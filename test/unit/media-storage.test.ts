import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { currentBootId, type FolderResumableSettings } from '../../core/media/folder-resumable-write';
import { FolderMediaStore } from '../../core/media/folder-store';
import type { ResumePoint } from '../../core/media/resumable-write';
import { chunked, describeMediaStoreContract } from '../helpers/media-store-contract';

function folderStore(settings: FolderResumableSettings) {
  const root = mkdtempSync(path.join(os.tmpdir(), 'vps-media-unit-'));
  return {
    root,
    store: new FolderMediaStore(root, settings),
    // Every file, finished or partial, by its path under the root.
    leftovers: async () =>
      readdirSync(root, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
        .sort(),
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
}

// A checkpoint whenever a batch (4 MiB) is written: files of 12 MiB get a few.
describeMediaStoreContract('folder store', async () => folderStore({ checkpointEveryMs: 0 }), { largeBytes: 12 * 1024 * 1024 });

// Where the system has no boot id, each checkpoint waits for a flush instead.
describeMediaStoreContract('folder store without a boot id', async () => folderStore({ checkpointEveryMs: 0, bootId: undefined }), {
  largeBytes: 12 * 1024 * 1024,
});

describe('folder store checkpoints across a restart of the machine', () => {
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

  /** The first 60% of `bytes` written, then the connection dropped: the checkpoints it gave. */
  async function cutShort(store: FolderMediaStore, key: string, bytes: Buffer): Promise<ResumePoint[]> {
    const points: ResumePoint[] = [];
    const writing = await store.resumableWrite(key);
    const cutAt = Math.floor(bytes.length * 0.6);
    const source = Readable.from(
      (async function* () {
        for (let at = 0; at < cutAt; at += 64 * 1024) yield bytes.subarray(at, Math.min(at + 64 * 1024, cutAt));
        // A flushed checkpoint comes after its flush: the connection drops once there is one.
        while (points.length === 0) await new Promise((resolve) => setImmediate(resolve));
        throw new Error('connection reset');
      })(),
    );
    await expect(writing.complete(source, { maxBytes: bytes.length, onCheckpoint: (p) => points.push(p) })).rejects.toThrow(
      'connection reset',
    );
    return points;
  }

  it('names the boot of each checkpoint, and resumes from it in the same boot', async () => {
    const t = folderStore({ checkpointEveryMs: 0, bootId: 'boot-a' });
    try {
      const bytes = randomBytes(12 * 1024 * 1024);
      const points = await cutShort(t.store, 'videos/vid_b1', bytes);
      expect(points.length).toBeGreaterThan(0);
      expect(points.every((p) => p.bootId === 'boot-a')).toBe(true);
      const writing = await t.store.resumableWrite('videos/vid_b1', points.at(-1));
      expect({ offset: writing.offset, lostResume: writing.lostResume }).toEqual({ offset: points.at(-1)!.offset, lostResume: undefined });
      const stored = await writing.complete(chunked(bytes.subarray(writing.offset), 64 * 1024), { maxBytes: bytes.length });
      expect(stored.sha256).toBe(sha256(bytes));
    } finally {
      await t.cleanup();
    }
  });

  it('starts over from a checkpoint of another boot, saying why, and stores the whole file again', async () => {
    const before = folderStore({ checkpointEveryMs: 0, bootId: 'boot-a' });
    try {
      const bytes = randomBytes(12 * 1024 * 1024);
      const points = await cutShort(before.store, 'videos/vid_b2', bytes);
      const after = new FolderMediaStore(before.root, { checkpointEveryMs: 0, bootId: 'boot-b' });
      const writing = await after.resumableWrite('videos/vid_b2', points.at(-1));
      expect(writing.offset).toBe(0);
      expect(writing.lostResume).toMatch(/machine restarted/);
      const stored = await writing.complete(chunked(bytes, 64 * 1024), { maxBytes: bytes.length });
      expect(stored.sha256).toBe(sha256(bytes));
      expect(await before.leftovers()).toEqual(['videos/vid_b2']);
    } finally {
      await before.cleanup();
    }
  });

  it("trusts a checkpoint without a boot, which was flushed, whatever the machine's boot", async () => {
    const t = folderStore({ checkpointEveryMs: 0, bootId: undefined });
    try {
      const bytes = randomBytes(12 * 1024 * 1024);
      const points = await cutShort(t.store, 'videos/vid_b3', bytes);
      expect(points.every((p) => p.bootId === undefined)).toBe(true);
      const later = new FolderMediaStore(t.root, { checkpointEveryMs: 0, bootId: 'boot-b' });
      const writing = await later.resumableWrite('videos/vid_b3', points.at(-1));
      expect(writing.offset).toBe(points.at(-1)!.offset);
      expect((await writing.complete(chunked(bytes.subarray(writing.offset)), { maxBytes: bytes.length })).sha256).toBe(sha256(bytes));
    } finally {
      await t.cleanup();
    }
  });

  it("reads this machine's boot id once, as Linux gives it", () => {
    expect(currentBootId()).toMatch(/^[0-9a-f-]{36}$/);
    expect(currentBootId()).toBe(currentBootId());
  });
});
