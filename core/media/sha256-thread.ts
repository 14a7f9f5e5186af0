/**
 * SHA-256 of a media write, computed on a worker thread. Hashing costs about 0.75 s of CPU per GiB
 * on our 2-core hosts; on the main thread it ran in series with parsing the upload and writing it
 * out (a 1 GiB multipart upload to the folder took 2.6 s with it and 1.6 s without, bench/upload).
 * One thread serves the process, started on demand and unreferenced while no hash is open. It
 * hashes in one of two ways:
 *
 * - ThreadedSha256 (the S3 store's writes): the bytes are copied into at most BUFFERS_PER_HASH
 *   buffers of BATCH_BYTES that are transferred to the thread and back, never copied again nor
 *   reallocated, so a hash holds 4 MiB at most and a write waits while all its buffers are away.
 *   Smaller files are hashed where they are, in one call at the end.
 * - FollowedFileSha256 (the folder store's): the hash of a file in order. Bytes written directly
 *   (O_DIRECT) are hashed where they lie, in the write's slot of shared memory (staging-slots.ts),
 *   which is free again once the thread has read it. Bytes written through the page cache, and
 *   any part a resumed write found on disk, the thread reads back from the file; for those the
 *   main thread only says how far the file is written, which spared it the copies and messages
 *   that had cost it about 0.3 s per GiB (bench/README.md).
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { StagingSlot } from './staging-slots';

const BATCH_BYTES = 1024 * 1024;
const BUFFERS_PER_HASH = 4;
/**
 * How much more of a followed file must be written before the thread is told. Each message wakes
 * the thread, which costs the sender 30 µs and more on our virtual machines; the thread catches up
 * from the page cache, and at the end it has at most this much left to read.
 */
const FOLLOW_STEP_BYTES = 8 * 1024 * 1024;

/**
 * How much lower the thread's scheduling priority is than the process's (nice values, up to 19).
 * On a busy host, where the hash and the event loop compete for two cores, the event loop serves
 * every request, and the hash only its own upload: behind, it catches up from the file when a core
 * is free, or holds its upload's buffers and so slows that upload alone.
 */
const THREAD_NICE_STEP = 10;

