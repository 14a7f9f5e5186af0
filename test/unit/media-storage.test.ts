import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FolderMediaStore } from '../../core/media/folder-store';
import { describeMediaStoreContract } from '../helpers/media-store-contract';

describeMediaStoreContract(
  'folder store',
  async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'vps-media-unit-'));
    return {
      // A flush, and so a checkpoint, whenever none is running: files of 200 kB get several.
      store: new FolderMediaStore(root, { checkpointEveryMs: 0 }),
      // Every file, finished or partial, by its path under the root.
      leftovers: async () =>
        readdirSync(root, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
          .sort(),
      cleanup: async () => rmSync(root, { recursive: true, force: true }),
    };
  },
  { largeBytes: 200_000 },
);
