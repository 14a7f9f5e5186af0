import { Batcher } from '../../core/db/batcher';

interface Run<In, Out> {
  inputs: readonly In[];
  answer(outputs: readonly Out[]): void;
  fail(err: unknown): void;
}

/** A `run` that records every batch it is given and settles only when the test says so. */
function controlledRun<In, Out>() {
  const runs: Array<Run<In, Out>> = [];
  const run = (inputs: readonly In[]) =>
    new Promise<readonly Out[]>((resolve, reject) => {
      runs.push({ inputs, answer: resolve, fail: reject });
    });
  return { runs, run };
}

/** Lets every promise chain already queued settle, so the batcher reacts to what the test just did. */
async function flush() {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** Follows a call's outcome without leaving a rejection unhandled while the test is still driving it. */
function track<T>(promise: Promise<T>) {
  const state: { value?: T; error?: unknown; settled: boolean } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { value, settled: true }),
    (error: unknown) => Object.assign(state, { error, settled: true }),
  );
  return state;
}

const double = (inputs: readonly number[]) => inputs.map((n) => n * 2);

describe('Batcher', () => {
  it('runs a call on an idle batcher at once, in a batch of its own', async () => {
    const { runs, run } = controlledRun<number, number>();
    const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 1 });
    const result = batcher.call(1);
    // Synchronously, without waiting for a timer or a later tick.
    expect(runs.map((r) => r.inputs)).toEqual([[1]]);
    runs[0]!.answer([10]);
    await expect(result).resolves.toBe(10);
  });

  it("with gather 'turn', starts an idle batcher's batch once this turn's callbacks have run, with every call they made", async () => {
    const { runs, run } = controlledRun<number, number>();
    const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 1, gather: 'turn' });
    // Replies that a statement run on this thread held up settle one after another in one turn.
    const calls: Array<Promise<number>> = [];
    for (const n of [1, 2, 3]) {
      calls.push(batcher.call(n));
      await flush();
    }
    await flush();
    expect(runs).toHaveLength(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs.map((r) => r.inputs)).toEqual([[1, 2, 3]]);
    runs[0]!.answer(double(runs[0]!.inputs));
    await expect(Promise.all(calls)).resolves.toEqual([2, 4, 6]);
  });

  it('with gather { ms }, an idle batcher waits that long after its first call, and calls meanwhile share the batch', async () => {
    jest.useFakeTimers();
    try {
      const { runs, run } = controlledRun<number, number>();
      const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 1, gather: { ms: 5 } });
      const first = batcher.call(1);
      jest.advanceTimersByTime(4);
      const second = batcher.call(2);
      expect(runs).toHaveLength(0);
      jest.advanceTimersByTime(1);
      expect(runs.map((r) => r.inputs)).toEqual([[1, 2]]);
      // A call while the batch is in flight waits for it, then goes at once: only an idle batcher gathers.
      const third = batcher.call(3);
      runs[0]!.answer(double(runs[0]!.inputs));
      await expect(Promise.all([first, second])).resolves.toEqual([2, 4]);
      await flush();
      expect(runs.map((r) => r.inputs)).toEqual([[1, 2], [3]]);
      runs[1]!.answer([6]);
      await expect(third).resolves.toBe(6);
    } finally {
      jest.useRealTimers();
    }
  });

  it('gathers the calls that arrive while a batch is in flight into one next batch, in arrival order', async () => {
    const { runs, run } = controlledRun<number, number>();
    const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 1 });
    const first = batcher.call(1);
    const later = [2, 3, 4].map((n) => batcher.call(n));
    await flush();
    expect(runs.map((r) => r.inputs)).toEqual([[1]]);

    runs[0]!.answer(double(runs[0]!.inputs));
    await expect(first).resolves.toBe(2);
    await flush();
    expect(runs.map((r) => r.inputs)).toEqual([[1], [2, 3, 4]]);

    runs[1]!.answer(double(runs[1]!.inputs));
    await expect(Promise.all(later)).resolves.toEqual([4, 6, 8]);
    expect(runs).toHaveLength(2);
  });

  it('splits a backlog into batches of at most maxBatch', async () => {
    const { runs, run } = controlledRun<number, number>();
    const batcher = new Batcher(run, { maxBatch: 2, maxInFlight: 1 });
    const calls = [0, 1, 2, 3, 4, 5].map((n) => batcher.call(n));
    for (let i = 0; i < 4; i++) {
      await flush();
      expect(runs).toHaveLength(i + 1);
      runs[i]!.answer(double(runs[i]!.inputs));
    }
    await expect(Promise.all(calls)).resolves.toEqual([0, 2, 4, 6, 8, 10]);
    expect(runs.map((r) => r.inputs)).toEqual([[0], [1, 2], [3, 4], [5]]);
  });

  it('keeps maxInFlight runs going at once and no more', async () => {
    const { runs, run } = controlledRun<string, string>();
    const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 2 });
    const a = batcher.call('a');
    const b = batcher.call('b');
    const rest = ['c', 'd'].map((s) => batcher.call(s));
    await flush();
    // Two calls on an idle batcher, each started at once; the third waits for one to end.
    expect(runs.map((r) => r.inputs)).toEqual([['a'], ['b']]);

    // The second run ending first frees a slot just as well.
    runs[1]!.answer(['B']);
    await expect(b).resolves.toBe('B');
    await flush();
    expect(runs.map((r) => r.inputs)).toEqual([['a'], ['b'], ['c', 'd']]);

    const e = batcher.call('e');
    await flush();
    // 'a' and 'c, d' are in flight: 'e' waits.
    expect(runs).toHaveLength(3);

    runs[0]!.answer(['A']);
    runs[2]!.answer(['C', 'D']);
    await expect(a).resolves.toBe('A');
    await expect(Promise.all(rest)).resolves.toEqual(['C', 'D']);
    await flush();
    expect(runs.map((r) => r.inputs)).toEqual([['a'], ['b'], ['c', 'd'], ['e']]);
    runs[3]!.answer(['E']);
    await expect(e).resolves.toBe('E');
  });

  it('rejects only the calls of a failing batch, and serves the calls gathered behind it', async () => {
    const { runs, run } = controlledRun<number, number>();
    const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 1 });
    const doomed = track(batcher.call(1));
    const waiting = [2, 3].map((n) => track(batcher.call(n)));
    const failure = new Error('connection reset');
    runs[0]!.fail(failure);
    await flush();
    expect(doomed).toEqual({ error: failure, settled: true });
    expect(waiting.map((w) => w.settled)).toEqual([false, false]);

    expect(runs.map((r) => r.inputs)).toEqual([[1], [2, 3]]);
    runs[1]!.answer([20, 30]);
    await flush();
    expect(waiting).toEqual([
      { value: 20, settled: true },
      { value: 30, settled: true },
    ]);

    const later = batcher.call(4);
    expect(runs.map((r) => r.inputs)).toEqual([[1], [2, 3], [4]]);
    runs[2]!.answer([40]);
    await expect(later).resolves.toBe(40);
  });

  it('rejects a failing batch without touching a batch in flight beside it', async () => {
    const { runs, run } = controlledRun<number, number>();
    const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 2 });
    const beside = track(batcher.call(1));
    const doomed = track(batcher.call(2));
    expect(runs.map((r) => r.inputs)).toEqual([[1], [2]]);
    const failure = new Error('deadlock detected');
    runs[1]!.fail(failure);
    await flush();
    expect(doomed).toEqual({ error: failure, settled: true });
    expect(beside.settled).toBe(false);
    runs[0]!.answer([10]);
    await flush();
    expect(beside).toEqual({ value: 10, settled: true });
  });

  it.each([
    ['too few', [1]],
    ['too many', [1, 2, 3]],
  ])('rejects every call of a batch whose run answers %s outputs', async (_name, outputs) => {
    const { runs, run } = controlledRun<number, number>();
    const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 1 });
    const first = batcher.call(0);
    const pair = [1, 2].map((n) => track(batcher.call(n)));
    runs[0]!.answer([0]);
    await expect(first).resolves.toBe(0);
    await flush();
    expect(runs[1]!.inputs).toEqual([1, 2]);

    runs[1]!.answer(outputs);
    await flush();
    for (const call of pair) {
      expect(call.settled).toBe(true);
      expect(call.error).toBeInstanceOf(Error);
      expect(call).not.toHaveProperty('value');
    }

    // The batcher is not left counting the broken run as in flight.
    const after = batcher.call(3);
    expect(runs).toHaveLength(3);
    runs[2]!.answer([30]);
    await expect(after).resolves.toBe(30);
  });

  it('rejects the calls of a batch whose run throws before returning a promise', async () => {
    const failure = new Error('bad parameters');
    let calls = 0;
    const batcher = new Batcher<number, number>(
      (inputs) => {
        if (calls++ === 0) throw failure;
        return Promise.resolve(double(inputs));
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    await expect(batcher.call(1)).rejects.toBe(failure);
    await expect(batcher.call(2)).resolves.toBe(4);
  });

  describe('a stalled statement', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('gives up its place after stallMs, so the calls behind it run, and still answers its own calls', async () => {
      const { runs, run } = controlledRun<number, number>();
      const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 1, stallMs: 50 });
      const stuck = track(batcher.call(1));
      const behind = batcher.call(2);
      await flush();
      jest.advanceTimersByTime(49);
      await flush();
      expect(runs.map((r) => r.inputs)).toEqual([[1]]);

      jest.advanceTimersByTime(1);
      await flush();
      expect(runs.map((r) => r.inputs)).toEqual([[1], [2]]);
      runs[1]!.answer([20]);
      await expect(behind).resolves.toBe(20);

      runs[0]!.answer([10]);
      await flush();
      expect(stuck).toMatchObject({ settled: true, value: 10 });
      // Its late end does not free a second place: two calls now still go one batch at a time.
      const next = [3, 4].map((n) => batcher.call(n));
      await flush();
      expect(runs.map((r) => r.inputs)).toEqual([[1], [2], [3]]);
      runs[2]!.answer([30]);
      await flush();
      expect(runs.map((r) => r.inputs)).toEqual([[1], [2], [3], [4]]);
      runs[3]!.answer([40]);
      await expect(Promise.all(next)).resolves.toEqual([30, 40]);
    });

    it('leaves no timer behind a statement that ends in time', async () => {
      const { runs, run } = controlledRun<number, number>();
      const batcher = new Batcher(run, { maxBatch: 10, maxInFlight: 1, stallMs: 50 });
      const result = batcher.call(1);
      runs[0]!.answer([10]);
      await expect(result).resolves.toBe(10);
      await flush();
      expect(jest.getTimerCount()).toBe(0);
    });
  });

  it.each([
    [{ maxBatch: 0, maxInFlight: 1 }],
    [{ maxBatch: 1, maxInFlight: 0 }],
    [{ maxBatch: -1, maxInFlight: 1 }],
    [{ maxBatch: Number.NaN, maxInFlight: 1 }],
    [{ maxBatch: 1, maxInFlight: Number.NaN }],
  ])('refuses %o', (options) => {
    expect(() => new Batcher(() => Promise.resolve([]), options)).toThrow(/at least 1/);
  });
});
