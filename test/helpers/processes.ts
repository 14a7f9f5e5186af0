/** Runs `vps` (or npm) as a real child process, for tests of separate roles and of start-up. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { emulatorPlatformEnv } from '../../core/upstream/settings';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface ChildHandle {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * The platform settings of a child whose test never reaches the platforms: core and the worker
 * refuse to start without them, and nothing listens on port 9 (discard) here.
 */
export const UNREACHABLE_PLATFORM_ENV: Readonly<Record<string, string>> = emulatorPlatformEnv('http://127.0.0.1:9');

/** Environment of the test process minus what would point a child at the suite's own services. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'DATABASE_URL',
    'TEMPORAL_ADDRESS',
    'CORE_URL',
    'VPS_ADMIN_TOKEN',
    'VPS_ENCRYPTION_KEY',
    'PORT',
    'CORE_PORT',
    'SANDBOX_PORT',
    'OPS_PORT',
    'VPS_DATA_DIR',
  ]) {
    delete env[name];
  }
  for (const name of Object.keys(env)) if (/^(MEDIA_|VPLAT_|SHOP_)/.test(name) || name === 'VPS_MEDIA_DIR') delete env[name];
  // Children pick free ports for their ops servers, so several can run at once.
  return { ...env, LOG_LEVEL: 'warn', OPS_PORT: '0', ...extra };
}

export function spawnChild(command: string, args: string[], env: NodeJS.ProcessEnv): ChildHandle {
  const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = output.match(pattern);
          if (match) {
            cleanup();
            resolve(match);
          } else if (child.exitCode !== null) {
            cleanup();
            reject(new Error(`process exited with ${child.exitCode} before printing ${pattern}:\n${output}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern}:\n${output}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off('exit', check);
        };
        listeners.add(check);
        child.on('exit', check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** The exit code of a child that stops by itself (a refused start-up, say). */
export async function exitOf(handle: ChildHandle): Promise<number | null> {
  if (handle.child.exitCode !== null) return handle.child.exitCode;
  const [code] = (await once(handle.child, 'exit')) as [number | null];
  return code;
}

export function spawnVps(args: string[], env: NodeJS.ProcessEnv): ChildHandle {
  return spawnChild(process.execPath, [path.join(REPO_ROOT, 'bin', 'vps'), ...args], env);
}
