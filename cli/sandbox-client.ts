/**
 * The sandbox emulator's control API (`/_sandbox/`, plain JSON), as `vps trigger` reaches it: where
 * the emulator is (`--sandbox-url`, then `VPS_SANDBOX_URL`, then the address a running embedded
 * service wrote to `<data folder>/sandbox-url`), and its calls. A service whose platform is the real
 * one has no emulator: that is `NoEmulatorError`, never a guess at some other address.
 */
import { SANDBOX_URL_FILE } from '../core/embedded/base-url-file';
import { VpsNetworkError } from '../sdk/errors';
import { describeDataFile, findDataDir, readDataFile } from './data-dir';
import { UsageError } from './usage-error';

/** The emulator answers on the same machine or network: a call that takes this long is not answered. */
const CONTROL_TIMEOUT_MS = 10_000;

/** The service cannot be made to see platform events from here: it is not backed by an emulator this command reaches. */
export class NoEmulatorError extends Error {
  override readonly name = 'NoEmulatorError';
}

/** The emulator refused a control call (a bad text, an unknown post or comment): its own words. */
export class SandboxRefusal extends Error {
  override readonly name = 'SandboxRefusal';
}

export interface SandboxTarget {
  url: string;
  /** Where the address came from, for messages. */
  from: string;
}

export function sandboxTarget(flag: string | undefined, serviceUrl: string, env: NodeJS.ProcessEnv = process.env): SandboxTarget {
  const dataDir = findDataDir(env);
  const fromFile = readDataFile(dataDir, SANDBOX_URL_FILE);
  const [url, from] =
    flag !== undefined
      ? [flag, '--sandbox-url']
      : env.VPS_SANDBOX_URL
        ? [env.VPS_SANDBOX_URL, 'VPS_SANDBOX_URL']
        : fromFile
          ? [fromFile, describeDataFile(dataDir, SANDBOX_URL_FILE)]
          : [undefined, ''];
  if (url === undefined) {
    throw new NoEmulatorError(
      `no sandbox emulator is known for ${serviceUrl}: vps trigger makes platform events in the emulator that stands in for ` +
        `the platform, and a production service has none (its events come from the platform only). A service started here ` +
        `with npm start writes its emulator's address to ${describeDataFile(dataDir, SANDBOX_URL_FILE)}; for an emulator elsewhere pass ` +
        `--sandbox-url or set VPS_SANDBOX_URL`,
    );
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UsageError(`${from}: ${url} is not an http(s) URL`);
  }
  return { url: url.replace(/\/+$/, ''), from };
}

export interface SandboxAccount {
  openId: string;
  platform: 'business' | 'shop';
  username: string;
}

/** A control call; the emulator's `{error}` answer becomes a SandboxRefusal, no answer a network error. */
export async function control<T>(target: SandboxTarget, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.url}${path}`, {
      method,
      headers: { 'user-agent': 'vps-cli', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
    });
  } catch (err) {
    const reason = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    throw new VpsNetworkError(`cannot reach the sandbox emulator at ${target.url} (from ${target.from}): ${reason}`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined; // not the emulator's answer: reported below with the status
  }
  if (res.ok && json !== undefined) return json as T;
  const said = (json as { error?: unknown } | undefined)?.error;
  if (typeof said === 'string') throw new SandboxRefusal(`the sandbox emulator refused ${method} ${path}: ${said}`);
  throw new NoEmulatorError(
    `${target.url} (from ${target.from}) answered ${method} ${path} with HTTP ${res.status}, not as the sandbox emulator does: it is not one`,
  );
}

/**
 * The emulator's account behind the seat. An account the emulator does not hold means the service
 * takes its platform events from somewhere else (the real platform, or another emulator), so an
 * event made here would never reach it.
 */
export async function emulatorAccount(target: SandboxTarget, accountId: string, serviceUrl: string): Promise<SandboxAccount> {
  const { accounts } = await control<{ accounts: SandboxAccount[] }>(target, 'GET', '/_sandbox/accounts');
  const account = Array.isArray(accounts) ? accounts.find((a) => a.openId === accountId) : undefined;
  if (!account) {
    throw new NoEmulatorError(
      `the service at ${serviceUrl} is not backed by the sandbox emulator at ${target.url} (from ${target.from}): ` +
        `the seat's account ${accountId} is not one of the emulator's, so its events come from elsewhere (the platform, ` +
        `for a production service, which has no emulator)`,
    );
  }
  return account;
}
