/**
 * The sandbox emulator inside the test process, over real HTTP on loopback, with short durations,
 * and the service's upstream client pointed at it. `control` wraps the `/_sandbox/` API.
 */
import { createLogger } from '../../core/logger';
import { createUpstream, type Upstream } from '../../core/upstream';
import { SANDBOX_APP, SANDBOX_AUTHORIZE_PATHS } from '../../core/upstream/settings';
import type { SandboxSettings } from '../../sandbox/context';
import { startSandbox, type Sandbox } from '../../sandbox/server';

export const TEST_SANDBOX_SETTINGS: SandboxSettings = {
  ...SANDBOX_APP,
  accessTokenTtlSeconds: { business: 86_400, shop: 604_800 },
  refreshTokenTtlSeconds: 31_536_000,
  publishProcessingMs: 200,
  postIdDelayMs: 400,
  downloadTimeoutMs: 2_000,
  webhookRetryDelaysMs: [100, 200, 400],
};

export interface Tokens {
  access_token: string;
  refresh_token: string;
  access_token_expires_at: number;
  refresh_token_expires_at: number;
}

export interface TestSandbox {
  url: string;
  sandbox: Sandbox;
  upstream: Upstream;
  control<T = Record<string, unknown>>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** A new account with a fresh token pair. */
  account(
    platform: 'business' | 'shop',
    opts?: { openId?: string; username?: string; isPrivate?: boolean },
  ): Promise<{ openId: string; username: string; tokens: Tokens }>;
  close(): Promise<void>;
}

export async function startTestSandbox(
  opts: { settings?: Partial<SandboxSettings>; timeouts?: { connectMs: number; totalMs: number } } = {},
): Promise<TestSandbox> {
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'sandbox');
  const settings = { ...TEST_SANDBOX_SETTINGS, ...opts.settings };
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, logger, settings });
  const upstream = createUpstream({
    vplat: {
      baseUrl: sandbox.url,
      appId: settings.vplatAppId,
      appSecret: settings.vplatAppSecret,
      authorizeUrl: sandbox.url + SANDBOX_AUTHORIZE_PATHS.vplat,
    },
    shop: {
      baseUrl: sandbox.url,
      authBaseUrl: sandbox.url,
      appKey: settings.shopAppKey,
      appSecret: settings.shopAppSecret,
      authorizeUrl: sandbox.url + SANDBOX_AUTHORIZE_PATHS.shop,
    },
    timeouts: opts.timeouts ?? { connectMs: 1_000, totalMs: 2_000 },
  });
  const control = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${sandbox.url}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as T & { error?: string };
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${json.error ?? ''}`);
    return json;
  };
  return {
    url: sandbox.url,
    sandbox,
    upstream,
    control,
    async account(platform, o = {}) {
      const { account, tokens } = await control<{ account: { openId: string; username: string }; tokens: Tokens }>(
        'POST',
        '/_sandbox/accounts',
        { platform, ...o },
      );
      return { openId: account.openId, username: account.username, tokens };
    },
    async close() {
      await upstream.close();
      await sandbox.close();
    },
  };
}

/** Calls an official path directly, as a contract test does: raw status, headers and envelope. */
export async function official(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  opts: { token?: string; query?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
): Promise<{
  status: number;
  headers: Headers;
  body: { code: number; message: string; request_id: string; data: Record<string, unknown> };
}> {
  const target = new URL(path, url);
  for (const [k, v] of Object.entries(opts.query ?? {})) target.searchParams.set(k, v);
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers['access-token'] = opts.token;
  let body: string | undefined;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(target, { method, headers, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as never };
}

/**
 * The value with the expiry of the emulator's temporary picture URLs masked: two reads a second
 * apart hand out the same picture with expiries a second apart.
 */
export function withoutUrlExpiry<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replace(/x-expires=\d+/g, 'x-expires=*')) as T;
}
