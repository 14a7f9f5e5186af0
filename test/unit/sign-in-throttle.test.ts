import { addressGroup, UNKNOWN_ADDRESS } from '../../core/net/client-address';
import { PasswordSlots } from '../../core/sign-in/password-slots';
import { admit, refilled, secondsUntilToken, throttleKeys, type SignInThrottleSettings } from '../../core/sign-in/throttle';

const SETTINGS: SignInThrottleSettings = { address: { burst: 10, refillMs: 60_000 }, account: { burst: 10, refillMs: 15_000 } };

describe('addressGroup', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    [' 203.0.113.7 ', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ])('counts %s as %s', (address, group) => {
    expect(addressGroup(address)).toBe(group);
  });

  it.each([null, undefined, '', 'localhost', '999.1.1.1', '2001:db8::1::2', '203.0.113.7, 10.0.0.1'])(
    'counts %p as the unknown address',
    (raw) => {
      expect(addressGroup(raw)).toBe(UNKNOWN_ADDRESS);
    },
  );
});

describe('the sign-in buckets', () => {
  it('refill continuously up to their burst', () => {
    expect(refilled(0, 30_000, SETTINGS.address)).toBe(0.5);
    expect(refilled(9.5, 60_000, SETTINGS.address)).toBe(10);
    // A clock read before the last update (another instance's) adds nothing, and takes nothing.
    expect(refilled(3, -500, SETTINGS.address)).toBe(3);
  });

  it.each([
    [0, 60],
    [0.5, 30],
    [0.99, 1],
    [0.999, 1],
  ])('with %f tokens, say Retry-After %i s at one token a minute', (tokens, seconds) => {
    expect(secondsUntilToken(tokens, SETTINGS.address)).toBe(seconds);
  });

  it('let a try through while both buckets hold a token, drawing from both', () => {
    expect(admit({ address: { tokens: 1 }, account: { tokens: 1 }, known: false }, SETTINGS)).toEqual({
      admitted: true,
      drawsAccount: true,
    });
  });

  it('refuse an address without tokens, whatever the account, with the address refill as Retry-After', () => {
    expect(admit({ address: { tokens: 0.25 }, account: { tokens: 10 }, known: true }, SETTINGS)).toEqual({
      admitted: false,
      retryAfterSeconds: 45,
      limitedBy: ['address'],
    });
  });

  it('refuse an unknown address when the account is out of tokens, for the account refill only', () => {
    expect(admit({ address: { tokens: 10 }, account: { tokens: 0 }, known: false }, SETTINGS)).toEqual({
      admitted: false,
      retryAfterSeconds: 15,
      limitedBy: ['account'],
    });
  });

  it('let an address the account was signed in from through an empty account bucket, without drawing from it', () => {
    expect(admit({ address: { tokens: 1 }, account: { tokens: 0 }, known: true }, SETTINGS)).toEqual({
      admitted: true,
      drawsAccount: false,
    });
  });

  it('say the longer wait when both refuse', () => {
    expect(admit({ address: { tokens: 0 }, account: { tokens: 0 }, known: false }, SETTINGS)).toMatchObject({
      retryAfterSeconds: 60,
      limitedBy: ['address', 'account'],
    });
  });

  it('key accounts case-insensitively and hold no e-mail or address in clear', () => {
    const a = throttleKeys(' Alice@Example.com ', '203.0.113.7');
    expect(throttleKeys('alice@example.com', '203.0.113.7')).toEqual(a);
    expect(JSON.stringify(a)).not.toMatch(/alice|203\.0/i);
    expect(a.address).toMatch(/^addr:[0-9a-f]{64}$/);
    expect(a.account).toMatch(/^acct:[0-9a-f]{64}$/);
    // Known addresses are per account: the same address is unknown for another account.
    expect(throttleKeys('bob@example.com', '203.0.113.7').known).not.toBe(a.known);
  });
});

describe('PasswordSlots', () => {
  it('gives out at most its size at once, and a released slot again', () => {
    const slots = new PasswordSlots(2);
    const first = slots.tryTake();
    const second = slots.tryTake();
    expect(first && second).toBeDefined();
    expect(slots.tryTake()).toBeUndefined();
    first!();
    first!();
    expect(slots.busy).toBe(1);
    expect(slots.tryTake()).toBeDefined();
    expect(slots.tryTake()).toBeUndefined();
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => new PasswordSlots(0)).toThrow(/positive integer/);
  });
});
