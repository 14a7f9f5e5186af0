/**
 * The SDK and the CLI as an integrator gets them: `npm pack` makes their tarballs, an empty scratch
 * project installs them (offline: they have no dependencies to fetch), and programs there use them
 * against the running service — plain JavaScript as CommonJS and as an ES module, and TypeScript
 * checked against the tarball's own declarations. The CLI from its tarball starts in well under a
 * second, finds a local service's files from any folder below its checkout, and says where to run
 * the server commands it does not carry.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { mp4File } from '../helpers/mp4';
import { machineNode } from '../helpers/node-runtime';
import { cleanEnv, REPO_ROOT } from '../helpers/processes';
import { createTenant, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';

const run = promisify(execFile);
const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'sdk-consumer');
/** The bound for a command's start; the best of several runs, so a loaded machine's pauses do not count. */
const START_BOUND_MS = 200;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to its end, as a shell would in `cwd`; never throws on a non-zero exit. */
async function runIn(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = cleanEnv({})): Promise<Ran> {
  const started = process.hrtime.bigint();
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

describe('the SDK and the CLI installed from their tarballs', () => {
  let dir: string;
  let app: string;
  let tarballs: { sdk: string; cli: string };
  let env: WorkingStack;
  let tenant: Tenant;
  let account: SandboxAccount;
  let clip: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-packages-'));
    await run(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build-packages.cjs')], { cwd: REPO_ROOT });
    const pack = async (folder: string) => {
      const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: path.join(REPO_ROOT, folder) });
      return path.join(dir, stdout.trim().split('\n').at(-1)!);
    };
    tarballs = { sdk: await pack('sdk'), cli: await pack('cli') };

    app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
    for (const file of fs.readdirSync(FIXTURES)) fs.copyFileSync(path.join(FIXTURES, file), path.join(app, file));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarballs.sdk, tarballs.cli], { cwd: app });

    env = await startWorkingStack('packages', { stack: { allowInsecureWebhookUrls: true }, sandbox: { publishProcessingMs: 300 } });
    tenant = await createTenant(env.stack);
    ({ account } = await bindSandboxSeat(env, tenant, 'business'));
    clip = path.join(dir, 'clip.mp4');
    fs.writeFileSync(clip, mp4File({ durationMs: 5_000, width: 1080, height: 1920 }));
  }, 300_000);
  afterAll(async () => {
    await env?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const flowEnv = () => cleanEnv({ BASE_URL: env.stack.baseUrl, API_KEY: tenant.apiKey, ACCOUNT: account.openId, CLIP: clip });
  const flowResult = () => ({
    videoId: expect.stringMatching(/^vid_/),
    recordId: expect.any(String),
    status: 'publish_complete',
    streamed: 'vplat.publish.status_changed',
    notFound: 1005,
    pushed: expect.any(String),
    tampered: 'no_matching_signature',
  });

  describe('@vps/sdk', () => {
    it('is built JavaScript for both module systems with declarations and a README, and needs nothing else', async () => {
      const { stdout } = await run('tar', ['-tzf', tarballs.sdk]);
      const files = stdout.trim().split('\n').sort();
      expect(files).toEqual(
        expect.arrayContaining(['package/README.md', 'package/dist/index.cjs', 'package/dist/index.mjs', 'package/dist/index.d.ts']),
      );
      expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
      const installed = path.join(app, 'node_modules', '@vps', 'sdk');
      const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
      expect(manifest.dependencies ?? {}).toEqual({});
      // Node.js built-ins are all it loads: no server module, no package to install.
      for (const file of ['dist/index.cjs', 'dist/index.mjs']) {
        const code = fs.readFileSync(path.join(installed, file), 'utf8');
        const loaded = [...code.matchAll(/(?:require\(|from\s*)"([^"]+)"/g)].map((m) => m[1]);
        expect(loaded.filter((name) => !name!.startsWith('node:'))).toEqual([]);
      }
      const declarations = files
        .filter((f) => f.endsWith('.d.ts'))
        .map((f) => fs.readFileSync(path.join(installed, f.slice('package/'.length)), 'utf8'));
      expect(declarations.join('\n')).not.toMatch(/from '\.\.\/|@sinclair|fastify/);
    });

    // On this project's Node and on the machine's, which may be as old as the package's engines allow.
    it.each([
      ['this project’s Node', process.execPath],
      ['the machine’s Node', machineNode().path],
    ])(
      'uploads, publishes, polls, streams the events and verifies a push from plain JavaScript (CommonJS) on %s',
      async (_, node) => {
        const res = await runIn(app, node, ['flow.cjs'], flowEnv());
        expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
        expect(JSON.parse(res.stdout)).toEqual(flowResult());
      },
      120_000,
    );

    it('loads as an ES module with the same exports', async () => {
      const script =
        "import { createVpsClient, VpsApiError, DEFAULT_RETRY_POLICY } from '@vps/sdk';" +
        'const vps = createVpsClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });' +
        'const seats = await vps.seats.list();' +
        "const refused = await createVpsClient({ baseUrl: process.env.BASE_URL, apiKey: 'vps_wrong' }).seats.list().catch((e) => e);" +
        'console.log(JSON.stringify({ seats: seats.items.length, refused: refused instanceof VpsApiError && refused.code, retries: DEFAULT_RETRY_POLICY.maxTransientRetries }));';
      const res = await runIn(app, process.execPath, ['--input-type=module', '-e', script], flowEnv());
      expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(res.stdout)).toEqual({ seats: 1, refused: 1001, retries: 3 });
    }, 60_000);

    it('type-checks a TypeScript program against its declarations alone, which then runs the same flow', async () => {
      fs.writeFileSync(
        path.join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            strict: true,
            noUncheckedIndexedAccess: true,
            outDir: 'out',
            // The scratch project installs nothing but the tarballs: Node's types come from this checkout.
            typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
            types: ['node'],
          },
          files: ['flow.mts'],
        }),
      );
      const tsc = await runIn(app, process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.']);
      expect({ code: tsc.code, out: tsc.stdout + tsc.stderr }).toEqual({ code: 0, out: '' });
      const res = await runIn(app, process.execPath, ['out/flow.mjs'], flowEnv());
      expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(res.stdout)).toEqual(flowResult());
    }, 120_000);
  });

  describe('@vps/cli', () => {
    const vps = () => path.join(app, 'node_modules', '.bin', 'vps');

    it(`starts a command in under ${START_BOUND_MS} ms`, async () => {
      const runs: Ran[] = [];
      for (let i = 0; i < 5; i++) runs.push(await runIn(app, vps(), ['--help']));
      expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
      expect(runs[0]!.stdout).toMatch(/^Usage: vps/);
      expect(Math.min(...runs.map((r) => r.ms))).toBeLessThan(START_BOUND_MS);
    }, 60_000);

    it.each([
      ['this project’s Node', process.execPath],
      ['the machine’s Node', machineNode().path],
    ])(
      'calls the API with the key and address it is given, on %s',
      async (_, node) => {
        const res = await runIn(app, node, [vps(), 'seats'], cleanEnv({ VPS_API_KEY: tenant.apiKey, VPS_BASE_URL: env.stack.baseUrl }));
        expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
        expect(JSON.parse(res.stdout).items).toEqual([expect.objectContaining({ capabilityAccountId: account.openId })]);
      },
      60_000,
    );

    it("finds a local service's key and address from any folder below the checkout, and says where it looked when there is none", async () => {
      const checkout = path.join(dir, 'checkout');
      const deep = path.join(checkout, 'docs', 'decisions');
      fs.mkdirSync(path.join(checkout, '.data'), { recursive: true });
      fs.mkdirSync(deep, { recursive: true });
      fs.writeFileSync(path.join(checkout, '.data', 'dev-api-key'), `${tenant.apiKey}\n`);
      fs.writeFileSync(path.join(checkout, '.data', 'base-url'), `${env.stack.baseUrl}\n`);
      const found = await runIn(deep, vps(), ['seats']);
      expect({ code: found.code, stderr: found.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(found.stdout).items).toEqual([expect.objectContaining({ capabilityAccountId: account.openId })]);

      const elsewhere = path.join(dir, 'elsewhere');
      fs.mkdirSync(elsewhere);
      const none = await runIn(elsewhere, vps(), ['seats']);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('no API key: pass --api-key or set VPS_API_KEY');
      expect(none.stderr).toContain(`.data/dev-api-key in ${elsewhere} or a folder above it`);
    }, 60_000);

    it('says where to run serve and admin, which it does not carry', async () => {
      for (const command of ['serve', 'admin']) {
        const res = await runIn(app, vps(), [command, '--role', 'all']);
        expect(res.code).toBe(2);
        expect(res.stderr).toContain(`run bin/vps ${command} in a checkout of the service`);
      }
      const { stdout } = await run('tar', ['-tzf', tarballs.cli]);
      expect(stdout.trim().split('\n').sort()).toEqual(['package/README.md', 'package/dist/vps.cjs', 'package/package.json']);
    }, 60_000);
  });
});
