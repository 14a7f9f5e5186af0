/**
 * Short-lived capabilities the service signs and later checks itself: media URLs (fetched by the
 * platform, which has no API key of ours), upload tickets (the gateway's proof, between
 * BeginUpload and CompleteUpload, that the upload was authorized) and the OAuth state of a seat
 * connect (core/seats/connect-state.ts). HMAC-SHA256 under a key derived from VPS_ENCRYPTION_KEY,
 * so every instance that holds that key agrees, and nothing is stored; the keys accepted during a
 * rotation verify too.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TokenPurpose = 'media' | 'upload' | 'seat-connect';

export class TokenSigner {
  /** The signing key first, then those derived from the accepted keys, which only verify. */
  private readonly keys: Buffer[];

  /**
   * `accepted`: the encryption keys still accepted during a rotation (VPS_ENCRYPTION_KEYS_ACCEPTED).
   * What they signed stays valid until it expires (a video URL lives 7 days), and a process still
   * signing with the next key is understood by one that only accepts it.
   */
  constructor(encryptionKey: Buffer, accepted: readonly Buffer[] = []) {
    // A key of its own: a signature can never be confused with anything sealed by the same secret.
    this.keys = [encryptionKey, ...accepted].map((key) => createHmac('sha256', key).update('vps signed tokens v1').digest());
  }

  sign(purpose: TokenPurpose, subject: string, expiresAtSeconds: number): string {
    return signWith(this.keys[0]!, purpose, subject, expiresAtSeconds);
  }

  /** True when the signature is right under any key held and has not expired. */
  verify(purpose: TokenPurpose, subject: string, expiresAtSeconds: number, signature: string, nowMs = Date.now()): boolean {
    if (!Number.isSafeInteger(expiresAtSeconds) || expiresAtSeconds * 1000 < nowMs) return false;
    const given = Buffer.from(signature);
    return this.keys.some((key) => {
      const expected = Buffer.from(signWith(key, purpose, subject, expiresAtSeconds));
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  }

  /** A self-contained ticket: `<subject>.<expiry>.<signature>`. */
  ticket(purpose: TokenPurpose, subject: string, expiresAtSeconds: number): string {
    return `${subject}.${expiresAtSeconds}.${this.sign(purpose, subject, expiresAtSeconds)}`;
  }

  /** The subject of a valid ticket, or undefined. */
  openTicket(purpose: TokenPurpose, ticket: string, nowMs = Date.now()): string | undefined {
    const match = /^([A-Za-z0-9_]+)\.(\d{1,12})\.([A-Za-z0-9_-]+)$/.exec(ticket);
    if (!match) return undefined;
    const [, subject, expires, signature] = match;
    return this.verify(purpose, subject!, Number(expires), signature!, nowMs) ? subject : undefined;
  }
}

function signWith(key: Buffer, purpose: TokenPurpose, subject: string, expiresAtSeconds: number): string {
  return createHmac('sha256', key).update(`${purpose}\n${subject}\n${expiresAtSeconds}`).digest('base64url');
}

/** The path a video's media URL serves, under the gateway's public origin. */
export const MEDIA_PATH_PREFIX = '/media/videos/';

export function mediaUrl(signer: TokenSigner, publicUrl: string, videoId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return `${publicUrl}${MEDIA_PATH_PREFIX}${videoId}?expires=${expires}&signature=${signer.sign('media', videoId, expires)}`;
}
