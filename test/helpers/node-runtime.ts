/** Which Node.js runs what: the major package.json's engines names, and the machine's own `node`. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './processes';

/** N of package.json's `"engines": { "node": ">=N" }`. */
export function engineMajor(): number {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const major = /^>=(\d+)$/.exec(pkg.engines.node)?.[1];
  if (!major) throw new Error(`package.json engines.node is not of the form ">=N": ${pkg.engines.node}`);
  return Number(major);
}

/** PATH without the node_modules/.bin folders that npm scripts and npx put first: a shell's PATH. */
export function withoutProjectBin(pathValue = process.env.PATH ?? ''): string {
  return pathValue
    .split(path.delimiter)
    .filter((dir) => !dir.endsWith(`${path.sep}node_modules${path.sep}.bin`))
    .join(path.delimiter);
}

/** The `node` a shell finds on this machine, and its version, e.g. /usr/bin/node and 'v20.20.2'. */
export function machineNode(): { path: string; version: string } {
  for (const dir of withoutProjectBin().split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    try {
      return { path: candidate, version: execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim() };
    } catch {
      continue; // no runnable node in this folder
    }
  }
  throw new Error('no node on PATH outside node_modules/.bin');
}
