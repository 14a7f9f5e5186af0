import { hashPassword, verifyNothing, verifyPassword, type ScryptParams } from '../../core/crypto/passwords';
import { csrfTokenMatches, csrfTokenOf, generateSessionToken, parseSessionHeader } from '../../core/crypto/session-tokens';

// The default parameters cost ~32 MiB and tens of milliseconds per hash; most cases here use cheap
// ones, since what they check does not depend on the cost.
const CHEAP: ScryptParams = { logN: 10, r: 8, p: 1 };

describe('password hashes', () => {
  it('are self-describing scrypt strings with the default N = 2^15, r = 8, p = 1, a 16-byte salt and a 32-byte key', async () => {
    const encoded = await hashPassword('correct horse battery staple');
    const [scheme, logN, r, p, salt, key] = encoded.split('$');
    expect([scheme, logN, r, p]).toEqual(['scrypt', '15', '8', '1']);
    expect(Buffer.from(salt!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(key!, 'base64url')).toHaveLength(32);
    expect(await verifyPassword('correct horse battery staple', encoded)).toBe(true);
  });

  it('verify only the same password, and differ for the same password (random salt)', async () => {
    const a = await hashPassword('s3cret-passphrase', CHEAP);
    const b = await hashPassword('s3cret-passphrase', CHEAP);
    expect(a).not.toBe(b);
    expect(await verifyPassword('s3cret-passphrase', a)).toBe(true);
    expect(await verifyPassword('s3cret-passphrase', b)).toBe(true);
    expect(await verifyPassword('s3cret-passphrasE', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('keep verifying with the parameters they were made with, so the defaults can change', async () => {
    const old = await hashPassword('an older account', { logN: 11, r: 4, p: 2 });
    expect(old.startsWith('scrypt$11$4$2$')).toBe(true);
    expect(await verifyPassword('an older account', old)).toBe(true);
  });

  it('treat the same text in another Unicode normalization as the same password', async () => {
    const encoded = await hashPassword('caf\u00e9 au lait', CHEAP);
    expect(await verifyPassword('cafe\u0301 au lait', encoded)).toBe(true);
  });

  it.each([
    ['an empty string', ''],
    ['another scheme', 'bcrypt$2b$10$abcdefghijklmnopqrstuv'],
    ['a missing key', 'scrypt$10$8$1$c2FsdHNhbHRzYWx0c2FsdA$'],
    ['a cost beyond the cap', 'scrypt$31$8$1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5'],
  ])('match nothing when the stored hash is %s', async (_name, encoded) => {
    expect(await verifyPassword('anything', encoded)).toBe(false);
  });

  it('has a dummy verification for unknown accounts that never matches and costs a real verification', async () => {
    expect(await verifyNothing('dummy password, never matched')).toBe(false);
    const real = await hashPassword('timing reference');
    const started = process.hrtime.bigint();
    await verifyPassword('timing reference', real);
    const realMs = Number(process.hrtime.bigint() - started) / 1e6;
    const dummyStarted = process.hrtime.bigint();
    await verifyNothing('timing reference');
    const dummyMs = Number(process.hrtime.bigint() - dummyStarted) / 1e6;
    // Same parameters, so the same work; a loose bound keeps a busy machine from failing it.
    expect(dummyMs).toBeGreaterThan(realMs / 4);
  });
});

describe('console session tokens', () => {
  it('are 256-bit random tokens stored as their SHA-256', () => {
    const a = generateSessionToken();
    const b = generateSessionToken();
    expect(a.token).toMatch(/^vpss_[A-Za-z0-9_-]{43}$/);
    expect(a.token).not.toBe(b.token);
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('are read from exactly "Session <token>"', () => {
    const { token } = generateSessionToken();
    expect(parseSessionHeader(`Session ${token}`)).toBe(token);
    expect(parseSessionHeader(`session ${token}`)).toBe(token);
    expect(parseSessionHeader(`Bearer ${token}`)).toBeUndefined();
    expect(parseSessionHeader(`Session Session ${token}`)).toBeUndefined();
    expect(parseSessionHeader('Session vpss_short')).toBeUndefined();
    expect(parseSessionHeader(undefined)).toBeUndefined();
  });

  it('have a CSRF token derived from them, checked in constant time, that another session does not accept', () => {
    const a = generateSessionToken().token;
    const b = generateSessionToken().token;
    const csrf = csrfTokenOf(a);
    expect(csrf).toBe(csrfTokenOf(a));
    expect(csrf).not.toContain(a);
    expect(csrfTokenMatches(a, csrf)).toBe(true);
    expect(csrfTokenMatches(b, csrf)).toBe(false);
    expect(csrfTokenMatches(a, null)).toBe(false);
    expect(csrfTokenMatches(a, '')).toBe(false);
    expect(csrfTokenMatches(a, csrf.slice(1))).toBe(false);
  });
});
