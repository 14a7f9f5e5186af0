/**
 * Where the client commands look for a local service's files (its dev API key, the address it
 * listens on, the admin token): VPS_DATA_DIR when set, read against the current folder as the
 * service reads it; else the nearest `.data` folder in the current folder or one above it. A
 * service started by `npm start` keeps them in its checkout's `.data`, so a command run from any
 * folder of that checkout finds them.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface DataDirSearch {
  /** The folder found (or named by VPS_DATA_DIR), if any. */
  dir: string | undefined;
  /** Where the search up started, for messages. */
  from: string;
}

const DATA_DIR_NAME = '.data';

export function findDataDir(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): DataDirSearch {
  const from = path.resolve(cwd);
  if (env.VPS_DATA_DIR) return { dir: path.resolve(cwd, env.VPS_DATA_DIR), from };
  for (let folder = from; ; folder = path.dirname(folder)) {
    const candidate = path.join(folder, DATA_DIR_NAME);
    if (isDirectory(candidate)) return { dir: candidate, from };
    if (path.dirname(folder) === folder) return { dir: undefined, from };
  }
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false; // absent or unreadable: not the service's folder
  }
}

/** A file of the data folder, trimmed; undefined when there is no folder, no file or nothing in it. */
export function readDataFile(search: DataDirSearch, name: string): string | undefined {
  if (!search.dir) return undefined;
  try {
    return fs.readFileSync(path.join(search.dir, name), 'utf8').trim() || undefined;
  } catch {
    return undefined; // no embedded instance there: the value must come from a flag or the environment
  }
}

/** The file's path when a folder was found, else where it was looked for: for messages. */
export function describeDataFile(search: DataDirSearch, name: string): string {
  return search.dir ? path.join(search.dir, name) : `${DATA_DIR_NAME}/${name} in ${search.from} or a folder above it`;
}