/** Plain JavaScript evaluated by the thread: it runs the same under tsx and compiled. */
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { closeSync, openSync, readlinkSync, readSync } = require('node:fs');
const { getPriority, setPriority } = require('node:os');
try {
  // Linux names a thread's own id here, and takes it wherever a process id is asked for.
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  setPriority(tid, Math.min(19, getPriority(tid) + ${THREAD_NICE_STEP}));
} catch {
  // Elsewhere the thread keeps the process's priority: slower to catch up is all it costs.
}
const open = new Map();
const followed = new Map();
const readBuffer = Buffer.allocUnsafe(${BATCH_BYTES});
let shared;
function readTo(f, upTo) {
  if (f.at < upTo && f.fd === undefined) f.fd = openSync(f.path, 'r');
  while (f.at < upTo) {
    const n = readSync(f.fd, readBuffer, 0, Math.min(readBuffer.length, upTo - f.at), f.at);
    if (n === 0) throw new Error('the file ends at ' + f.at + ' bytes, short of the ' + upTo + ' written');
    f.hash.update(readBuffer.subarray(0, n));
    f.at += n;
  }
}
function unfollow(id) {
  const f = followed.get(id);
  followed.delete(id);
  if (f && f.fd !== undefined) closeSync(f.fd);
}
parentPort.on('message', (m) => {
  if (m.op === 'data') {
    let hash = open.get(m.id);
    if (!hash) open.set(m.id, (hash = createHash('sha256')));
    hash.update(new Uint8Array(m.buffer, 0, m.length));
    parentPort.postMessage({ id: m.id, buffer: m.buffer }, [m.buffer]);
  } else if (m.op === 'end') {
    const hash = open.get(m.id) || createHash('sha256');
    open.delete(m.id);
    parentPort.postMessage({ id: m.id, digest: hash.digest('hex') });
  } else if (m.op === 'follow') {
    followed.set(m.id, { hash: createHash('sha256'), path: m.path, fd: undefined, at: 0, failure: undefined });
  } else if (m.op === 'memory') {
    shared = Buffer.from(m.memory);
  } else if (m.op === 'slot') {
    const f = followed.get(m.id);
    if (f && !f.failure) {
      try {
        // What comes before the slot and was not given in memory is on disk: a resumed write's start.
        readTo(f, m.at);
        f.hash.update(shared.subarray(m.offset, m.offset + m.length));
        f.at += m.length;
      } catch (err) {
        f.failure = err.message;
      }
    }
    // Answered even for a dropped hash: the slot is free once the thread is past it.
    parentPort.postMessage({ slot: m.slot });
  } else if (m.op === 'upTo' || m.op === 'finish') {
    const f = followed.get(m.id);
    if (!f) return;
    if (!f.failure) {
      try {
        readTo(f, m.upTo);
      } catch (err) {
        f.failure = err.message;
      }
    }
    if (m.op === 'finish') {
      unfollow(m.id);
      parentPort.postMessage(f.failure ? { id: m.id, error: f.failure } : { id: m.id, digest: f.hash.digest('hex') });
    }
  } else if (m.op === 'drop') {
    open.delete(m.id);
    unfollow(m.id);
  }
});
`;

type Reply = { id: number; buffer: ArrayBuffer } | { id: number; digest: string } | { id: number; error: string } | { slot: number };

type Message =
  | { op: 'data'; id: number; buffer: ArrayBuffer; length: number }
  | { op: 'end' | 'drop'; id: number }
  | { op: 'follow'; id: number; path: string }
  | { op: 'upTo' | 'finish'; id: number; upTo: number }
  | { op: 'memory'; memory: SharedArrayBuffer }
  | { op: 'slot'; id: number; slot: number; offset: number; length: number; at: number };

interface Job {
  returned(buffer: ArrayBuffer): void;
  digested(hex: string): void;
  failed(err: Error): void;
}

/** The process's hashing thread: started on demand, started again after a crash. */
const thread = new (class HashThread {
  private worker: Worker | undefined;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;
  /** Slots of shared memory the thread has yet to read, by the number their message carries. */
  private readonly slotsOut = new Map<number, () => void>();
  private nextSlot = 1;
  /** The shared memory the current thread has been given. */
  private memory: SharedArrayBuffer | undefined;

  open(job: Job): number {
    const id = this.nextId++;
    if (this.jobs.size === 0) this.current().ref();
    this.jobs.set(id, job);
    return id;
  }

  post(message: Message): void {
    if (message.op === 'data') this.current().postMessage(message, [message.buffer]);
    else this.current().postMessage(message);
  }

  /** Hashes `length` bytes of `slot` from `from`, the file's bytes at `at`, into hash `id`: settled once the thread is past them. */
  hashSlot(id: number, slot: StagingSlot, from: number, length: number, at: number): Promise<void> {
    const worker = this.current();
    if (this.memory !== slot.memory) {
      this.memory = slot.memory;
      worker.postMessage({ op: 'memory', memory: slot.memory } satisfies Message);
    }
    const n = this.nextSlot++;
    const done = new Promise<void>((resolve) => this.slotsOut.set(n, resolve));
    worker.postMessage({ op: 'slot', id, slot: n, offset: slot.offset + from, length, at } satisfies Message);
    return done;
  }

  close(id: number): void {
    this.jobs.delete(id);
    // Idle, it must not keep the process alive.
    if (this.jobs.size === 0) this.worker?.unref();
  }

  private current(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(THREAD_SOURCE, { eval: true, name: 'vps-media-sha256' });
    const fail = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.memory = undefined;
      // A thread that is gone reads no slot any more.
      for (const free of this.slotsOut.values()) free();
      this.slotsOut.clear();
      const jobs = [...this.jobs.values()];
      this.jobs.clear();
      for (const job of jobs) job.failed(err);
    };
    worker.on('message', (reply: Reply) => {
      if ('slot' in reply) {
        this.slotsOut.get(reply.slot)?.();
        this.slotsOut.delete(reply.slot);
        return;
      }
      const job = this.jobs.get(reply.id);
      if (!job) return;
      if ('digest' in reply) job.digested(reply.digest);
      else if ('error' in reply) job.failed(new Error(`hashing the stored file failed: ${reply.error}`));
      else job.returned(reply.buffer);
    });
    worker.on('error', (err) => fail(new Error(`the media hashing thread failed: ${err.message}`, { cause: err })));
    worker.on('exit', (code) => fail(new Error(`the media hashing thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }
})();

/**
 * One SHA-256 in progress. `update` copies the chunk (the caller may pass it on at once) and
 * returns a promise only when it had to wait for a buffer to come back; `digest` ends the hash;
 * `abandon` drops it. After a failure of the thread every call rejects with that failure.
 */
export class ThreadedSha256 {
  private id: number | undefined;
  private readonly spare: ArrayBuffer[] = [];
  private buffers = 0;
  private filling: Uint8Array | undefined;
  private filled = 0;
  private waiting: { resolve(): void; reject(err: Error): void } | undefined;
  private ending: { resolve(hex: string): void; reject(err: Error): void } | undefined;
  private failure: Error | undefined;
  private done = false;

