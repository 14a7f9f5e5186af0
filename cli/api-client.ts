/**
 * The API commands' connection to the service, read once from flags, then `VPS_API_KEY` and
 * `VPS_BASE_URL`, then the files a running service keeps under the data folder (so `vps videos
 * list` works right after `npm start` with nothing set, on whatever port it took, from any folder
 * of the checkout: see data-dir.ts); and the one place their failures become exit codes.
 */
import net from 'node:net';
import type { Command } from 'commander';
import { BASE_URL_FILE } from '../core/embedded/base-url-file';
import { createVpsClient, type ClientConfig, type VpsClient } from '../sdk/client';
import { VpsApiError, VpsNetworkError } from '../sdk/errors';
import { describeDataFile, findDataDir, readDataFile } from './data-dir';
import { EXIT } from './exit-codes';
import { UsageError } from './usage-error';

export interface ApiFlags {
  apiKey?: string;
  baseUrl?: string;
}

/** Where the service is when nothing says otherwise: the gateway's default address. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/**
 * How long the first connection to the service may take. A service on this machine accepts at once
 * and a remote one within a round trip or two; an address that has not answered in 3 s is a wrong
 * or filtered one, and a person at a terminal should hear so rather than wait out the retries.
 */
export const CONNECT_TIMEOUT_MS = 3_000;

export interface ApiTarget extends Pick<ClientConfig, 'baseUrl' | 'apiKey'> {
  /** Where baseUrl came from, for messages: the flag, the variable, the file's path, or the default. */
  baseUrlFrom: 'flag' | 'env' | 'file' | 'default';
  /** The data folder's address file, read or not (or where it was looked for, when no data folder was found). */
  baseUrlFile: string;
}

const DEV_API_KEY_FILE = 'dev-api-key';

export function apiClientConfig(flags: ApiFlags, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ApiTarget {
  const dataDir = findDataDir(env, cwd);
  const apiKey = flags.apiKey ?? env.VPS_API_KEY ?? readDataFile(dataDir, DEV_API_KEY_FILE);
  if (!apiKey)
    throw new UsageError(
      `no API key: pass --api-key or set VPS_API_KEY (looked for a running service's ${describeDataFile(dataDir, DEV_API_KEY_FILE)}, ` +
        'which npm start writes)',
    );
  const fromFile = readDataFile(dataDir, BASE_URL_FILE);
  const [baseUrl, baseUrlFrom]: [string, ApiTarget['baseUrlFrom']] =
    flags.baseUrl !== undefined
      ? [flags.baseUrl, 'flag']
      : env.VPS_BASE_URL
        ? [env.VPS_BASE_URL, 'env']
        : fromFile
          ? [fromFile, 'file']
          : [DEFAULT_BASE_URL, 'default'];
  const baseUrlFile = describeDataFile(dataDir, BASE_URL_FILE);
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UsageError(`${describeSource(baseUrlFrom, baseUrlFile)}: ${baseUrl} is not an http(s) URL`);
  }
  // A key pasted with its prefix would be sent as "Bearer Bearer …" and refused: take the bare key.
  return { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey: apiKey.replace(/^Bearer\s+/i, '').trim(), baseUrlFrom, baseUrlFile };
}

function describeSource(from: ApiTarget['baseUrlFrom'], file: string): string {
  return { flag: '--base-url', env: 'VPS_BASE_URL', file, default: 'the default address' }[from];
}

/** What to do about an address that does not answer, by where it came from. */
function remedy(target: ApiTarget): string {
  const set = "pass --base-url or set VPS_BASE_URL to the service's address";
  switch (target.baseUrlFrom) {
    case 'flag':
      return 'check --base-url';
    case 'env':
      return 'check VPS_BASE_URL, or pass --base-url';
    case 'file':
      return `the service that wrote ${target.baseUrlFile} is no longer running there: start it again (npm start), or ${set}`;
    case 'default':
      return `no running service wrote ${target.baseUrlFile}: start one (npm start), or ${set}`;
  }
}

/**
 * Fails fast, naming the address and where it came from, when nothing accepts a connection there.
 * Without this a refused connection is a network failure the client retries with backoff (about
 * 6 s) before the same error; a service that goes away later in a long command is still retried.
 */
export async function checkReachable(target: ApiTarget): Promise<void> {
  const url = new URL(target.baseUrl);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const reason = await new Promise<string | undefined>((resolve) => {
    const socket = net.connect({ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port, timeout: CONNECT_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`);
    });
    socket.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'ECONNREFUSED' ? 'connection refused' : (err.code ?? err.message)),
    );
  });
  if (reason !== undefined) {
    throw new VpsNetworkError(
      `cannot reach ${target.baseUrl} (from ${describeSource(target.baseUrlFrom, target.baseUrlFile)}): ${reason}; ${remedy(target)}`,
    );
  }
}

/** The client for a command, configured from the global flags it inherited, once its service answers. */
export async function clientFor(cmd: Command, extra: Partial<ClientConfig> = {}): Promise<VpsClient> {
  const target = apiClientConfig(cmd.optsWithGlobals<ApiFlags>());
  await checkReachable(target);
  return createVpsClient({ baseUrl: target.baseUrl, apiKey: target.apiKey, userAgent: 'vps-cli', ...extra });
}

/**
 * Runs an API command: an API error prints `{code, message, data}` on stderr and exits 1, a
 * network failure prints `{error: "network", message}` and exits 3. Anything else is a bug and
 * propagates.
 */
export async function runApi(action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (err) {
    if (err instanceof VpsApiError) {
      process.stderr.write(`${JSON.stringify({ code: err.code, message: err.message, data: err.data })}\n`);
      process.exitCode = EXIT.apiError;
      return;
    }
    if (err instanceof VpsNetworkError) {
      process.stderr.write(`${JSON.stringify({ error: 'network', message: err.message })}\n`);
      process.exitCode = EXIT.network;
      return;
    }
    throw err;
  }
}
