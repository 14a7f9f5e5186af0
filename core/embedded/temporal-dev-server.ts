/**
 * The embedded Temporal: `temporal server start-dev` as a child process with its SQLite file and UI,
 * for `npm start` and the test suite. The CLI binary is found or built by scripts/temporal-cli.sh.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
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
    // An activity a workflow task schedules goes back to that worker in the task's answer instead
    // of through the task queue. Through the queue, once a few workflows had run, every dispatch
    // waited 30 to 40 ms here: a remote upload's five steps took 350 ms against 150 with this.
    '--dynamic-config-value',
    'system.enableActivityEagerExecution=true',
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

/**
 * A port free on loopback now, for a server that will listen on it a little later. It is chosen
 * below the kernel's ephemeral range: outgoing connections take their local ports from that range,
 * so one opened meanwhile (a test makes thousands) can never hold the port when the server binds.
 * Never one that fetch() and browsers refuse to connect to.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralRangeStart();
  for (let i = 0; i < 50 && below > LOWEST_CHOSEN_PORT; i++) {
    const port = LOWEST_CHOSEN_PORT + Math.floor(Math.random() * (below - LOWEST_CHOSEN_PORT));
    if (FETCH_BLOCKED_PORTS.has(port)) continue;
    if ((await listenBriefly(port)) !== undefined) return port;
  }
  const port = await listenBriefly(0);
  if (port === undefined) throw new Error('no free port on 127.0.0.1');
  return port;
}

const LOWEST_CHOSEN_PORT = 10_000;
/** The Fetch standard's "bad ports" at or above LOWEST_CHOSEN_PORT: undici answers "bad port" for them. */
const FETCH_BLOCKED_PORTS = new Set([10_080]);

/** Linux's first ephemeral port; the common default elsewhere. */
function ephemeralRangeStart(): number {
  try {
    const first = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 0 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

/** Binds and releases `port` (0: any); the port bound, or undefined when it is taken. */
function listenBriefly(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const addr = server.address();
      server.close(() => resolve(typeof addr === 'object' && addr ? addr.port : undefined));
    });
  });
}
