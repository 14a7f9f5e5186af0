/**
 * The `vps` API commands as a user runs them: a child process with VPS_API_KEY and VPS_BASE_URL,
 * against the running service (over real HTTP) with the emulator behind it. Piped, every command
 * prints JSON; exit codes tell usage errors (2), API errors (1) and network failures (3) apart.
 * And with nothing set: the address a gateway on another port wrote under .data/ is found, and one
 * it left behind is reported at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { call } from '../helpers/http';
import { eventually } from '../helpers/receivers';
import { mp4File } from '../helpers/mp4';
import { cleanEnv, REPO_ROOT, spawnVps, type ChildHandle } from '../helpers/processes';
import { createTenant, startStackWorker, type Tenant } from '../helpers/stack';
import { uploadMultipart } from '../helpers/videos';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout as JSON, when it is. */
  json: any;
  /** The last line of stderr as JSON: the error runApi prints. */
  error: any;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // text meant for a person: usage errors and help
  }
}

/** Polls are this far apart here: the emulator finishes a publish in a fraction of a second. */
const TEST_INTERVAL = ['--interval', '0.2'];

describe('vps API commands', () => {
  let env: WorkingStack;
  let tenant: Tenant;
  let account: SandboxAccount;
  let dir: string;
  let clip: string;
  /** A library video for the tests about other things than uploading. */
  let shared: { id: string };

  beforeAll(async () => {
    env = await startWorkingStack('cli');
    tenant = await createTenant(env.stack);
    ({ account } = await bindSandboxSeat(env, tenant, 'business'));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-cli-'));
    clip = path.join(dir, 'clip.mp4');
    fs.writeFileSync(clip, mp4File({ durationMs: 5_000, width: 1080, height: 1920 }));
    const uploaded = await uploadMultipart<{ id: string }>(env.stack.baseUrl, tenant.apiKey, [
      { name: 'account', value: account.openId },
      { name: 'file', value: { fileName: 'shared.mp4', bytes: fs.readFileSync(clip) } },
    ]);
    shared = uploaded.body.data;
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function vps(args: string[], extraEnv: Record<string, string> = {}): Promise<Result> {
    return result(spawnVps(args, cleanEnv({ VPS_API_KEY: tenant.apiKey, VPS_BASE_URL: env.stack.baseUrl, ...extraEnv })).child);
  }

  /** Runs `vps` in `cwd` as a person would there: with no key or address set, unless given. */
  async function vpsIn(cwd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Result> {
    const childEnv = cleanEnv(extraEnv);
    for (const name of ['VPS_API_KEY', 'VPS_BASE_URL']) if (!(name in extraEnv)) delete childEnv[name];
    return result(
      spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'vps'), ...args], { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
  }

  async function result(child: ChildProcess): Promise<Result> {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr, json: parse(stdout), error: parse(stderr.trim().split('\n').pop() ?? '') };
  }

  /** Runs a command that must succeed, and gives its JSON. */
  async function ok(...args: string[]): Promise<any> {
    const res = await vps(args);
    if (res.code !== 0) throw new Error(`vps ${args.join(' ')} exited ${res.code}:\n${res.stdout}\n${res.stderr}`);
    return res.json;
  }

  /** A publish record as the service holds it, read over HTTP without the CLI. */
  const record = async (id: string) => {
    const page = await call<{ items: Array<{ id: string; channel: string; shareId: string | null }> }>(
      env.stack.baseUrl,
      'GET',
      '/v1/publish/records?limit=100',
      { key: tenant.apiKey },
    );
    return page.body.data.items.find((r) => r.id === id);
  };
  const upload = () => ok('videos', 'upload', clip, '--account', account.openId);

  it('lists the seats with the bound account', async () => {
    const seats = await ok('seats');
    expect(seats.items).toEqual([expect.objectContaining({ capabilityAccountId: account.openId, bound: true, track: 'video' })]);
  }, 120_000);

  it('uploads a file, then publishes it as a draft and waits: publish_draft_inbox', async () => {
    const video = await upload();
    expect(video).toMatchObject({ status: 'available', fileName: 'clip.mp4', sizeBytes: fs.statSync(clip).size });

    const res = await vps([
      'publish',
      'video',
      '--account',
      account.openId,
      '--video-id',
      video.id,
      '--caption',
      'from the cli',
      '--draft',
      '--wait',
      ...TEST_INTERVAL,
    ]);
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ status: 'publish_draft_inbox', draft: true, channel: 'v1.3', videoId: video.id, matchedRecord: true });
    // The short interval is allowed, and said to be outside the spec's rule.
    expect(res.stderr).toContain('--interval 0.2: the spec asks for polls every 5 to 10 seconds');
  }, 120_000);

  it('publishes through the v1.3 route by default and the deprecated one with --via legacy', async () => {
    const [viaDefault, viaLegacy] = await Promise.all([
      ok(
        'publish',
        'video',
        '--account',
        account.openId,
        '--video-id',
        shared.id,
        '--field',
        'videoOriginalSoundVolume=40',
        '--field',
        'isBrandOrganic=false',
      ),
      ok('publish', 'video', '--account', account.username, '--video-id', shared.id, '--via', 'legacy'),
    ]);
    expect(viaDefault.channel).toBe('v1.3');
    expect(viaLegacy.channel).toBe('legacy');

    expect([(await record(viaDefault.id))?.channel, (await record(viaLegacy.id))?.channel]).toEqual(['v1.3', 'legacy']);
    const listed = await ok('records', '--limit', '100');
    expect(listed.items.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([viaDefault.id, viaLegacy.id]));
  }, 120_000);

  it('follows a publish with status until a terminal state, well before the attempts run out', async () => {
    const published = await ok('publish', 'video', '--account', account.openId, '--video-id', shared.id, '--caption', 'followed');
    // The answer carries the handle unless the platform was slower than the service's wait for it.
    const handle =
      published.shareId ??
      (await eventually(
        () => record(published.id),
        (r) => r?.shareId !== null,
      ))!.shareId;

    const res = await vps(['status', handle, ...TEST_INTERVAL, '--attempts', '100']);
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ id: published.id, status: 'publish_complete', matchedRecord: true });
  }, 120_000);

  it('lists, gets and deletes library videos', async () => {
    const video = await upload();
    const [listed, got] = await Promise.all([ok('videos', 'list', '--limit', '100'), ok('videos', 'get', video.id)]);
    expect(listed.items.map((v: { id: string }) => v.id)).toEqual(expect.arrayContaining([video.id, shared.id]));
    expect(got).toMatchObject({ id: video.id, status: 'available' });
    expect(await ok('videos', 'delete', video.id)).toMatchObject({ id: video.id, status: 'expired' });
  }, 120_000);

  it('creates, lists and deletes webhook endpoints, and lists events', async () => {
    // The publishes above changed status, and each change is an event. The endpoint takes a type
    // these tests never cause, so nothing is pushed to its address.
    const [created, events] = await Promise.all([
      ok('webhooks', 'create', '--url', 'https://93.184.215.14/hook', '--event-type', 'vplat.message.received'),
      ok('events', 'list', '--types', 'vplat.publish.status_changed', '--limit', '100'),
    ]);
    expect(created).toMatchObject({
      url: 'https://93.184.215.14/hook',
      eventTypes: ['vplat.message.received'],
      secret: expect.any(String),
    });
    expect(events.items.length).toBeGreaterThan(0);
    expect(events.items.every((e: { type: string }) => e.type === 'vplat.publish.status_changed')).toBe(true);

    const listed = await ok('webhooks', 'list');
    expect(listed.items).toEqual([expect.objectContaining({ id: created.id, url: 'https://93.184.215.14/hook' })]);
    expect(listed.items[0]).not.toHaveProperty('secret');
    const [graced, leaked] = [
      await ok('webhooks', 'rotate-secret', created.id),
      await ok('webhooks', 'rotate-secret', created.id, '--old-secret-expires-in', '0'),
    ];
    expect(graced).toMatchObject({ id: created.id, secret: expect.any(String), previousSecretExpiresAt: expect.any(String) });
    expect(leaked).toMatchObject({ id: created.id, secret: expect.any(String), previousSecretExpiresAt: null });
    expect(new Set([created.secret, graced.secret, leaked.secret]).size).toBe(3);

    // get reads one endpoint; update changes only what its flags name, never the secret.
    expect(await ok('webhooks', 'get', created.id)).toMatchObject({ id: created.id, description: null, queue: { backlog: 0 } });
    const updated = await ok(
      'webhooks',
      'update',
      created.id,
      '--url',
      'https://93.184.215.15/hook',
      '--event-type',
      'vplat.comment.created',
      '--event-type',
      'vplat.comment.deleted',
      '--description',
      'Moderation',
      '--disable',
    );
    expect(updated).toMatchObject({
      id: created.id,
      url: 'https://93.184.215.15/hook',
      eventTypes: ['vplat.comment.created', 'vplat.comment.deleted'],
      description: 'Moderation',
      disabledReason: 'disabled by request',
    });
    expect(updated).not.toHaveProperty('secret');
    expect(await ok('webhooks', 'update', created.id, '--enable', '--description', '')).toMatchObject({
      url: 'https://93.184.215.15/hook',
      description: null,
      disabledAt: null,
    });
    const [refused, clash] = await Promise.all([
      vps(['webhooks', 'update', created.id, '--url', 'https://169.254.169.254/latest']),
      vps(['webhooks', 'update', created.id, '--enable', '--disable']),
    ]);
    expect([refused.code, refused.error?.code]).toEqual([1, 2001]);
    expect(clash.code).toBe(2);
    expect(await ok('webhooks', 'delete', created.id)).toEqual({ id: created.id, deleted: true });
  }, 120_000);

  it('exits 2 on usage errors, 1 with the code on API errors, and 3 when the service cannot be reached', async () => {
    const [usage, unknown, badKey, down] = await Promise.all([
      Promise.all([
        vps(['videos', 'list', '--limit', '0']),
        vps(['publish', 'video', '--account', account.openId]),
        vps(['publish', 'video', '--account', account.openId, '--video-id', 'v', '--via', 'v2']),
      ]),
      vps(['videos', 'get', 'vid_unknown']),
      vps(['seats'], { VPS_API_KEY: 'vps_not_a_key' }),
      freePort().then((port) => vps(['seats'], { VPS_BASE_URL: `http://127.0.0.1:${port}` })),
    ]);
    expect(usage.map((r) => r.code)).toEqual([2, 2, 2]);
    expect(unknown.code).toBe(1);
    expect(unknown.error).toMatchObject({ code: 1005 });
    expect(badKey.code).toBe(1);
    expect(badKey.error).toMatchObject({ code: 1001 });
    expect(down.code).toBe(3);
    expect(down.error).toMatchObject({ error: 'network' });
  }, 120_000);

  describe('with no address given, a gateway on another port', () => {
    let home: string;
    let dataDir: string;
    let port: number;
    let gateway: ChildHandle | undefined;

    beforeAll(async () => {
      // A folder like a checkout after `npm start`: its .data holds the dev key, and the gateway,
      // started there on a port of its own, writes its address beside it.
      home = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-cli-home-'));
      dataDir = path.join(home, '.data');
      fs.mkdirSync(dataDir);
      fs.writeFileSync(path.join(dataDir, 'dev-api-key'), `${tenant.apiKey}\n`, { mode: 0o600 });
      port = await freePort();
      gateway = spawnVps(
        ['serve', '--role', 'gateway'],
        cleanEnv({ CORE_URL: env.stack.coreUrl, PORT: String(port), VPS_DATA_DIR: dataDir }),
      );
      await gateway.waitFor(/vps is running/);
    }, 120_000);
    afterAll(async () => {
      await gateway?.stop();
      if (home) fs.rmSync(home, { recursive: true, force: true });
    });

    it('is found through the address it wrote under .data, with no flag and no variable', async () => {
      expect(fs.readFileSync(path.join(dataDir, 'base-url'), 'utf8')).toBe(`http://127.0.0.1:${port}\n`);
      const res = await vpsIn(home, ['seats']);
      expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
      expect(res.json.items).toEqual([expect.objectContaining({ capabilityAccountId: account.openId })]);
    }, 120_000);

    it('is found from any folder below the one that holds .data, as in a checkout', async () => {
      const deep = path.join(home, 'docs', 'decisions');
      fs.mkdirSync(deep, { recursive: true });
      const res = await vpsIn(deep, ['seats']);
      expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
      expect(res.json.items).toEqual([expect.objectContaining({ capabilityAccountId: account.openId })]);
    }, 120_000);

    it('gives way to VPS_BASE_URL, which gives way to --base-url', async () => {
      const nowhere = `http://127.0.0.1:${await freePort()}`;
      const [envOverFile, flagOverEnv] = await Promise.all([
        vpsIn(home, ['seats'], { VPS_BASE_URL: nowhere }),
        vpsIn(home, ['--base-url', env.stack.baseUrl, 'seats'], { VPS_BASE_URL: nowhere }),
      ]);
      // The variable was used rather than the file: the gateway there was never called.
      expect(envOverFile.code).toBe(3);
      expect(envOverFile.error.message).toContain(`cannot reach ${nowhere} (from VPS_BASE_URL)`);
      expect(flagOverEnv.code).toBe(0);
      expect(flagOverEnv.json.items).toEqual([expect.objectContaining({ capabilityAccountId: account.openId })]);
    }, 120_000);

    it('takes the address back when it stops, and a file left behind fails at once, naming the address and the way to set it', async () => {
      expect(await gateway!.stop('SIGTERM')).toBe(0);
      gateway = undefined;
      expect(fs.existsSync(path.join(dataDir, 'base-url'))).toBe(false);

      // As a gateway that was killed leaves it: an address where nothing listens any more.
      const file = path.join(dataDir, 'base-url');
      fs.writeFileSync(file, `http://127.0.0.1:${port}\n`);
      const res = await vpsIn(home, ['seats']);
      expect(res.code).toBe(3);
      expect(res.error).toMatchObject({ error: 'network' });
      expect(res.error.message).toContain(`cannot reach http://127.0.0.1:${port} (from ${file}): connection refused`);
      expect(res.error.message).toMatch(/--base-url or set VPS_BASE_URL/);
      // No retries with backoff before saying so.
      expect(res.stderr).not.toMatch(/retry \d/);
    }, 120_000);
  });

  it('exits 4 with the last answer when the attempts run out before a terminal status', async () => {
    // With no worker the publish is never submitted: it stays submitted, polled by the service's handle.
    await env.worker.stop();
    try {
      const res = await vps([
        'publish',
        'video',
        '--account',
        account.openId,
        '--video-id',
        shared.id,
        '--wait',
        ...TEST_INTERVAL,
        '--attempts',
        '2',
      ]);
      expect(res.code).toBe(4);
      expect(res.json).toMatchObject({ status: 'submitted', shareId: expect.stringMatching(/^vpsh_/) });
      expect(res.stderr).toContain('still submitted after 2 polls');
    } finally {
      env.worker = await startStackWorker(env.stack, env.taskQueue, env.sb.upstream);
    }
  }, 120_000);

  it('answers --help as a child process (the unit suite walks every command in process)', async () => {
    const res = await vps(['status', '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('exits 4');
  }, 120_000);
});
