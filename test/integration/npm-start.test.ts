import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { engineMajor, withoutProjectBin } from '../helpers/node-runtime';
import { cleanEnv, exitOf, spawnChild, spawnVps, type ChildHandle } from '../helpers/processes';
import { eventually, startWebhookReceiver } from '../helpers/receivers';

const run = promisify(execFile);

async function eventuallyClosed(port: number, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (!open) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

describe('npm start from a clean data folder', () => {
  let dataDir: string;
  let child: ChildHandle | undefined;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-start-'));
  });
  afterAll(async () => {
    await child?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('comes up with every role embedded, prints its addresses, and the printed curl line returns code 0', async () => {
    const [port, corePort, sandboxPort, temporalPort, uiPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    child = spawnChild(
      'npm',
      ['start', '--silent'],
      cleanEnv({
        // As typed in a shell: npm and `node` are the machine's own (Node 20 here), not the
        // project's that the suite runs on.
        PATH: withoutProjectBin(process.env.PATH),
        VPS_DATA_DIR: dataDir,
        PORT: String(port),
        CORE_PORT: String(corePort),
        SANDBOX_PORT: String(sandboxPort),
        TEMPORAL_DEV_PORT: String(temporalPort),
        TEMPORAL_DEV_UI_PORT: String(uiPort),
      }),
    );
    const [curlLine] = await child.waitFor(/curl -s \S+ -H 'Authorization: Bearer vps_[A-Za-z0-9_-]+'/, 150_000);
    const output = child.output();
    const line = (label: string, url: string) => expect(output).toMatch(new RegExp(`${label.replace(/[()]/g, '\\$&')} +${url}`));
    line('API', `http://localhost:${port}/v1`);
    line('Temporal UI', `http://localhost:${uiPort}`);
    line('Core (Connect)', `http://127.0.0.1:${corePort}`);
    line('Sandbox', `http://127.0.0.1:${sandboxPort}`);
    line('Platform webhooks', `http://127.0.0.1:${port}/webhooks/vplat`);

    // The service runs on the Node that package.json's engines names, whatever `node` the shell has.
    const opsUrl = output.match(/Ops +(http:\/\/\S+)/)?.[1];
    const metrics = await (await fetch(`${opsUrl}/metrics`)).text();
    const serviceNode = /^nodejs_version_info\{version="v(\d+)\./m.exec(metrics)?.[1];
    expect(Number(serviceNode)).toBeGreaterThanOrEqual(engineMajor());

    const { stdout } = await run('sh', ['-c', curlLine]);
    const body = JSON.parse(stdout) as { code: number; data: { items: { track: string; bound: boolean }[] } };
    expect(body.code).toBe(0);
    expect(body.data.items.map((s) => [s.track, s.bound])).toEqual([
      ['video', true],
      ['shop', true],
    ]);

    const devKey = fs.readFileSync(path.join(dataDir, 'dev-api-key'), 'utf8').trim();
    expect(curlLine).toContain(devKey);
    expect(fs.statSync(path.join(dataDir, 'dev-api-key')).mode & 0o077).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'temporal.sqlite'))).toBe(true);
    // Where `vps` finds the service with nothing set: the address it really listens on.
    expect(fs.readFileSync(path.join(dataDir, 'base-url'), 'utf8')).toBe(`http://127.0.0.1:${port}\n`);
    // …and the emulator that stands in for the platform, where `vps trigger` makes events.
    expect(fs.readFileSync(path.join(dataDir, 'sandbox-url'), 'utf8')).toBe(`http://127.0.0.1:${sandboxPort}\n`);

    // Local webhooks work out of the box in the embedded mode, as the banner says; private
    // addresses stay refused there too.
    expect(output).toContain('Local webhooks: http and loopback URLs are accepted');
    const receiver = await startWebhookReceiver();
    const register = async (url: string) =>
      (await (
        await fetch(`http://localhost:${port}/v1/webhook-endpoints`, {
          method: 'POST',
          headers: { authorization: `Bearer ${devKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url, eventTypes: ['vplat.comment.created'] }),
        })
      ).json()) as { code: number; message: string };
    expect(await register(receiver.url)).toMatchObject({ code: 0 });
    expect(await register('http://192.168.1.10/hook')).toMatchObject({
      code: 2001,
      message: expect.stringContaining('refused in every mode'),
    });
    expect(await register('http://169.254.169.254/latest/meta-data')).toMatchObject({ code: 2001 });

    // The demo video seat is subscribed to the emulator's webhooks: a comment there lands in the log.
    await fetch(`http://127.0.0.1:${sandboxPort}/_sandbox/accounts/sandbox-business-0001/comments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hello from a viewer' }),
    });
    const events = await eventually(
      async () =>
        (await (await fetch(`http://localhost:${port}/v1/events`, { headers: { authorization: `Bearer ${devKey}` } })).json()) as {
          data: { items: { type: string }[] };
        },
      (b) => b.data.items.length > 0,
    );
    expect(events.data.items[0]!.type).toBe('vplat.comment.created');
    // …and is pushed to the local receiver.
    await eventually(
      async () => receiver.pushes.length,
      (n) => n > 0,
      30_000,
    );
    // `vps trigger` with nothing set finds the service, its key and its emulator under the data
    // folder, and the event it makes reaches the receiver too.
    const triggerEnv = cleanEnv({ VPS_DATA_DIR: dataDir });
    delete triggerEnv.VPS_API_KEY;
    delete triggerEnv.VPS_BASE_URL;
    delete triggerEnv.VPS_SANDBOX_URL;
    const trigger = spawnVps(['trigger', 'comment', '--text', 'hello from vps trigger'], triggerEnv);
    let triggered = '';
    trigger.child.stdout!.on('data', (c: Buffer) => (triggered += c.toString()));
    expect(await exitOf(trigger)).toBe(0);
    const comment = JSON.parse(triggered) as { id: string; type: string; data: { text: string } };
    expect(comment).toMatchObject({ type: 'vplat.comment.created', data: { text: 'hello from vps trigger' } });
    await eventually(
      async () => receiver.pushes.filter((p) => (JSON.parse(p.body) as { id: string }).id === comment.id).length,
      (n) => n > 0,
      30_000,
    );
    await receiver.close();

    // npm itself dies by the forwarded signal; what matters is that the service stopped in order
    // and left nothing behind: its ports, the dev server's included, are free again.
    await child.stop('SIGTERM');
    for (const p of [port, corePort, sandboxPort, temporalPort]) expect(await eventuallyClosed(p)).toBe(true);
    expect(child.output()).toContain('SIGTERM: stopping');
    expect(child.output()).not.toContain('error while stopping');
    expect(fs.existsSync(path.join(dataDir, 'base-url'))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'sandbox-url'))).toBe(false);
  }, 200_000);
});
