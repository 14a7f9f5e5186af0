/**
 * Console passwords, hashed with scrypt (memory-hard, in node:crypto). The stored string names its
 * parameters, `scrypt$<log2 N>$<r>$<p>$<salt b64url>$<key b64url>`, so they can be raised later:
 * old hashes keep verifying with the parameters they were made with.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptParams {
  /** log2 of the CPU/memory cost N. */
  logN: number;
  r: number;
  p: number;
}

/** N = 2^15, r = 8: 32 MiB and about 50–100 ms per hash, OWASP's scrypt baseline. */
export const DEFAULT_SCRYPT: ScryptParams = { logN: 15, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;
// A stored hash is trusted input, but a corrupted one must not make a sign-in allocate gigabytes.
const MAX_LOG_N = 20;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;

function derive(password: string, salt: Buffer, params: ScryptParams, keyLength: number): Promise<Buffer> {
  const N = 2 ** params.logN;
  const options: ScryptOptions = {
    N,
    r: params.r,
    p: params.p,
    // Node's default cap (32 MiB) is exactly 128·N·r for N = 2^15, r = 8, which it refuses.
    maxmem: 256 * N * params.r + 1024 * 1024,
  };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params, KEY_BYTES);
  return ['scrypt', params.logN, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

interface Parsed {
  params: ScryptParams;
  salt: Buffer;
  key: Buffer;
}

function parse(encoded: string): Parsed | undefined {
  const m = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(encoded);
  if (!m) return undefined;
  const params = { logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (params.logN < 1 || params.logN > MAX_LOG_N || params.r < 1 || params.p < 1) return undefined;
  const key = Buffer.from(m[5]!, 'base64url');
  if (key.length < 16) return undefined;
  return { params, salt: Buffer.from(m[4]!, 'base64url'), key };
}

/** True when `password` matches; compared in constant time. An unreadable hash matches nothing. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parse(encoded);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.params, parsed.key.length);
  return timingSafeEqual(key, parsed.key);
}

let dummy: Promise<string> | undefined;

/**
 * Spends the time of one verification without a user: a sign-in for an unknown e-mail, or for a
 * user without a password, takes as long as a wrong password, so timing does not reveal accounts.
 */
export async function verifyNothing(password: string): Promise<false> {
  dummy ??= hashPassword('dummy password, never matched');
  await verifyPassword(password, await dummy);
  return false;
}
