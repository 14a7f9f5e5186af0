/**
 * The API commands' connection to the service, read once from flags, then `VPS_API_KEY` and
 * `VPS_BASE_URL`, then the embedded mode's files (so `vps videos list` works right after
 * `npm start` with nothing set); and the one place their failures become exit codes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { createVpsClient, type ClientConfig, type VpsClient } from '../sdk/client';
import { VpsApiError, VpsNetworkError } from '../sdk/errors';
import { EXIT } from './exit-codes';
import { UsageError } from './usage-error';

export interface ApiFlags {
  apiKey?: string;
  baseUrl?: string;
}

function readDataFile(env: NodeJS.ProcessEnv, name: string): string | undefined {
  try {
    return fs.readFileSync(path.join(path.resolve(env.VPS_DATA_DIR || '.data'), name), 'utf8').trim() || undefined;
  } catch {
    return undefined; // no embedded instance here: the value must come from a flag or the environment
  }
}

export function apiClientConfig(flags: ApiFlags, env: NodeJS.ProcessEnv = process.env): Pick<ClientConfig, 'baseUrl' | 'apiKey'> {
  const apiKey = flags.apiKey ?? env.VPS_API_KEY ?? readDataFile(env, 'dev-api-key');
  if (!apiKey) throw new UsageError('no API key: pass --api-key or set VPS_API_KEY');
  const baseUrl = flags.baseUrl ?? env.VPS_BASE_URL ?? `http://127.0.0.1:${env.PORT || 8080}`;
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UsageError(`--base-url: ${baseUrl} is not an http(s) URL`);
  }
  // A key pasted with its prefix would be sent as "Bearer Bearer …" and refused: take the bare key.
  return { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey: apiKey.replace(/^Bearer\s+/i, '').trim() };
}

/** The client for a command, configured from the global flags it inherited. */
export function clientFor(cmd: Command, extra: Partial<ClientConfig> = {}): VpsClient {
  const flags = cmd.optsWithGlobals<ApiFlags>();
  return createVpsClient({ ...apiClientConfig(flags), userAgent: 'vps-cli', ...extra });
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
