/**
 * Secrets of the embedded mode, created on first start and kept under the data folder with owner-only
 * permissions, so restarts keep the same admin token and can still open sealed credentials.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function readOrCreateSecret(dataDir: string, name: string, make: () => string): string {
  const file = path.join(dataDir, name);
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const value = make();
  fs.writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return value;
}

export const makeAdminToken = () => `vpsadm_${randomBytes(32).toString('base64url')}`;
export const makeEncryptionKey = () => randomBytes(32).toString('hex');
