import { retryAfterSeconds } from '../../core/db/repositories/access';

describe('retryAfterSeconds', () => {
  it.each([
    // [tokens left, per minute, seconds until one whole token is back]
    [0, 60, 1],
    [0.5, 60, 1],
    [0, 6, 10],
    [0.5, 6, 5],
    [0.25, 6, 8], // 7.5 s rounds up: Retry-After must not invite an early retry
    [0, 1, 60],
  ])('%f tokens left at %i/min → %i s', (tokensLeft, perMinute, expected) => {
    expect(retryAfterSeconds(tokensLeft, perMinute)).toBe(expected);
  });

  it.each([
    [0.999, 60],
    [0.99, 6000],
    [1, 60],
    [5, 60],
  ])('is never below 1 (%f tokens left at %i/min)', (tokensLeft, perMinute) => {
    expect(retryAfterSeconds(tokensLeft, perMinute)).toBe(1);
  });

  it('always returns a whole number of seconds', () => {
    for (const tokensLeft of [0, 0.1, 0.33, 0.5, 0.77, 0.9]) {
      for (const perMinute of [1, 7, 60, 90, 1000]) {
        expect(Number.isInteger(retryAfterSeconds(tokensLeft, perMinute))).toBe(true);
      }
    }
  });
});
