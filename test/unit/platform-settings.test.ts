/**
 * Which platform settings a start-up needs, and whether the emulator's published credentials may
 * be trusted: pure decisions of cli/serve.ts and core/upstream/settings.ts, before anything starts.
 */
import { loadConfig, PLATFORM_SETTINGS } from '../../config/config';
import { missingSettings, parseRoles, publicCredentialProblems } from '../../cli/serve';
import { emulatorPlatformEnv, resolveUpstream, SANDBOX_APP } from '../../core/upstream/settings';

const STORES = { DATABASE_URL: 'postgres://vps@db:5432/vps', TEMPORAL_ADDRESS: 'temporal:7233', VPS_ENCRYPTION_KEY: 'ab'.repeat(32) };
const PLATFORMS = {
  VPLAT_API_BASE: 'https://business-api.example.com',
  VPLAT_APP_ID: 'app',
  VPLAT_APP_SECRET: 'app-secret',
  SHOP_API_BASE: 'https://open-api.shop.example.com',
  SHOP_APP_KEY: 'shop-app',
  SHOP_APP_SECRET: 'shop-secret',
};

function missing(spec: string, env: Record<string, string>): string[] {
  const { roles, all } = parseRoles(spec);
  return missingSettings(roles, loadConfig(env).env, all);
}

describe("the platforms' settings a start-up needs", () => {
  it.each(['core', 'worker', 'gateway,core', 'core,sandbox', 'worker,sandbox'])('requires all six for --role %s', (spec) => {
    expect(missing(spec, STORES)).toEqual([...PLATFORM_SETTINGS]);
    expect(missing(spec, { ...STORES, ...PLATFORMS })).toEqual([]);
  });

  it('requires none for a gateway or an emulator on its own', () => {
    expect(missing('gateway', { CORE_URL: 'http://core:8081' })).toEqual([]);
    expect(missing('sandbox', {})).toEqual([]);
  });

  it('lets the emulator stand in only in the embedded mode: --role all without DATABASE_URL', () => {
    expect(missing('all', {})).toEqual([]);
    expect(missing('all', { DATABASE_URL: STORES.DATABASE_URL })).toEqual([...PLATFORM_SETTINGS]);
    expect(missing('all', { DATABASE_URL: STORES.DATABASE_URL, ...PLATFORMS })).toEqual([]);
  });

  it('names credentials missing beside a platform origin, each on its own', () => {
    expect(() => loadConfig({ VPLAT_API_BASE: PLATFORMS.VPLAT_API_BASE, VPLAT_APP_ID: 'app' })).toThrow(
      'VPLAT_APP_SECRET: required with VPLAT_API_BASE',
    );
    expect(() => loadConfig({ SHOP_API_BASE: PLATFORMS.SHOP_API_BASE })).toThrow(
      /SHOP_APP_KEY: required with SHOP_API_BASE[\s\S]*SHOP_APP_SECRET: required with SHOP_API_BASE/,
    );
  });
});

describe("the emulator's published credentials", () => {
  const problems = (env: Record<string, string>) => publicCredentialProblems(loadConfig(env).env);

  it('are refused for a platform that is not on this machine', () => {
    expect(problems({ ...PLATFORMS, VPLAT_APP_SECRET: SANDBOX_APP.vplatAppSecret })).toEqual([
      expect.stringContaining("VPLAT_APP_SECRET is the sandbox emulator's published secret"),
    ]);
    expect(problems({ ...PLATFORMS, SHOP_APP_SECRET: SANDBOX_APP.shopAppSecret })).toEqual([
      expect.stringContaining("SHOP_APP_SECRET is the sandbox emulator's published secret"),
    ]);
  });

  it.each(['http://127.0.0.1:8090', 'http://localhost:8090', 'http://[::1]:8090', 'http://127.9.9.9:1'])(
    'are accepted for an emulator at %s',
    (origin) => {
      expect(problems(emulatorPlatformEnv(origin))).toEqual([]);
    },
  );

  it('never verify a webhook unless the emulator runs in this process', () => {
    expect(() => resolveUpstream(loadConfig({}).env)).toThrow('no emulator runs in this process');
    expect(resolveUpstream(loadConfig(PLATFORMS).env).vplat.appSecret).toBe(PLATFORMS.VPLAT_APP_SECRET);
    expect(resolveUpstream(loadConfig({}).env, 'http://127.0.0.1:8090').vplat).toMatchObject({
      baseUrl: 'http://127.0.0.1:8090',
      appSecret: SANDBOX_APP.vplatAppSecret,
    });
  });
});
