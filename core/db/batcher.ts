/**
 * Gathers the calls that arrive while earlier statements are in flight and runs them as one
 * statement. An idle service runs each call at once (or at the end of the event-loop turn, with
 * `gather: 'turn'`, or after a few ms, with `gather: { ms }`), a busy one serves many calls per
 * statement, so the database's per-statement cost is shared out as the load grows.
 */
export interface BatcherOptions {
  /** Calls in one statement at most, which bounds its parameters and its time. */
  maxBatch: number;
  /** Statements in flight at once; further calls wait for one of them to end. */
  maxInFlight: number;
  /**
   * A statement in flight this long gives up its place, so one that hangs (say, on a connection
   * that died without a reset) cannot hold up every later call. It still answers its own calls.
   */
  stallMs?: number;
  /**
   * When an idle batcher starts its batch: at the call ('call', the default), or once the I/O
   * callbacks already due in this event-loop turn have run ('turn'). Embedded PGlite runs a
   * statement on this thread, so nothing arrives while one is "in flight" and 'call' would give
   * batches of one; 'turn' gathers the replies that one statement's run held up. It costs one
   * turn of the loop, a few microseconds on an idle process. `{ ms }` waits that long after the
   * first call, for writes nobody waits on to see (a delivery's outcome, after its push): at a
   * steady rate the calls of one moment then share a statement instead of taking one each.
   */
  gather?: 'call' | 'turn' | { ms: number };
}

interface Waiting<In, Out> {
  input: In;
  resolve: (output: Out) => void;
  reject: (err: unknown) => void;
}

export class Batcher<In, Out> {
  private readonly waiting: Array<Waiting<In, Out>> = [];
  private inFlight = 0;
  private gathering = false;

  /** `run` answers every input of a batch, in the order given. */
  constructor(
    private readonly run: (inputs: readonly In[]) => Promise<readonly Out[]>,
    private readonly options: BatcherOptions,
  ) {
    if (!(options.maxBatch >= 1 && options.maxInFlight >= 1)) throw new Error('Batcher: maxBatch and maxInFlight must be at least 1');
  }

  call(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      const gather = this.options.gather ?? 'call';
      if (gather === 'call') this.startBatches();
      else if (!this.gathering) {
        this.gathering = true;
        const start = () => {
          this.gathering = false;
          this.startBatches();
        };
        if (gather === 'turn') setImmediate(start);
        else setTimeout(start, gather.ms);
      }
    });
  }

  private startBatches(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      let holding = true;
      const release = () => {
        if (!holding) return;
        holding = false;
        this.inFlight--;
        this.startBatches();
      };
      const stalled = this.options.stallMs === undefined ? undefined : setTimeout(release, this.options.stallMs).unref();
      void this.settle(batch).finally(() => {
        clearTimeout(stalled);
        release();
      });
    }
  }

  private async settle(batch: Array<Waiting<In, Out>>): Promise<void> {
    try {
      const outputs = await this.run(batch.map((w) => w.input));
      if (outputs.length !== batch.length) throw new Error(`Batcher: ${outputs.length} answers for ${batch.length} calls`);
      batch.forEach((w, i) => w.resolve(outputs[i]!));
    } catch (err) {
      // Every call of the batch fails as it would have failed on its own statement.
      for (const w of batch) w.reject(err);
    }
  }
}
