/**
 * A bound on the password checks one process runs at once. scrypt runs on libuv's thread pool (4
 * threads unless UV_THREADPOOL_SIZE says otherwise), which file reads and DNS lookups share: a burst
 * of sign-ins queued there made every check wait for the ones before it (16 at once took up to
 * 1.5 s each) and delayed the process's other I/O with them. A try that finds every slot taken is
 * refused at once instead of queueing; a check takes about 0.1 s, so Retry-After is 1 s.
 */
export class PasswordSlots {
  private inUse = 0;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`password slots: size must be a positive integer, got ${size}`);
  }

  /** A slot's release function, or undefined when all are taken. Release exactly once. */
  tryTake(): (() => void) | undefined {
    if (this.inUse >= this.size) return undefined;
    this.inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
    };
  }

  /** Checks running now, for tests and metrics. */
  get busy(): number {
    return this.inUse;
  }
}
