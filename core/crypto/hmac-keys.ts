/**
 * HMAC keys built once per secret. `createHmac` with a string key builds a key object on every
 * call, and on the hot paths (every official push checked, every webhook signed) that cost more
 * than the HMAC itself. A handful of secrets are live at a time (the app secrets), so a small map
 * holds them; past its size the oldest goes.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';

const KEPT = 64;
const keys = new Map<string, KeyObject>();

/** The key object of a secret used as UTF-8 text, as createHmac(algorithm, secret) uses it. */
export function hmacKeyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= KEPT) keys.delete(keys.keys().next().value!);
    key = createSecretKey(secret, 'utf8');
    keys.set(secret, key);
  }
  return key;
}
