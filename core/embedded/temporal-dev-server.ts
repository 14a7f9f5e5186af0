/**
 * The embedded Temporal: `temporal server start-dev` as a child process with its SQLite file and UI,
 * for `npm start` and the test suite. The CLI binary is found or built by scripts/temporal-cli.sh.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

import { SEARCH_ATTRIBUTE_KEYS } from '../temporal/search-attributes';

const REPO_ROOT = path.resolve(__dirname, '..', '..');

export function findTemporalCli(explicitPath?: string): string {
  const result = spawnSync('bash', [path.join(REPO_ROOT, 'scripts', 'temporal-cli.sh')], {
    encoding: 'utf8',
    env: { ...process.env, ...(explicitPath ? { TEMPORAL_CLI_PATH: explicitPath } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const found = result.stdout.trim().split('\n').pop();
  if (result.status !== 0 || !found) throw new Error('Temporal CLI not found and could not be built; see scripts/temporal-cli.sh');
  return found;
}

export interface DevServer {
  address: string;
  uiUrl: string;
  stop(): Promise<void>;
}

export async function startTemporalDevServer(opts: {
  cliPath?: string;
  port: number;
  uiPort: number;
  dbFile?: string;
  namespace: string;
  startTimeoutMs?: number;
}): Promise<DevServer> {
  // Otherwise "the port answers" below could be another server, and we would report success.
  if (await canConnect('127.0.0.1', opts.port)) {
    throw new Error(`port ${opts.port} is already in use: set TEMPORAL_DEV_PORT to a free port, or TEMPORAL_ADDRESS to use that server`);
  }
  const cli = findTemporalCli(opts.cliPath);
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--ui-port',
    String(opts.uiPort),
    '--namespace',
    opts.namespace,
    '--log-level',
    'error',
    ...(opts.dbFile ? ['--db-filename', opts.dbFile] : []),
    ...SEARCH_ATTRIBUTE_KEYS.flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]),
  ];
  const child = spawn(cli, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: false });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // However this process ends (an error during start-up, a signal), the dev server must not outlive it.
  const killOnExit = () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));
  const address = `127.0.0.1:${opts.port}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  while (!(await canConnect('127.0.0.1', opts.port))) {
    if (child.exitCode !== null) throw new Error(`Temporal dev server exited with ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`Temporal dev server did not listen on ${address} in time: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (child.exitCode !== null) throw new Error(`Temporal dev server exited with ${child.exitCode}: ${stderr}`);
  return { address, uiUrl: `http://localhost:${opts.uiPort}`, stop: () => stopChild(child, exited) };
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A port nothing listens on now, for child servers the caller starts next. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      server.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}
