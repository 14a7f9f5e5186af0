/**
 * Starts the emulator of the official platform APIs (role `sandbox`): state in memory, tokens
 * that outlive restarts (they carry their own signature), a clock tests can move.
 */
import type { Env } from '../config/config';
import type { Logger } from '../core/logger';
import { SANDBOX_APP } from '../core/upstream/settings';
import { AccountRegistry } from './accounts';
import { buildSandboxApp } from './app';
import { SandboxClock } from './clock';
import type { SandboxContext, SandboxSettings } from './context';
import { FaultPlan } from './faults';
import { OutcomeQueue } from './outcomes';
import { CallJournal } from './journal';
import { PostStore } from './posts';
import { TokenMint } from './tokens';
import { WebhookPusher } from './webhooks';
import { LISTEN_BACKLOG } from '../core/net/listen-backlog';

export interface Sandbox {
  url: string;
  context: SandboxContext;
  close(): Promise<void>;
}

/** Settings from configuration. The app credentials are the ones the service uses against the emulator. */
export function sandboxSettings(env: Env): SandboxSettings & { clockSpeed: number } {
  return {
    vplatAppId: env.VPLAT_API_BASE ? SANDBOX_APP.vplatAppId : (env.VPLAT_APP_ID ?? SANDBOX_APP.vplatAppId),
    vplatAppSecret: env.VPLAT_API_BASE ? SANDBOX_APP.vplatAppSecret : (env.VPLAT_APP_SECRET ?? SANDBOX_APP.vplatAppSecret),
    shopAppKey: env.SHOP_API_BASE ? SANDBOX_APP.shopAppKey : (env.SHOP_APP_KEY ?? SANDBOX_APP.shopAppKey),
    shopAppSecret: env.SHOP_API_BASE ? SANDBOX_APP.shopAppSecret : (env.SHOP_APP_SECRET ?? SANDBOX_APP.shopAppSecret),
    accessTokenTtlSeconds: { business: env.SANDBOX_ACCESS_TOKEN_TTL_S ?? 86_400, shop: env.SANDBOX_ACCESS_TOKEN_TTL_S ?? 604_800 },
    refreshTokenTtlSeconds: 31_536_000,
    publishProcessingMs: env.SANDBOX_PUBLISH_PROCESSING_MS,
    postIdDelayMs: env.SANDBOX_POST_ID_DELAY_MS,
    downloadTimeoutMs: 30_000,
    webhookRetryDelaysMs: env.SANDBOX_WEBHOOK_RETRY_MS,
    clockSpeed: env.SANDBOX_CLOCK_SPEED,
  };
}

export async function startSandbox(opts: {
  host: string;
  port: number;
  logger: Logger;
  settings: SandboxSettings;
  clockSpeed?: number;
}): Promise<Sandbox> {
  const clock = new SandboxClock({ speed: opts.clockSpeed ?? 1 });
  let baseUrl = `http://${opts.host}:${opts.port}`;
  const context: SandboxContext = {
    settings: opts.settings,
    clock,
    accounts: new AccountRegistry(() => clock.now()),
    // Token MACs are keyed by both app secrets, so tokens minted for one deployment fail in another.
    tokens: new TokenMint(`${opts.settings.vplatAppSecret}\u0000${opts.settings.shopAppSecret}`, () => clock.nowSeconds()),
    faults: new FaultPlan(),
    webhooks: new WebhookPusher({
      appId: opts.settings.vplatAppId,
      appSecret: opts.settings.vplatAppSecret,
      retryDelaysMs: opts.settings.webhookRetryDelaysMs,
      nowSeconds: () => clock.nowSeconds(),
      logger: opts.logger,
    }),
    posts: new PostStore(() => clock.now()),
    outcomes: new OutcomeQueue(),
    journal: new CallJournal(),
    logger: opts.logger,
    baseUrl: () => baseUrl,
  };
  const app = await buildSandboxApp(context);
  await app.listen({ host: opts.host, port: opts.port, backlog: LISTEN_BACKLOG });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const host = opts.host === '0.0.0.0' ? '127.0.0.1' : opts.host;
  baseUrl = `http://${host}:${port}`;
  return {
    url: baseUrl,
    context,
    async close() {
      context.webhooks.close();
      clock.stop();
      await app.close();
    },
  };
}
