/**
 * Embedded PGlite on a worker thread of its own. PGlite is Postgres compiled to WASM and runs
 * synchronously on the thread that calls it: on the main thread it was on the stack in half the
 * service's CPU profile at 100 events/s, and every HTTP request waited behind it. Here the main
 * thread only posts messages and the worker (pglite-thread.worker.ts) owns the database.
 *
 * `PgliteThread` offers the part of PGlite's interface that drizzle-orm/pglite (queries and
 * interactive transactions), its migrator, rawQuery and listen use, with PGlite's own results and
 * errors; PGlite's mutexes in the worker order the statements as they did on the main thread.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';

export interface QueryOptions {
  rowMode?: 'array' | 'object';
  /** Only pass-through parsers (what drizzle gives, to keep dates as text): functions cannot cross threads. */
  parsers?: Record<number, (value: string, typeId: number) => unknown>;
}

export interface Results<T = Record<string, unknown>> {
  rows: T[];
  affectedRows?: number;
  fields: Array<{ name: string; dataTypeID: number }>;
}

export interface PgliteThreadTransaction {
  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  exec(text: string): Promise<Results[]>;
}

/** What the main thread asks; `txId` runs a statement inside that open transaction. */
export type Call =
  | { op: 'open'; dataDir: string }
  | { op: 'query'; txId?: number; text: string; params: unknown[]; rowMode?: 'array' | 'object'; passThroughTypes: number[] }
  | { op: 'exec'; txId?: number; text: string }
  /** Opens a transaction, known by this request's id, that stays open until `end`. */
  | { op: 'begin' }
  | { op: 'end'; txId: number; commit: boolean }
  /** Subscribes under this request's id; notifications come back tagged with it. */
  | { op: 'listen'; channel: string }
  | { op: 'unlisten'; listenId: number }
  | { op: 'close' };

export interface Request {
  id: number;
  call: Call;
}

export type Reply =
  | { id: number; ok: true; value?: unknown }
  /** The error's own fields (code, detail, constraint…), its name, message and stack. */
  | { id: number; ok: false; error: Record<string, unknown> }
  | { notify: number; payload: string };

const WORKER_FILE = path.join(__dirname, 'pglite-thread.worker.ts');

// The worker runs TypeScript like the rest of the service (bin/vps, `node --import tsx`, jest all
// run the .ts sources), through tsx's require hook: the parent's loader does not reach a worker.
// The parent's other flags are not inherited (a worker refuses V8 flags such as --expose-gc), but
// --cpu-prof is, so that a profiled run (BENCH_CPU_PROF) shows this thread too.
const WORKER_EXEC_ARGV = [...process.execArgv.filter((arg) => arg.startsWith('--cpu-prof')), '--require', require.resolve('tsx/cjs')];

/** A probe no real parser returns unchanged. */
const PROBE = '\u0000pass-through?';

export class PgliteThread {
  readonly #worker = new Worker(WORKER_FILE, { execArgv: WORKER_EXEC_ARGV });
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  readonly #listeners = new Map<number, (payload: string) => void>();
  #nextId = 1;
  /** Set once the thread has stopped: every later call fails with it. */
  #stopped: Error | undefined;
  #terminating = false;
  #closing: Promise<void> | undefined;

  constructor() {
    // Like PGlite on the main thread, an idle database does not keep the process alive; a call
    // waiting for its answer does (see #call).
    this.#worker.unref();
    this.#worker.on('message', (reply: Reply) => this.#onReply(reply));
    let cause: Error | undefined;
    this.#worker.once('error', (err) => {
      cause = err;
    });
    this.#worker.once('exit', (code) => {
      this.#stopped = this.#terminating
        ? new Error('PGlite is closed')
        : new Error(`The PGlite worker thread stopped (exit code ${code})${cause ? `: ${cause.message}` : ''}`, { cause });
      for (const waiter of this.#pending.values()) waiter.reject(this.#stopped);
      this.#pending.clear();
    });
  }

  async open(dataDir: string): Promise<void> {
    try {
      await this.#call({ op: 'open', dataDir });
    } catch (err) {
      await this.#terminate();
      throw err;
    }
  }

  async query<T>(text: string, params: unknown[] = [], options: QueryOptions = {}, txId?: number): Promise<Results<T>> {
    const passThroughTypes = Object.entries(options.parsers ?? {}).map(([oid, parse]) => {
      if (parse(PROBE, Number(oid)) !== PROBE) throw new Error(`PGlite on a worker thread takes pass-through parsers only (type ${oid})`);
      return Number(oid);
    });
    return (await this.#call({ op: 'query', txId, text, params, rowMode: options.rowMode, passThroughTypes })) as Results<T>;
  }

  async exec(text: string, txId?: number): Promise<Results[]> {
    return (await this.#call({ op: 'exec', txId, text })) as Results[];
  }

  /** Commits when `callback` resolves, rolls back when it throws, as PGlite's own transaction does. */
  async transaction<T>(callback: (tx: PgliteThreadTransaction) => Promise<T>): Promise<T> {
    const txId = this.#nextId++;
    await this.#call({ op: 'begin' }, txId);
    const tx: PgliteThreadTransaction = {
      query: (text, params, options) => this.query(text, params, options, txId),
      exec: (text) => this.exec(text, txId),
    };
    let result: T;
    try {
      result = await callback(tx);
    } catch (err) {
      await this.#call({ op: 'end', txId, commit: false });
      throw err;
    }
    await this.#call({ op: 'end', txId, commit: true });
    return result;
  }

  /** Resolves once LISTEN has run, with the function that ends this subscription. */
  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const listenId = this.#nextId++;
    this.#listeners.set(listenId, onPayload);
    try {
      await this.#call({ op: 'listen', channel }, listenId);
    } catch (err) {
      this.#listeners.delete(listenId);
      throw err;
    }
    return async () => {
      this.#listeners.delete(listenId);
      await this.#call({ op: 'unlisten', listenId });
    };
  }

  /** Closes the database, then ends the thread. Rejects if the thread had crashed before. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#stopped) throw this.#stopped;
      try {
        await this.#call({ op: 'close' });
      } finally {
        await this.#terminate();
      }
    })();
    return this.#closing;
  }

  async #terminate(): Promise<void> {
    this.#terminating = true;
    await this.#worker.terminate();
  }

  #call(call: Call, id = this.#nextId++): Promise<unknown> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    return new Promise((resolve, reject) => {
      // First, so that a parameter structured clone cannot copy rejects this call and leaves no waiter.
      this.#worker.postMessage({ id, call } satisfies Request);
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
    });
  }

  #onReply(reply: Reply): void {
    if ('notify' in reply) {
      this.#listeners.get(reply.notify)?.(reply.payload);
      return;
    }
    const waiter = this.#pending.get(reply.id);
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (reply.ok) waiter?.resolve(reply.value);
    else waiter?.reject(rebuildError(reply.error));
  }
}

/** The worker's error with the same fields, so that sqlState() and callers read code, detail, constraint… */
function rebuildError(fields: Record<string, unknown>): Error {
  const { message, ...rest } = fields;
  return Object.assign(new Error(String(message)), rest);
}

export async function openPgliteThread(dataDir: string): Promise<PgliteThread> {
  const client = new PgliteThread();
  await client.open(dataDir);
  return client;
}
