import { freeKey } from '../../core/interceptors/idempotency.interceptor';

/** Lets the promise chains of a release attempt settle. */
async function flush() {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('freeKey', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('frees the key at once when the database answers, and schedules nothing', async () => {
    const release = jest.fn(() => Promise.resolve());
    await freeKey(release, [10, 20], () => undefined);
    expect(release).toHaveBeenCalledTimes(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('returns at once when the first try fails, and keeps trying in the background until one succeeds', async () => {
    let failures = 2;
    const release = jest.fn(() => (failures-- > 0 ? Promise.reject(new Error('connection refused')) : Promise.resolve()));
    const onGiveUp = jest.fn();
    await freeKey(release, [10, 20, 40], onGiveUp);
    expect(release).toHaveBeenCalledTimes(1);

    jest.advanceTimersByTime(9);
    await flush();
    expect(release).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1);
    await flush();
    expect(release).toHaveBeenCalledTimes(2);
    jest.advanceTimersByTime(20);
    await flush();
    expect(release).toHaveBeenCalledTimes(3);
    // Freed on the third try: nothing more is scheduled, and nobody is told it gave up.
    expect(jest.getTimerCount()).toBe(0);
    expect(onGiveUp).not.toHaveBeenCalled();
  });

  it('gives up after the last delay, reporting the last failure', async () => {
    const errors = [new Error('first'), new Error('second'), new Error('third')];
    let n = 0;
    const release = jest.fn(() => Promise.reject(errors[n++]));
    const onGiveUp = jest.fn();
    await freeKey(release, [10, 20], onGiveUp);
    await jest.advanceTimersByTimeAsync(10);
    await jest.advanceTimersByTimeAsync(20);
    await flush();
    expect(release).toHaveBeenCalledTimes(3);
    expect(onGiveUp).toHaveBeenCalledWith(errors[2]);
    expect(jest.getTimerCount()).toBe(0);
  });
});
