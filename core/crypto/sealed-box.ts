import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets at rest (upstream tokens, webhook signing keys, kept responses). The
 * associated data binds a sealed value to its row (e.g. the seat id), so a ciphertext copied to
 * another row does not open.
 *
 * Formats, in base64url parts:
 * - `v2.<key id>.<iv>.<tag>.<ciphertext>`: what `seal` writes. The key id names the key that sealed
 *   the value, so a box holding several keys (the current one and those still accepted during a
 *   rotation) opens it with the right one, and a sweep finds the values not yet under the current key.
 * - `v1.<iv>.<tag>.<ciphertext>`: written before key ids. Opened with each key held, current first.
 */
export class SealedBox {
  /** The id of the key that seals. */
  readonly keyId: string;
  /** Every key held, by id, the current one first. */
  private readonly keys: ReadonlyMap<string, Buffer>;

  /** `accepted`: keys that open values (sealed before a rotation, or by a process already past it) but never seal. */
  constructor(
    private readonly key: Buffer,
    accepted: readonly Buffer[] = [],
  ) {
    for (const k of [key, ...accepted]) if (k.length !== 32) throw new Error('SealedBox needs a 32-byte key');
    this.keyId = keyIdOf(key);
    const keys = new Map<string, Buffer>([[this.keyId, key]]);
    for (const k of accepted) if (!keys.has(keyIdOf(k))) keys.set(keyIdOf(k), k);
    this.keys = keys;
  }

  /** The ids of the keys that open values without sealing any, in the order given. */
  get acceptedKeyIds(): string[] {
    return [...this.keys.keys()].slice(1);
  }

  /** The start of every value this box seals: a value without it was sealed otherwise, or is plain. */
  get currentPrefix(): string {
    return `${VERSION}.${this.keyId}.`;
  }

  seal(plaintext: string, associatedData: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, this.keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  open(sealed: string, associatedData: string): string {
    return this.unseal(sealed, associatedData).plaintext;
  }

  /**
   * Opens a value and says whether it is due to be sealed again: sealed by a key other than the
   * current one, or in the format from before key ids.
   */
  unseal(sealed: string, associatedData: string): { plaintext: string; stale: boolean } {
    const parsed = parse(sealed);
    if (!parsed) throw new SealedValueError('unrecognised sealed value');
    if (parsed.keyId !== undefined) {
      const key = this.keys.get(parsed.keyId);
      if (!key) {
        throw new SealedValueError(
          `sealed under key ${parsed.keyId}, which this process does not hold (it holds ${[...this.keys.keys()].join(', ')}): ` +
            'add it to VPS_ENCRYPTION_KEYS_ACCEPTED',
        );
      }
      const plaintext = tryDecrypt(key, parsed, associatedData);
      if (plaintext === undefined) throw new SealedValueError(`sealed value does not open: altered, or bound to another row`);
      return { plaintext, stale: parsed.keyId !== this.keyId };
    }
    // Before key ids: whichever key held then, which may be the current one or one now only accepted.
    for (const key of this.keys.values()) {
      const plaintext = tryDecrypt(key, parsed, associatedData);
      if (plaintext !== undefined) return { plaintext, stale: true };
    }
    throw new SealedValueError('sealed value does not open with any key held: sealed under another key, altered, or bound to another row');
  }

  /** Whether the value is sealed by this box's current key, in the current format. */
  isCurrent(value: string): boolean {
    return value.startsWith(this.currentPrefix);
  }
}

/** A value that cannot be opened: not a sealed value, sealed under a key not held, or tampered with. */
export class SealedValueError extends Error {
  override name = 'SealedValueError';
}

const VERSION = 'v2';

/**
 * A key's id: 12 hex digits of an HMAC under the key. It names the key without revealing anything
 * of it, is the same in every process holding the key, and needs no configuration of its own.
 */
export function keyIdOf(key: Buffer): string {
  return createHmac('sha256', key).update('vps sealed-box key id').digest('hex').slice(0, 12);
}

/** Whether a stored value is in a sealed format at all; anything else was stored plain. */
export function looksSealed(value: string): boolean {
  return parse(value) !== undefined;
}

interface Parsed {
  /** Undefined for the format from before key ids. */
  keyId?: string;
  iv: string;
  tag: string;
  ct: string;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function parse(sealed: string): Parsed | undefined {
  const parts = sealed.split('.');
  let parsed: Parsed | undefined;
  if (parts[0] === 'v1' && parts.length === 4) parsed = { iv: parts[1]!, tag: parts[2]!, ct: parts[3]! };
  if (parts[0] === VERSION && parts.length === 5 && /^[0-9a-f]{12}$/.test(parts[1]!)) {
    parsed = { keyId: parts[1], iv: parts[2]!, tag: parts[3]!, ct: parts[4]! };
  }
  if (!parsed || !parsed.iv || !parsed.tag || ![parsed.iv, parsed.tag, parsed.ct].every((p) => BASE64URL.test(p))) return undefined;
  return parsed;
}

function decrypt(key: Buffer, parsed: Parsed, associatedData: string): string {
  // A fixed tag length: otherwise a truncated tag would be checked only as far as it goes.
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parsed.iv, 'base64url'), { authTagLength: 16 });
  decipher.setAAD(Buffer.from(associatedData));
  decipher.setAuthTag(Buffer.from(parsed.tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(parsed.ct, 'base64url')), decipher.final()]).toString('utf8');
}

/** Undefined when the value does not authenticate under the key: another key, other data, or altered. */
function tryDecrypt(key: Buffer, parsed: Parsed, associatedData: string): string | undefined {
  try {
    return decrypt(key, parsed, associatedData);
  } catch (err) {
    // GCM refusing the tag (or a tag of the wrong length) is the answer "not this key, or not this
    // value"; anything else is a fault of its own.
    const message = (err as { message?: unknown }).message;
    if (typeof message === 'string' && /unable to authenticate data|authentication tag length/i.test(message)) return undefined;
    throw err;
  }
}
