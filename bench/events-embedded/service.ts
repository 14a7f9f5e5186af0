/**
 * The service as a newcomer runs it: `vps serve --role all` (what `npm start` runs, without the
 * console build of its prestart) as a child process with the embedded defaults (PGlite under a
 * fresh data dir, a Temporal dev server as its own child, the sandbox emulator in process), on free
 * loopback ports. Its output goes to a log file; its CPU time (and its children's, the Temporal dev
 * server's) is read from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface EmbeddedService {
  pid: number;
  ports: { gateway: number; core: number; ops: number; sandbox: number; temporal: number; temporalUi: number };
  gateway: string;
  sandbox: string;
  ops: string;
  /** The emulator's webhook subscription target: the service's receiver of official pushes. */
  platformWebhookUrl: string;
  apiKey: string;
  dataDir: string;
  logFile: string;
  /** The banner and anything else the child printed on stdout that is not a JSON log line. */
  banner(): string;
  exited(): { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
  /** SIGTERM, then SIGKILL to the whole process group after `graceMs`. Resolves when it exited. */
  stop(graceMs: number): Promise<{ how: 'exited' | 'killed'; ms: number }>;
}

/** Distinct free ports: all held open together before any is released. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

export async function startEmbeddedService(opts: {
  dataDir: string;
  logFile: string;
  logLevel: string;
  startTimeoutMs: number;
  extraEnv?: Record<string, string>;
  nodeArgs?: string[];
}): Promise<EmbeddedService> {
  const [gateway, core, ops, sandbox, temporal, temporalUi] = await freePorts(6);
  const ports = { gateway: gateway!, core: core!, ops: ops!, sandbox: sandbox!, temporal: temporal!, temporalUi: temporalUi! };
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Whatever the calling shell points elsewhere, the embedded defaults are what is measured.
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'VPLAT_API_BASE', 'SHOP_API_BASE', 'CORE_URL', 'VPS_PUBLIC_URL', 'VPS_MEDIA_DIR'])
    delete env[name];
  Object.assign(env, {
    VPS_DATA_DIR: opts.dataDir,
    HOST: '127.0.0.1',
    PORT: String(ports.gateway),
    CORE_HOST: '127.0.0.1',
    CORE_PORT: String(ports.core),
    OPS_HOST: '127.0.0.1',
    OPS_PORT: String(ports.ops),
    SANDBOX_HOST: '127.0.0.1',
    SANDBOX_PORT: String(ports.sandbox),
    TEMPORAL_DEV_PORT: String(ports.temporal),
    TEMPORAL_DEV_UI_PORT: String(ports.temporalUi),
    VPS_ALLOW_INSECURE_WEBHOOK_URLS: 'true',
    // Only the bench's own few API calls; the path measured is the platform's push, which has no key.
    RATE_LIMIT_PER_MINUTE: '100000',
    LOG_LEVEL: opts.logLevel,
    ...opts.extraEnv,
  });
  const log = fs.openSync(opts.logFile, 'a');
  // Its own process group, so that a SIGKILL fallback also reaches the Temporal dev server.
  const child: ChildProcess = spawn(
    process.execPath,
    [...(opts.nodeArgs ?? []), path.join(REPO_ROOT, 'bin', 'vps'), 'serve', '--role', 'all'],
    {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', log],
      detached: true,
    },
  );
  let exit: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
  const exitedPromise = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal, at: Date.now() };
      resolve();
    }),
  );
  let printed = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    fs.appendFileSync(log, chunk);
    // JSON log lines go to the file only; the banner is kept.
    for (const line of chunk.toString('utf8').split('\n')) if (line && !line.startsWith('{')) printed += `${line}\n`;
  });
  const pid = child.pid!;
  const origin = (port: number) => `http://127.0.0.1:${port}`;
  const service: EmbeddedService = {
    pid,
    ports,
    gateway: origin(ports.gateway),
    sandbox: origin(ports.sandbox),
    ops: origin(ports.ops),
    platformWebhookUrl: `${origin(ports.gateway)}/webhooks/vplat`,
    apiKey: '',
    dataDir: opts.dataDir,
    logFile: opts.logFile,
    banner: () => printed,
    exited: () => exit,
    async stop(graceMs) {
      const started = Date.now();
      if (exit) return { how: 'exited', ms: 0 };
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
      const outcome = await Promise.race([exitedPromise.then(() => 'exited' as const), timer]);
      // The group too: a dev server left behind by a child that did not stop it.
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      if (outcome === 'timeout') await Promise.race([exitedPromise, new Promise((r) => setTimeout(r, 5_000).unref())]);
      fs.closeSync(log);
      return { how: outcome === 'exited' ? 'exited' : 'killed', ms: Date.now() - started };
    },
  };

  const deadline = Date.now() + opts.startTimeoutMs;
  while (true) {
    if (exit) throw new Error(`vps serve exited during start-up (code ${exit.code}, signal ${exit.signal}); see ${opts.logFile}`);
    if (Date.now() > deadline) {
      await service.stop(5_000);
      throw new Error(`vps serve was not ready within ${opts.startTimeoutMs} ms; see ${opts.logFile}`);
    }
    if (printed.includes('vps is running')) {
      const ready = await fetch(`${service.ops}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      const keyFile = path.join(opts.dataDir, 'dev-api-key');
      if (ready && fs.existsSync(keyFile)) {
        service.apiKey = fs.readFileSync(keyFile, 'utf8').trim();
        return service;
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** CPU seconds (user + system) of a process and all its descendants, from /proc. */
export function treeCpuSeconds(pid: number): { self: number; children: number } {
  const ticks = (p: number) => {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime (fields 14, 15), CLK_TCK 100
    } catch {
      return 0;
    }
  };
  const descendants = (p: number): number[] => {
    let kids: number[] = [];
    try {
      for (const task of fs.readdirSync(`/proc/${p}/task`)) {
        const text = fs.readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim();
        if (text) kids.push(...text.split(/\s+/).map(Number));
      }
    } catch {
      /* gone */
    }
    kids = [...new Set(kids)];
    return kids.flatMap((k) => [k, ...descendants(k)]);
  };
  return { self: ticks(pid), children: descendants(pid).reduce((sum, k) => sum + ticks(k), 0) };
}

/** Busy and total jiffies of the whole machine, from /proc/stat. */
export function machineJiffies(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: total - idle, total };
}
