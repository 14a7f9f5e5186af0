/**
 * Where the official APIs are and which app credentials the service uses there. In the embedded
 * mode, a platform left unconfigured is the sandbox emulator in the same process, with the
 * emulator's own app credentials, which it reads from here too so that signatures agree.
 */
import type { Env } from '../../config/config';
import type { ShopSettings } from './shop/client';
import type { UpstreamTimeouts } from './http';
import type { VplatSettings } from './vplat/client';

/** The emulator's app credentials: known to anyone, so valid only against the emulator. */
export const SANDBOX_APP = {
  vplatAppId: 'vps-sandbox-app',
  vplatAppSecret: 'vps-sandbox-app-secret',
  shopAppKey: 'vps-sandbox-shop-app',
  shopAppSecret: 'vps-sandbox-shop-app-secret',
} as const;

/** Where the emulator serves the consent pages: the platforms' own paths, on the emulator's origin. */
export const SANDBOX_AUTHORIZE_PATHS = { vplat: '/v2/auth/authorize', shop: '/alliance/creator/auth' } as const;

export interface UpstreamSettings {
  vplat: VplatSettings;
  shop: ShopSettings;
  timeouts: UpstreamTimeouts;
}

/**
 * `emulatorUrl` is the emulator in this process, which stands in for a platform whose settings are
 * unset (the embedded mode only: cli/serve.ts). Without it every platform must be configured, so
 * the emulator's published credentials never verify a webhook the real platform would send.
 */
export function resolveUpstream(env: Env, emulatorUrl?: string): UpstreamSettings {
  const emulator = () => {
    if (!emulatorUrl) throw new Error('the platform settings are unset and no emulator runs in this process');
    return emulatorUrl;
  };
  return {
    vplat: env.VPLAT_API_BASE
      ? { baseUrl: env.VPLAT_API_BASE, appId: env.VPLAT_APP_ID!, appSecret: env.VPLAT_APP_SECRET! }
      : {
          baseUrl: emulator(),
          appId: env.VPLAT_APP_ID ?? SANDBOX_APP.vplatAppId,
          appSecret: env.VPLAT_APP_SECRET ?? SANDBOX_APP.vplatAppSecret,
          authorizeUrl: emulator() + SANDBOX_AUTHORIZE_PATHS.vplat,
        },
    shop: env.SHOP_API_BASE
      ? {
          baseUrl: env.SHOP_API_BASE,
          authBaseUrl: env.SHOP_AUTH_BASE ?? env.SHOP_API_BASE,
          appKey: env.SHOP_APP_KEY!,
          appSecret: env.SHOP_APP_SECRET!,
        }
      : {
          baseUrl: emulator(),
          authBaseUrl: env.SHOP_AUTH_BASE ?? emulator(),
          appKey: env.SHOP_APP_KEY ?? SANDBOX_APP.shopAppKey,
          appSecret: env.SHOP_APP_SECRET ?? SANDBOX_APP.shopAppSecret,
          authorizeUrl: emulator() + SANDBOX_AUTHORIZE_PATHS.shop,
        },
    timeouts: { connectMs: env.UPSTREAM_CONNECT_TIMEOUT_MS, totalMs: env.UPSTREAM_TIMEOUT_MS },
  };
}

/**
 * The settings that point a process at an emulator running elsewhere, with its published
 * credentials: for the tests, drills and benchmarks that run the roles as separate processes.
 */
export function emulatorPlatformEnv(emulatorUrl: string): Record<string, string> {
  return {
    VPLAT_API_BASE: emulatorUrl,
    VPLAT_APP_ID: SANDBOX_APP.vplatAppId,
    VPLAT_APP_SECRET: SANDBOX_APP.vplatAppSecret,
    SHOP_API_BASE: emulatorUrl,
    SHOP_APP_KEY: SANDBOX_APP.shopAppKey,
    SHOP_APP_SECRET: SANDBOX_APP.shopAppSecret,
  };
}
