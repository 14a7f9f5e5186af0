/**
 * Media under one local folder: the embedded default. Writes land under a temporary name and are
 * renamed into place, so a reader never sees half a file. Only one machine's processes can share
 * it, which is why every multi-process deployment uses the S3 store instead. Writes go around the
 * page cache when the folder's file system takes that (direct-file-output.ts), found out once by a
 * probe.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, constants, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import type { Readable } from 'node:stream';
import {
  beginFolderResumableWrite,
  discardFolderResumableWrite,
  FOLDER_CHECKPOINT_EVERY_MS,
  type FolderResumableSettings,
} from './folder-resumable-write';
import { probeDirectWrite } from './direct-file-output';
import { writeAfter } from './folder-sink';
import type { ResumableWrite, ResumePoint } from './resumable-write';
import { checkedKey, MediaNotFoundError, STAGING_PREFIX, type MediaStore, type StoredMedia, type WriteOptions } from './storage';

export interface FolderWriteSettings {
  /** Writes around the page cache where the folder takes them; false: always through it. */
  direct: boolean;
}

export class FolderMediaStore implements MediaStore {
  /** Whether writes go around the page cache, once the probe has answered for good. */
  private directWrites: Promise<boolean> | undefined;
  private writeMode = 'writes not tried yet';

  constructor(
    readonly root: string,
    private readonly resumable: FolderResumableSettings = { checkpointEveryMs: FOLDER_CHECKPOINT_EVERY_MS },
    private readonly writes: FolderWriteSettings = { direct: true },
  ) {}

  get description(): string {
    return `folder ${this.root} (${this.writeMode})`;
  }

  async check(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
      await access(this.root, constants.W_OK);
    } catch (err) {
      throw new Error(`media folder ${this.root} is not writable: ${(err as Error).message}`);
    }
    await this.direct();
  }

  /** Whether this write goes around the page cache: probed until the folder answers for good. */
  private direct(): Promise<boolean> {
    if (!this.writes.direct) {
      this.writeMode = 'writes through the page cache, as configured';
      return Promise.resolve(false);
    }
    if (this.directWrites) return this.directWrites;
    const probing = probeDirectWrite(this.root).then((probe) => {
      if (probe.taken) this.writeMode = 'direct writes';
      else this.writeMode = `writes through the page cache: a direct write failed (${probe.reason})`;
      if (!probe.taken && !probe.lasting) this.directWrites = undefined;
      return probe.taken;
    });
    this.directWrites = probing;
    return probing;
  }

  private file(key: string): string {
    return path.join(this.root, checkedKey(key));
  }

  async write(key: string, source: Readable | AsyncIterable<Uint8Array>, opts: WriteOptions): Promise<StoredMedia> {
    const target = this.file(key);
    await mkdir(path.dirname(target), { recursive: true });
    const partial = `${target}.part-${randomBytes(6).toString('hex')}`;
    const direct = await this.direct();
    const file = await open(partial, 'wx');
    try {
      const stored = await writeAfter(file, partial, 0, source, { ...opts, direct });
      await rename(partial, target);
      return stored;
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  async open(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const stream = createReadStream(this.file(key), range);
    try {
      await once(stream, 'ready');
      return stream;
    } catch (err) {
      stream.destroy();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new MediaNotFoundError(key);
      throw err;
    }
  }

  async size(key: string): Promise<number | undefined> {
    try {
      return (await stat(this.file(key))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async resumableWrite(key: string, resume?: ResumePoint): Promise<ResumableWrite> {
    const target = this.file(key);
    await mkdir(path.dirname(target), { recursive: true });
    return beginFolderResumableWrite(target, resume, { ...this.resumable, direct: await this.direct() });
  }

  async discardResumable(key: string): Promise<void> {
    await discardFolderResumableWrite(this.file(key));
  }

  async remove(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  async move(from: string, to: string): Promise<void> {
    const target = this.file(to);
    await mkdir(path.dirname(target), { recursive: true });
    try {
      // One folder, one file system: a rename, whatever the file's size.
      await rename(this.file(from), target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new MediaNotFoundError(from);
      throw err;
    }
  }

  async removeStagedBefore(olderThan: Date): Promise<number> {
    const folder = path.join(this.root, STAGING_PREFIX);
    let names: string[];
    try {
      names = await readdir(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (const name of names) {
      // Finished files and the partial ones a write left: both are named by no record.
      const file = path.join(folder, name);
      const info = await stat(file).catch(() => undefined);
      if (!info || info.mtime >= olderThan) continue;
      await rm(file, { force: true });
      removed++;
    }
    return removed;
  }

  close(): void {}
}