  update(chunk: Uint8Array): Promise<void> | undefined {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.failure) return Promise.reject(this.failure);
      if (!this.filling) {
        const buffer = this.takeBuffer();
        if (!buffer) return this.waitForBuffer().then(() => this.update(chunk.subarray(offset)));
        this.filling = new Uint8Array(buffer);
        this.filled = 0;
      }
      const n = Math.min(chunk.length - offset, this.filling.length - this.filled);
      this.filling.set(chunk.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === this.filling.length) this.send();
    }
    return undefined;
  }

  async digest(): Promise<string> {
    if (this.failure) throw this.failure;
    this.done = true;
    // Nothing went to the thread: a small file, hashed here in one call.
    if (this.id === undefined)
      return createHash('sha256')
        .update(this.filling?.subarray(0, this.filled) ?? new Uint8Array(0))
        .digest('hex');
    if (this.filled > 0) this.send();
    const id = this.id;
    const hex = new Promise<string>((resolve, reject) => (this.ending = { resolve, reject }));
    thread.post({ op: 'end', id });
    try {
      return await hex;
    } finally {
      thread.close(id);
    }
  }

  abandon(): void {
    if (this.done) return;
    this.done = true;
    this.waiting?.reject(new Error('the hash was abandoned'));
    if (this.id === undefined || this.failure) return;
    thread.post({ op: 'drop', id: this.id });
    thread.close(this.id);
  }

  private send(): void {
    this.id ??= thread.open({
      returned: (buffer) => {
        this.spare.push(buffer);
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting?.resolve();
      },
      digested: (hex) => this.ending?.resolve(hex),
      failed: (err) => {
        this.failure = err;
        this.waiting?.reject(err);
        this.ending?.reject(err);
      },
    });
    const buffer = this.filling!.buffer as ArrayBuffer;
    const length = this.filled;
    this.filling = undefined;
    this.filled = 0;
    thread.post({ op: 'data', id: this.id, buffer, length });
  }

  private takeBuffer(): ArrayBuffer | undefined {
    const spare = this.spare.pop();
    if (spare) return spare;
    if (this.buffers >= BUFFERS_PER_HASH) return undefined;
    this.buffers += 1;
    return new ArrayBuffer(BATCH_BYTES);
  }

  private waitForBuffer(): Promise<void> {
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }
}

/**
 * The SHA-256 of a file as it is written, in order from its first byte. `slot` hands the thread
 * bytes in shared memory; what comes before them and was not handed over is read back from the
 * file, which `written` says holds its first `bytes` bytes (any prefix that was there before
 * counts: the hash is of the whole file). `digest` waits for the hash of the first `size`;
 * `abandon` drops it. After a failure of the thread, or of reading the file, `digest` rejects.
 */
export class FollowedFileSha256 {
  private readonly id: number;
  private told = 0;
  private ending: { resolve(hex: string): void; reject(err: Error): void } | undefined;
  private failure: Error | undefined;
  private done = false;

  constructor(path: string) {
    this.id = thread.open({
      returned: () => undefined,
      digested: (hex) => this.ending?.resolve(hex),
      failed: (err) => {
        this.failure = err;
        this.ending?.reject(err);
      },
    });
    thread.post({ op: 'follow', id: this.id, path });
  }

  /**
   * Hashes `length` bytes of `slot` from `from`, the file's bytes at `at`: settled once the slot may
   * be written over, whether or not the hash is still wanted.
   */
  slot(slot: StagingSlot, from: number, length: number, at: number): Promise<void> {
    if (this.done || this.failure || length === 0) return Promise.resolve();
    this.told = at + length;
    return thread.hashSlot(this.id, slot, from, length, at);
  }

  written(bytes: number): void {
    if (this.done || this.failure || bytes - this.told < FOLLOW_STEP_BYTES) return;
    this.told = bytes;
    thread.post({ op: 'upTo', id: this.id, upTo: bytes });
  }

  async digest(size: number): Promise<string> {
    if (this.failure) throw this.failure;
    this.done = true;
    const hex = new Promise<string>((resolve, reject) => (this.ending = { resolve, reject }));
    thread.post({ op: 'finish', id: this.id, upTo: size });
    try {
      return await hex;
    } finally {
      thread.close(this.id);
    }
  }

  abandon(): void {
    if (this.done) return;
    this.done = true;
    if (!this.failure) thread.post({ op: 'drop', id: this.id });
    thread.close(this.id);
  }
}
