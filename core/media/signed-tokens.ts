/**
 * Short-lived capabilities the service signs and later checks itself: media URLs (fetched by the
 * platform, which has no API key of ours), upload tickets (the gateway's proof, between
 * BeginUpload and CompleteUpload, that the upload was authorized) and the OAuth state of a seat
 * connect (core/seats/connect-state.ts). HMAC-SHA256 under a key derived from VPS_ENCRYPTION_KEY,
 * so every instance that holds that key agrees, and nothing is stored.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TokenPurpose = 'media' | 'upload' | 'seat-connect';

export class TokenSigner {
  private readonly key: Buffer;

  constructor(encryptionKey: Buffer) {
    // A key of its own: a signature can never be confused with anything sealed by the same secret.
    this.key = createHmac('sha256', encryptionKey).update('vps signed tokens v1').digest();
  }

  sign(purpose: TokenPurpose, subject: string, expiresAtSeconds: number): string {
    return createHmac('sha256', this.key).update(`${purpose}\n${subject}\n${expiresAtSeconds}`).digest('base64url');
  }

  /** True when the signature is right and has not expired. */
  verify(purpose: TokenPurpose, subject: string, expiresAtSeconds: number, signature: string, nowMs = Date.now()): boolean {
    if (!Number.isSafeInteger(expiresAtSeconds) || expiresAtSeconds * 1000 < nowMs) return false;
    const expected = Buffer.from(this.sign(purpose, subject, expiresAtSeconds));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
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

/** The path a video's media URL serves, under the gateway's public origin. */
export const MEDIA_PATH_PREFIX = '/media/videos/';

export function mediaUrl(signer: TokenSigner, publicUrl: string, videoId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return `${publicUrl}${MEDIA_PATH_PREFIX}${videoId}?expires=${expires}&signature=${signer.sign('media', videoId, expires)}`;
}
