import { reconnectDelaySeconds } from '../../core/db/client';

describe('reconnectDelaySeconds', () => {
  it('doubles from 50 ms and never waits more than a second, however many connections failed', () => {
    const fullJitter = () => 1;
    expect([0, 1, 2, 3, 4, 5, 6, 50].map((n) => reconnectDelaySeconds(n, fullJitter))).toEqual([0.05, 0.1, 0.2, 0.4, 0.8, 1, 1, 1]);
  });

  it('spreads the connections of a pool between half and all of the delay', () => {
    expect(reconnectDelaySeconds(10, () => 0)).toBe(0.5);
    expect(reconnectDelaySeconds(10, () => 0.5)).toBe(0.75);
  });
});
