/**
 * The emulator's clock. Publish processing, token lifetimes and the daily pre-check counter follow
 * it, so a test can move time forward (`advance`) or run it faster (`speed`) instead of waiting.
 * Timers scheduled on it fire when virtual time reaches them, whichever way time got there.
 */
export class SandboxClock {
  private anchorReal = Date.now();
  private anchorVirtual = Date.now();
  private speed: number;
  private timers: Array<{ at: number; fire: () => void }> = [];
  private readonly ticker: NodeJS.Timeout;

  constructor(opts: { speed?: number; tickMs?: number } = {}) {
    this.speed = opts.speed ?? 1;
    this.ticker = setInterval(() => this.fireDue(), opts.tickMs ?? 25);
    this.ticker.unref();
  }

  now(): number {
    return this.anchorVirtual + (Date.now() - this.anchorReal) * this.speed;
  }

  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  advance(ms: number): void {
    this.rebase();
    this.anchorVirtual += ms;
    this.fireDue();
  }

  setSpeed(speed: number): void {
    this.rebase();
    this.speed = speed;
  }

  state(): { now: string; speed: number; pendingTimers: number } {
    return { now: new Date(this.now()).toISOString(), speed: this.speed, pendingTimers: this.timers.length };
  }

  /** Runs `fire` once virtual time has moved `delayMs` past now. */
  after(delayMs: number, fire: () => void): void {
    this.timers.push({ at: this.now() + delayMs, fire });
  }

  stop(): void {
    clearInterval(this.ticker);
    this.timers = [];
  }

  private rebase(): void {
    this.anchorVirtual = this.now();
    this.anchorReal = Date.now();
  }

  private fireDue(): void {
    const now = this.now();
    const due = this.timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at);
    if (due.length === 0) return;
    this.timers = this.timers.filter((t) => t.at > now);
    for (const timer of due) timer.fire();
  }
}
