/**
 * The OAuth `state` of a seat connect: who asked (customer and user), for which seat, and a nonce,
 * signed by core with an expiry. Nothing is stored: the callback proves itself, and a state
 * issued to one customer cannot bind another customer's seat, nor outlive its short lifetime.
 * The platform echoes the state back verbatim, so it stays URL-safe: base64url JSON, the expiry,
 * the signature, joined by dots.
 */
import { randomBytes } from 'node:crypto';
import type { TokenSigner } from '../media/signed-tokens';

export interface ConnectState {
  customerId: string;
  userId: string;
  seatId: string;
  nonce: string;
}

/** Ten minutes: the platform's own authorization code lives as long. */
export const DEFAULT_CONNECT_STATE_TTL_MS = 600_000;

export function issueConnectState(signer: TokenSigner, who: Omit<ConnectState, 'nonce'>, ttlMs: number, nowMs = Date.now()): string {
  const state: ConnectState = { ...who, nonce: randomBytes(12).toString('base64url') };
  const subject = Buffer.from(JSON.stringify(state)).toString('base64url');
  const expires = Math.floor((nowMs + ttlMs) / 1000);
  return `${subject}.${expires}.${signer.sign('seat-connect', subject, expires)}`;
}

/** The state's claims when its signature is right and it has not expired; undefined otherwise. */
export function openConnectState(signer: TokenSigner, state: string, nowMs = Date.now()): ConnectState | undefined {
  const match = /^([A-Za-z0-9_-]{1,2000})\.(\d{1,12})\.([A-Za-z0-9_-]{1,100})$/.exec(state);
  if (!match) return undefined;
  const [, subject, expires, signature] = match;
  if (!signer.verify('seat-connect', subject!, Number(expires), signature!, nowMs)) return undefined;
  const claims = JSON.parse(Buffer.from(subject!, 'base64url').toString('utf8')) as ConnectState;
  return claims;
}
