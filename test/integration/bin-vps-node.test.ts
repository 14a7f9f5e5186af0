/**
 * `bin/vps` run directly starts on whatever `node` its `#!/usr/bin/env node` line finds: the
 * machine's own, which may be older than package.json's engines (Node 20 on these machines). The
 * client commands run the built CLI there when that Node is as new as cli/package.json's engines;
 * `serve` and `admin`, the service's own code, run again on the project's Node, which `npm ci`
 * installed in node_modules/.bin, or it says what is missing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { engineMajor, machineNode, withoutProjectBin } from '../helpers/node-runtime';
import { cleanEnv, REPO_ROOT } from '../helpers/processes';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The major of each bin/vps process that ran, in order. */
  majors: number[];
}

const major = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

describe('bin/vps started by the machine’s own node', () => {
  let dir: string;
  let preload: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-bin-node-'));
    // Loaded into every node process the run starts; bin/vps ones report their version.
    preload = path.join(dir, 'report-node.cjs');
    fs.writeFileSync(
      preload,
      "if (/[\\\\/]bin[\\\\/]vps$/.test(process.argv[1] || '')) process.stderr.write(`bin/vps on node ${process.version}\\n`);\n",
    );
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Starts `<node> <script> …args` as a shell would, with the shell's PATH (no node_modules/.bin). */
  function start(node: string, script: string, args: string[]): ChildProcess {
    const env = cleanEnv({ PATH: withoutProjectBin(), NODE_OPTIONS: `--require ${preload}` });
    delete env.VPS_NODE_REEXEC;
    return spawn(node, [script, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  async function finish(child: ChildProcess): Promise<Run> {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    const majors = [...stderr.matchAll(/^bin\/vps on node (v[\d.]+)$/gm)].map((m) => major(m[1]!));
    return { code, signal, stdout, stderr, majors };
  }

  it('runs the client commands on the machine’s Node when it is as new as the client’s engines, without starting another', async () => {
    const machine = machineNode();
    const clientMajor = Number(
      /^>=(\d+)/.exec(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'cli', 'package.json'), 'utf8')).engines.node)![1],
    );
    expect(major(machine.version)).toBeGreaterThanOrEqual(clientMajor);
    const run = await finish(start(machine.path, path.join(REPO_ROOT, 'bin', 'vps'), ['--help']));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: vps');
    expect(run.majors).toEqual([major(machine.version)]);
  }, 60_000);

  it('runs serve and admin on a Node as new as engines names: the project’s own when the machine’s is older', async () => {
    const machine = machineNode();
    const run = await finish(start(machine.path, path.join(REPO_ROOT, 'bin', 'vps'), ['admin', '--help']));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: vps admin');
    const older = major(machine.version) < engineMajor();
    // Started by an older node, it ran once more on the project's Node; else only once, on the machine's.
    expect(run.majors).toEqual(older ? [major(machine.version), expect.any(Number)] : [major(machine.version)]);
    expect(run.majors.at(-1)).toBeGreaterThanOrEqual(engineMajor());
  }, 60_000);

  it('passes a stop signal on to the process that runs the command, and exits as it did', async () => {
    // An event stream that never ends: `vps listen` runs until it is told to stop.
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const child = start(machineNode().path, path.join(REPO_ROOT, 'bin', 'vps'), ['listen', '--api-key', 'vps_test', '--base-url', url]);
      const done = finish(child);
      let err = '';
      child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const deadline = Date.now() + 30_000;
      while (!err.includes('connected to') && child.exitCode === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      child.kill('SIGTERM');
      const run = await done;
      expect(run.stderr).toContain('connected to');
      expect(run).toMatchObject({ code: 0, signal: null });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 60_000);

  describe('in a checkout whose engines ask for more than this Node', () => {
    /** A copy of bin/vps whose package.json asks for the next major, with or without its own Node. */
    function checkout(name: string, ownNode: boolean): string {
      const root = path.join(dir, name);
      fs.mkdirSync(path.join(root, 'bin'), { recursive: true });
      fs.copyFileSync(path.join(REPO_ROOT, 'bin', 'vps'), path.join(root, 'bin', 'vps'));
      fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ engines: { node: `>=${major(process.version) + 1}` } }));
      if (ownNode) {
        fs.mkdirSync(path.join(root, 'node_modules', '.bin'), { recursive: true });
        fs.symlinkSync(process.execPath, path.join(root, 'node_modules', '.bin', 'node'));
      }
      return path.join(root, 'bin', 'vps');
    }

    it('says which Node it needs and what to do when there is none of its own', async () => {
      const run = await finish(start(process.execPath, checkout('bare', false), ['serve', '--help']));
      expect(run.code).toBe(1);
      expect(run.majors).toHaveLength(1);
      expect(run.stderr).toContain(`vps: needs Node.js ${major(process.version) + 1} or newer, and this is ${process.version}`);
      expect(run.stderr).toContain('`npm ci` installs it');
    });

    it('runs again on its own Node once only, and stops there if that one is too old as well', async () => {
      const run = await finish(start(process.execPath, checkout('stale', true), ['serve', '--help']));
      expect(run.code).toBe(1);
      expect(run.majors).toHaveLength(2);
      expect(run.stderr).toContain(`vps: needs Node.js ${major(process.version) + 1} or newer`);
    });
  });
});
