/**
 * The official platforms' settings as a deployment meets them: outside the embedded mode no process
 * that calls the platforms or verifies their webhooks starts without them, and none trusts the
 * emulator's published app secret, which anyone can read in this repository and sign events with.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AdminService } from '../../gen/vps/admin/v1/admin_pb';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { PLATFORM_SETTINGS } from '../../config/config';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { SANDBOX_APP } from '../../core/upstream/settings';
import { call } from '../helpers/http';
import { cleanEnv, exitOf, spawnVps, type ChildHandle } from '../helpers/processes';
import { requiredEnv } from '../helpers/stack';

const PLATFORM = {
  VPLAT_API_BASE: 'http://127.0.0.1:9',
  VPLAT_APP_ID: 'vps-production-app',
  VPLAT_APP_SECRET: `app-secret-${randomBytes(16).toString('hex')}`,
  SHOP_API_BASE: 'http://127.0.0.1:9',
  SHOP_APP_KEY: 'vps-production-shop-app',
  SHOP_APP_SECRET: `shop-secret-${randomBytes(16).toString('hex')}`,
};

describe("the platforms' settings outside the embedded mode", () => {
  const children: ChildHandle[] = [];
  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop('SIGKILL')));
  });
  const adminToken = `platform-admin-${randomBytes(16).toString('hex')}`;
  const stores = () => ({
    DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
    TEMPORAL_ADDRESS: requiredEnv('TEMPORAL_ADDRESS'),
    VPS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    VPS_ADMIN_TOKEN: adminToken,
    TEMPORAL_TASK_QUEUE: `vps-platform-settings-${process.pid}`,
  });
  const start = (role: string, env: Record<string, string>) => {
    const child = spawnVps(['serve', '--role', role], cleanEnv({ PORT: '0', CORE_PORT: '0', ...stores(), ...env }));
    children.push(child);
    return child;
  };

  it.each(['core', 'worker', 'gateway,core', 'all'])(
    'refuses to start --role %s without them, naming each',
    async (role) => {
      const child = start(role, {});
      expect(await exitOf(child)).not.toBe(0);
      for (const name of PLATFORM_SETTINGS) expect(child.output()).toContain(name);
      expect(child.output()).toContain('only the embedded mode');
      expect(child.output()).not.toContain('vps is running');
    },
    60_000,
  );

  it('names only the settings that are missing', async () => {
    const { VPLAT_API_BASE, VPLAT_APP_ID, VPLAT_APP_SECRET } = PLATFORM;
    const child = start('core', { VPLAT_API_BASE, VPLAT_APP_ID, VPLAT_APP_SECRET });
    expect(await exitOf(child)).not.toBe(0);
    expect(child.output()).toContain('SHOP_API_BASE, SHOP_APP_KEY, SHOP_APP_SECRET must be set for --role core');
    expect(child.output()).not.toMatch(/VPLAT_API_BASE|VPLAT_APP_ID|VPLAT_APP_SECRET/);

    const noSecret = start('worker', { ...PLATFORM, VPLAT_APP_SECRET: '' });
    expect(await exitOf(noSecret)).not.toBe(0);
    expect(noSecret.output()).toContain('VPLAT_APP_SECRET: required with VPLAT_API_BASE');
  }, 60_000);

  it("refuses the emulator's published secret for a platform that is not on this machine", async () => {
    const child = start('core', {
      ...PLATFORM,
      VPLAT_API_BASE: 'https://business-api.example.com',
      VPLAT_APP_SECRET: SANDBOX_APP.vplatAppSecret,
    });
    expect(await exitOf(child)).not.toBe(0);
    expect(child.output()).toContain("VPLAT_APP_SECRET is the sandbox emulator's published secret");
  }, 60_000);

  it("refuses a platform event signed with the emulator's published secret, and stores one signed with the app's", async () => {
    const [port, corePort] = await Promise.all([freePort(), freePort()]);
    const api = start('gateway,core', { ...PLATFORM, PORT: String(port), CORE_PORT: String(corePort) });
    await api.waitFor(/vps is running/, 60_000);
    const baseUrl = `http://127.0.0.1:${port}`;
    const admin = createClient(
      AdminService,
      createConnectTransport({
        baseUrl: `http://127.0.0.1:${corePort}`,
        httpVersion: '1.1',
        interceptors: [
          (next) => (req) => {
            req.header.set('authorization', `Bearer ${adminToken}`);
            return next(req);
          },
        ],
      }),
    );
    const { customer } = await admin.createCustomer({ name: 'Forgery target', seatQuota: 1 });
    const { user } = await admin.createUser({ customerId: customer!.id, email: `forgery-${customer!.id}@example.com`, name: 'Target' });
    const { plaintext: apiKey } = await admin.createApiKey({ userId: user!.id, name: 'test' });
    const openId = `account-${randomBytes(6).toString('hex')}`;
    const { seat } = await admin.createSeat({ customerId: customer!.id, track: Track.VIDEO, name: 'bound' });
    await admin.bindSeat({ seatId: seat!.id, accountId: openId, credentials: { accessToken: 'at', refreshToken: 'rt' } });

    // A comment on the bound account, as the platform would push it.
    const comment = (appId: string, id: string) =>
      JSON.stringify({
        client_key: appId,
        event: 'comment.update',
        create_time: Math.floor(Date.now() / 1000),
        user_openid: openId,
        content: JSON.stringify({ comment_id: id, video_id: 'v1', parent_comment_id: 0, comment_action: 'insert', timestamp: Date.now() }),
      });
    const push = (body: string, secret: string) => {
      const t = Math.floor(Date.now() / 1000);
      return call<{ outcome: string }>(baseUrl, 'POST', '/webhooks/vplat', {
        body,
        headers: {
          'content-type': 'application/json',
          'tiktok-signature': `t=${t},s=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`,
        },
      });
    };
    const events = async () => (await call<{ items: unknown[] }>(baseUrl, 'GET', '/v1/events', { key: apiKey })).body.data.items;

    for (const appId of [SANDBOX_APP.vplatAppId, PLATFORM.VPLAT_APP_ID]) {
      const forged = await push(comment(appId, `forged-${appId}`), SANDBOX_APP.vplatAppSecret);
      expect(forged.status).toBe(401);
      expect(forged.body.code).toBe(1001);
    }
    expect(await events()).toEqual([]);

    const genuine = await push(comment(PLATFORM.VPLAT_APP_ID, 'genuine'), PLATFORM.VPLAT_APP_SECRET);
    expect(genuine.body).toMatchObject({ code: 0, data: { outcome: 'stored' } });
    expect(await events()).toEqual([expect.objectContaining({ type: 'vplat.comment.created', seat_id: seat!.id })]);
  }, 90_000);
});
