/**
 * Where a running gateway tells the `vps` client commands its address: `<data folder>/base-url`,
 * beside the dev key, holding the URL it really listens on (the port the system chose included).
 * Unlike the key, the address is only true while the process runs: a clean stop removes the file,
 * and a file left by a process that died is found out by the client on its first connection.
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export const BASE_URL_FILE = 'base-url';

/**
 * Beside it, while the service's platform is the emulator in the same process: the emulator's
 * address, where `vps trigger` has it make platform events. The same rules: written whole, true
 * only while the process runs.
 */
export const SANDBOX_URL_FILE = 'sandbox-url';

/**
 * The URL a client on this machine uses to reach a server listening at `address`: a wildcard
 * address (0.0.0.0, ::) accepts loopback connections, so it is named by 127.0.0.1.
 */
export function localBaseUrl(address: AddressInfo): string {
  const host = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Writes the file whole (through a rename), so a client never reads half an address. */
export function writeBaseUrl(dataDir: string, url: string, name = BASE_URL_FILE): void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, name);
  const partial = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(partial, `${url}\n`);
  fs.renameSync(partial, file);
}

/**
 * Removes the file if it still holds `url`: another gateway sharing the data folder may have
 * written its own address since, and that one is still true.
 */
export function removeBaseUrl(dataDir: string, url: string, name = BASE_URL_FILE): void {
  const file = path.join(dataDir, name);
  let current: string;
  try {
    current = fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (current === url) fs.rmSync(file, { force: true });
}
