/**
 * Where the official APIs are and which app credentials the service uses there. With nothing
 * configured, both platforms are the sandbox emulator with its own app credentials, which the
 * emulator reads from here too so that signatures agree.
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

/** The emulator's address as a client reaches it: a wildcard listen address is reached on loopback. */
export function sandboxOrigin(env: Pick<Env, 'SANDBOX_HOST' | 'SANDBOX_PORT'>, listeningUrl?: string): string {
  if (listeningUrl) return listeningUrl;
  const host = env.SANDBOX_HOST === '0.0.0.0' || env.SANDBOX_HOST === '::' ? '127.0.0.1' : env.SANDBOX_HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${env.SANDBOX_PORT}`;
}

export function resolveUpstream(env: Env, sandboxUrl?: string): UpstreamSettings {
  const sandbox = sandboxOrigin(env, sandboxUrl);
  const shopBase = env.SHOP_API_BASE ?? sandbox;
  return {
    vplat: env.VPLAT_API_BASE
      ? { baseUrl: env.VPLAT_API_BASE, appId: env.VPLAT_APP_ID!, appSecret: env.VPLAT_APP_SECRET! }
      : {
          baseUrl: sandbox,
          appId: env.VPLAT_APP_ID ?? SANDBOX_APP.vplatAppId,
          appSecret: env.VPLAT_APP_SECRET ?? SANDBOX_APP.vplatAppSecret,
          authorizeUrl: sandbox + SANDBOX_AUTHORIZE_PATHS.vplat,
        },
    shop: env.SHOP_API_BASE
      ? { baseUrl: shopBase, authBaseUrl: env.SHOP_AUTH_BASE ?? shopBase, appKey: env.SHOP_APP_KEY!, appSecret: env.SHOP_APP_SECRET! }
      : {
          baseUrl: sandbox,
          authBaseUrl: env.SHOP_AUTH_BASE ?? sandbox,
          appKey: env.SHOP_APP_KEY ?? SANDBOX_APP.shopAppKey,
          appSecret: env.SHOP_APP_SECRET ?? SANDBOX_APP.shopAppSecret,
          authorizeUrl: sandbox + SANDBOX_AUTHORIZE_PATHS.shop,
        },
    timeouts: { connectMs: env.UPSTREAM_CONNECT_TIMEOUT_MS, totalMs: env.UPSTREAM_TIMEOUT_MS },
  };
}
