/**
 * One `vps serve --role …` child process of the topology, on fixed ports so that a restart comes
 * back at the same address. Output goes to a log file (appended across restarts) and a short tail
 * in memory, read for the start-up banner. A process that exits without being asked to is started
 * again, as a supervisor (systemd, a container runtime) would, and the exit is recorded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..');

const MAX_SUPERVISED_RESTARTS = 5;

export interface UnexpectedExit {
  name: string;
  at: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  tail: string;
}

export interface RoleProcessOptions {
  name: string;
  role: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
  /** Resolves once the role serves; rejects with a message if it cannot. */
  ready: (proc: RoleProcess, deadline: number) => Promise<void>;
  /** Called when the process died without being asked to, before it is started again. */
  onUnexpectedExit: (exit: UnexpectedExit) => void;
  startTimeoutMs?: number;
}

export class RoleProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private tailText = '';
  private listeners = new Set<() => void>();
  private readonly log: WriteStream;
  /** Set while we stop it on purpose, so its exit is not taken for a crash. */
  private stopping = false;
  private closed = false;
  private restarting: Promise<void> | undefined;
  /** How many times the process was started. */
  starts = 0;
  /** Restarts the supervisor made; it gives up after MAX_SUPERVISED_RESTARTS, so a broken build does not spin. */
  private supervisedRestarts = 0;

  constructor(readonly opts: RoleProcessOptions) {
    this.log = createWriteStream(opts.logFile, { flags: 'a' });
    // However the topology's process ends, no role outlives it.
    process.once('exit', () => {
      if (this.alive) this.child!.kill('SIGKILL');
    });
  }

  get name(): string {
    return this.opts.name;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last output since the current start (at most 64 KiB). */
  output(): string {
    return this.tailText;
  }

  /** Starts the process and waits until it is ready. */
  async start(): Promise<void> {
    if (this.alive) throw new Error(`${this.name} is already running`);
    this.stopping = false;
    this.tailText = '';
    this.starts += 1;
    this.log.write(`\n===== ${new Date().toISOString()} start #${this.starts}: vps serve --role ${this.opts.role}\n`);
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'vps'), 'serve', '--role', this.opts.role], {
      cwd: REPO_ROOT,
      env: this.opts.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: a Ctrl-C at the terminal reaches only the topology, which stops
      // the roles in order, instead of every role at once behind the supervisor's back.
      detached: true,
    });
    this.child = child;
    const onData = (chunk: Buffer) => {
      this.log.write(chunk);
      this.tailText = (this.tailText + chunk.toString()).slice(-65_536);
      for (const wake of this.listeners) wake();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.log.write(`\n===== ${new Date().toISOString()} exited code=${code} signal=${signal}\n`);
        for (const wake of this.listeners) wake();
        resolve();
        if (!this.stopping && !this.closed) this.superviseExit(code, signal);
      });
    });
    const deadline = Date.now() + (this.opts.startTimeoutMs ?? 90_000);
    try {
      await this.opts.ready(this, deadline);
    } catch (err) {
      throw new Error(`${this.name} did not become ready: ${(err as Error).message}\n--- its output:\n${this.tailText.slice(-4000)}`);
    }
  }

  /** Resolves with the first match of `pattern` in the output since the current start. */
  waitFor(pattern: RegExp, deadline: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = this.tailText.match(pattern);
        if (match) {
          done();
          resolve(match);
        } else if (!this.alive) {
          done();
          reject(new Error(`exited before printing ${pattern}`));
        }
      };
      const timer = setTimeout(
        () => {
          done();
          reject(new Error(`timed out waiting for ${pattern}`));
        },
        Math.max(0, deadline - Date.now()),
      );
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  /**
   * Sends the signal and waits for the exit. SIGTERM is a graceful stop (the process has its
   * grace time plus a margin, then gets SIGKILL); SIGKILL is a crash.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<void> {
    if (!this.alive) return;
    this.stopping = true;
    this.child!.kill(signal);
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Stops with `signal`, stays down `downMs` (a fixed fault window), starts again and waits until ready. */
  async restart(signal: NodeJS.Signals = 'SIGTERM', downMs = 0): Promise<void> {
    await this.stop(signal);
    if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
    await this.start();
  }

  /** Stops for good: no supervision afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    await this.restarting?.catch(() => undefined);
    await this.stop('SIGTERM', 10_000);
    await new Promise<void>((resolve) => this.log.end(resolve));
  }

  private superviseExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.opts.onUnexpectedExit({ name: this.name, at: Date.now(), code, signal, tail: this.tailText.slice(-2000) });
    if (++this.supervisedRestarts > MAX_SUPERVISED_RESTARTS) {
      this.log.write(`\n===== supervisor gives up on ${this.name} after ${MAX_SUPERVISED_RESTARTS} restarts\n`);
      return;
    }
    // A short pause, as a supervisor's restart delay, so a process failing at start does not spin.
    this.restarting = new Promise<void>((resolve) => setTimeout(resolve, 500))
      .then(() => (this.closed || this.alive ? undefined : this.start()))
      .catch((err: unknown) => {
        this.log.write(`\n===== supervisor could not restart ${this.name}: ${String(err)}\n`);
      })
      .finally(() => {
        this.restarting = undefined;
      });
  }
}
