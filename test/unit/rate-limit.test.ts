import { peekedAccess, retryAfterSeconds, shareOfDraw } from '../../core/db/repositories/access';

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

describe('shareOfDraw', () => {
  // A statement carried 5 requests of one key and drew 3 tokens, leaving 0.4 in the bucket.
  it.each([
    [0, { allowed: true, tokensLeft: 2.4 }],
    [1, { allowed: true, tokensLeft: 1.4 }],
    [2, { allowed: true, tokensLeft: 0.4 }],
    [3, { allowed: false, tokensLeft: 0.4 }],
    [4, { allowed: false, tokensLeft: 0.4 }],
  ])('gives the request at position %i of 3 drawn %o', (position, expected) => {
    expect(shareOfDraw(3, 0.4, position)).toEqual(expected);
  });

  it('gives each allowed request its own count of tokens left, down to what the bucket holds', () => {
    const left = [0, 1, 2, 3, 4, 5].map((position) => shareOfDraw(6, 54, position).tokensLeft);
    expect(left).toEqual([59, 58, 57, 56, 55, 54]);
  });

  it('refuses every request when nothing was drawn', () => {
    for (const position of [0, 1, 7]) {
      expect(shareOfDraw(0, 0.75, position)).toEqual({ allowed: false, tokensLeft: 0.75 });
    }
  });

  it.each([
    [null, 3],
    [2, null],
    [null, null],
  ])('answers nulls for a credential that drew nothing (drawn %p, tokens %p)', (drawn, tokens) => {
    expect(shareOfDraw(drawn, tokens, 0)).toEqual({ allowed: null, tokensLeft: null });
  });
});

describe('peekedAccess (the check before a write, which draws nothing)', () => {
  const row = (tokens: number | string | null, userDisabled = false) => ({
    customer_id: 'cus_1',
    user_id: 'usr_1',
    user_disabled: userDisabled,
    plan_expires_at: null,
    plan_expired: false,
    tokens,
  });

  it('lets the caller through while the bucket holds a whole token, leaving it there', () => {
    expect(peekedAccess(row('1'))).toMatchObject({ allowed: true, tokensLeft: 1 });
    expect(peekedAccess(row(59.5))).toMatchObject({ allowed: true, tokensLeft: 59.5 });
  });

  it('refuses it with less than one, as the write would be refused', () => {
    expect(peekedAccess(row('0.999'))).toMatchObject({ allowed: false, tokensLeft: 0.999 });
  });

  it('says nothing of the bucket of a disabled user, who is refused before it', () => {
    expect(peekedAccess(row(60, true))).toMatchObject({ userDisabled: true, allowed: null, tokensLeft: null });
  });
});
