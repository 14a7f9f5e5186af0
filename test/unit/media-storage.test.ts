import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { probeDirectWrite } from '../../core/media/direct-file-output';
import { currentBootId, partialFileOf, type FolderResumableSettings } from '../../core/media/folder-resumable-write';
import { FolderMediaStore, type FolderWriteSettings } from '../../core/media/folder-store';
import type { ResumePoint } from '../../core/media/resumable-write';
import { RINGS_PER_PROCESS, SLOT_BYTES, takeRing, type StagingRing } from '../../core/media/staging-slots';
import { chunked, describeMediaStoreContract } from '../helpers/media-store-contract';

function folderStore(settings: FolderResumableSettings, writes?: FolderWriteSettings) {
  const root = mkdtempSync(path.join(os.tmpdir(), 'vps-media-unit-'));
  return {
    root,
    store: new FolderMediaStore(root, settings, writes),
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

// The path of a folder that takes no direct writes, or of a write that finds every slot taken.
describeMediaStoreContract(
  'folder store writing through the page cache',
  async () => folderStore({ checkpointEveryMs: 0 }, { direct: false }),
  {
    largeBytes: 12 * 1024 * 1024,
  },
);

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

describe('folder store direct writes', () => {
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

  /** Every ring of aligned memory, taken until the test gives them back. */
  function takeAllRings(): StagingRing[] {
    const rings: StagingRing[] = [];
    for (let ring = takeRing(); ring; ring = takeRing()) rings.push(ring);
    return rings;
  }

  /** Waits until every ring is free again (a write gives its ring back once its last write and hash are done). */
  async function ringsFree(): Promise<number> {
    for (let tries = 0; tries < 500; tries++) {
      const rings = takeAllRings();
      for (const ring of rings) ring.release();
      if (rings.length === RINGS_PER_PROCESS) return rings.length;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return takeAllRings().length;
  }

  it('takes this folder, says so, and stores files of any length byte for byte (the last write padded, then cut back)', async () => {
    const t = folderStore({ checkpointEveryMs: 0 });
    try {
      await t.store.check();
      expect(t.store.description).toMatch(/\(direct writes\)$/);
      for (const length of [1, 4095, 4097, SLOT_BYTES, 3 * SLOT_BYTES + 12_345, 9 * SLOT_BYTES - 1]) {
        const bytes = randomBytes(length);
        const stored = await t.store.write(`videos/vid_${length}`, chunked(bytes, 64 * 1024 + 7), { maxBytes: length });
        expect({ size: stored.sizeBytes, sha256: stored.sha256 }).toEqual({ size: length, sha256: sha256(bytes) });
        expect(readFileSync(path.join(t.root, 'videos', `vid_${length}`)).equals(bytes)).toBe(true);
      }
      expect(await t.leftovers()).toHaveLength(6);
      expect(await ringsFree()).toBe(RINGS_PER_PROCESS);
    } finally {
      await t.cleanup();
    }
  });

  it('resumes from a checkpoint at an unaligned offset, as writes through the page cache gave, hashing the stored part from the disk', async () => {
    const t = folderStore({ checkpointEveryMs: 0, bootId: 'boot-a' });
    try {
      const bytes = randomBytes(5 * SLOT_BYTES + 777);
      const offset = 2 * SLOT_BYTES + 4096 * 3 + 1001;
      // The interrupted attempt's file: its checkpointed part, then a torn tail the resume must cut off.
      mkdirSync(path.join(t.root, 'videos'));
      writeFileSync(partialFileOf(path.join(t.root, 'videos', 'vid_r')), Buffer.concat([bytes.subarray(0, offset), randomBytes(5000)]));
      const writing = await t.store.resumableWrite('videos/vid_r', { offset, bootId: 'boot-a' });
      expect(writing.offset).toBe(offset);
      const stored = await writing.complete(chunked(bytes.subarray(offset), 64 * 1024), { maxBytes: bytes.length });
      expect({ size: stored.sizeBytes, sha256: stored.sha256 }).toEqual({ size: bytes.length, sha256: sha256(bytes) });
      expect(stored.head.equals(bytes.subarray(0, 4096))).toBe(true);
      expect(readFileSync(path.join(t.root, 'videos', 'vid_r')).equals(bytes)).toBe(true);
    } finally {
      await t.cleanup();
    }
  });

  it('writes through the page cache when every slot of aligned memory is taken', async () => {
    const t = folderStore({ checkpointEveryMs: 0 });
    const rings = takeAllRings();
    try {
      expect(rings).toHaveLength(RINGS_PER_PROCESS);
      const bytes = randomBytes(3 * SLOT_BYTES + 5);
      const stored = await t.store.write('videos/vid_f', chunked(bytes, 64 * 1024), { maxBytes: bytes.length });
      expect(stored.sha256).toBe(sha256(bytes));
      expect(readFileSync(path.join(t.root, 'videos', 'vid_f')).equals(bytes)).toBe(true);
    } finally {
      for (const ring of rings) ring.release();
      await t.cleanup();
    }
  });

  it('keeps writes at once apart, more of them than there are rings (the rest through the page cache)', async () => {
    const t = folderStore({ checkpointEveryMs: 0 });
    try {
      const files = Array.from({ length: RINGS_PER_PROCESS + 4 }, (_, i) => randomBytes(3 * SLOT_BYTES + 1000 * i));
      const stored = await Promise.all(
        files.map((bytes, i) => t.store.write(`videos/vid_m${i}`, chunked(bytes, 64 * 1024), { maxBytes: bytes.length })),
      );
      expect(stored.map((s) => s.sha256)).toEqual(files.map(sha256));
      files.forEach((bytes, i) => expect(readFileSync(path.join(t.root, 'videos', `vid_m${i}`)).equals(bytes)).toBe(true));
      expect(await ringsFree()).toBe(RINGS_PER_PROCESS);
    } finally {
      await t.cleanup();
    }
  });

  it('gives its slots back after a write that fails midway', async () => {
    const t = folderStore({ checkpointEveryMs: 0 });
    try {
      const bytes = randomBytes(6 * SLOT_BYTES);
      const cut = Readable.from(
        (async function* () {
          yield* chunked(bytes.subarray(0, 5 * SLOT_BYTES + 3), 64 * 1024);
          throw new Error('connection reset');
        })(),
      );
      await expect(t.store.write('videos/vid_c', cut, { maxBytes: bytes.length })).rejects.toThrow('connection reset');
      await expect(t.store.write('videos/vid_c', chunked(bytes, 64 * 1024), { maxBytes: SLOT_BYTES })).rejects.toThrow(/larger/i);
      expect(await t.leftovers()).toEqual([]);
      expect(await ringsFree()).toBe(RINGS_PER_PROCESS);
    } finally {
      await t.cleanup();
    }
  });

  it('probes with a one-page direct write (taken here; a missing folder, a failure that may pass), and says when configured off', async () => {
    const t = folderStore({ checkpointEveryMs: 0 });
    try {
      expect(await probeDirectWrite(t.root)).toEqual({ taken: true });
      expect(await t.leftovers()).toEqual([]);
      const missing = await probeDirectWrite(path.join(t.root, 'no-such-folder'));
      expect(missing).toMatchObject({ taken: false, lasting: false, reason: expect.stringMatching(/ENOENT/) });
      const configured = new FolderMediaStore(t.root, { checkpointEveryMs: 0 }, { direct: false });
      await configured.check();
      expect(configured.description).toMatch(/through the page cache, as configured/);
    } finally {
      await t.cleanup();
    }
  });
});
