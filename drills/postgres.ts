/**
 * A private Postgres cluster for the topology: initdb into a temporary folder, pg_ctl on a free
 * loopback port, trust auth. A drill can stop and start it without touching the machine's shared
 * server. Postgres refuses to run as root, so under root every command runs as the `postgres` user
 * (through runuser) and the folder is handed to that user.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { freePort } from '../core/embedded/temporal-dev-server';

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url: string;
  port: number;
  dataDir: string;
  /** `fast` stops cleanly; `immediate` is a crash (no checkpoint, recovery on the next start). */
  stop(mode?: 'fast' | 'immediate'): void;
  start(): Promise<void>;
  /** Stops, stays down `downMs` (a fixed fault window), starts, and resolves once it accepts queries. */
  restart(opts?: { mode?: 'fast' | 'immediate'; downMs?: number }): Promise<void>;
  /** Stops the cluster for good (the folder is left for the caller to remove). */
  close(): void;
}

/** The newest installed server's bin folder (/usr/lib/postgresql/<version>/bin). */
export function findPostgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error(`no Postgres server under ${root}/*/bin: the topology needs initdb and pg_ctl`);
  return path.join(root, versions[0], 'bin');
}

interface PgUser {
  uid: number;
  gid: number;
}

function postgresUser(): PgUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0)
    throw new Error('running as root and there is no `postgres` user to run the private cluster as');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export async function startPrivatePostgres(opts: { dir: string; database?: string }): Promise<PrivatePostgres> {
  const bin = findPostgresBin();
  const user = postgresUser();
  const dataDir = path.join(opts.dir, 'pgdata');
  const logFile = path.join(opts.dir, 'postgres.log');
  const socketDir = path.join(opts.dir, 'pgsocket');
  mkdirSync(socketDir, { recursive: true });
  if (user) {
    // The parent must be reachable by the postgres user too.
    chmodSync(opts.dir, 0o755);
    chownSync(socketDir, user.uid, user.gid);
  }
  const run = (tool: string, args: string[], timeoutMs = 60_000) => {
    const command = user ? 'runuser' : path.join(bin, tool);
    const argv = user ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args;
    const result = spawnSync(command, argv, { encoding: 'utf8', timeout: timeoutMs, cwd: opts.dir });
    if (result.status !== 0)
      throw new Error(`${tool} ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}`);
    return result.stdout;
  };
  if (user) {
    mkdirSync(dataDir, { recursive: true });
    chownSync(dataDir, user.uid, user.gid);
    // pg_ctl writes the log as the postgres user.
    spawnSync('touch', [logFile]);
    chownSync(logFile, user.uid, user.gid);
  }
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  // Small and quick: fsync off (a drill's crash loses nothing a test cares about across the
  // machine), few connections beyond what six processes with their pools need.
  const options = `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 -c shared_buffers=64MB`;
  let running = false;
  const pgStart = () => {
    run('pg_ctl', ['-D', dataDir, '-l', logFile, '-o', options, '-w', '-t', '60', 'start']);
    running = true;
  };
  const stop = (mode: 'fast' | 'immediate' = 'fast') => {
    if (!running) return;
    run('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
    running = false;
  };
  // However this process ends, the cluster must not outlive it.
  const stopOnExit = () => {
    try {
      stop('immediate');
    } catch (err) {
      process.stderr.write(`could not stop the private Postgres at ${dataDir}: ${String(err)}\n`);
    }
  };
  process.once('exit', stopOnExit);

  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const database = opts.database ?? 'vps';
  const url = `postgres://postgres@127.0.0.1:${port}/${database}`;
  const waitReady = async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => undefined });
      try {
        await sql`select 1`;
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`the private Postgres on port ${port} does not answer: ${String(err)}`);
      } finally {
        await sql.end({ timeout: 1 });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  pgStart();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`create database ${database}`);
  } finally {
    await admin.end();
  }
  await waitReady();

  return {
    url,
    port,
    dataDir,
    stop,
    async start() {
      pgStart();
      await waitReady();
    },
    async restart({ mode = 'fast', downMs = 0 } = {}) {
      stop(mode);
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      pgStart();
      await waitReady();
    },
    close() {
      process.off('exit', stopOnExit);
      stop('fast');
    },
  };
}
