/**
 * Tokens the emulator issues. Each one carries its own claims and an HMAC, so a token stays valid
 * across emulator restarts (the service keeps tokens for days); revocation and refresh-token
 * rotation are remembered in memory only, which an emulator can afford.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Platform } from './official-error';

export type TokenKind = 'access' | 'refresh' | 'code';

export interface TokenClaims {
  platform: Platform;
  kind: TokenKind;
  openId: string;
  /** Unix seconds on the emulator's clock. */
  issuedAt: number;
  expiresAt: number;
  scope: string[];
  nonce: string;
  /** Order of issue in this emulator: what an account's revocation compares, finer than a second. */
  serial: number;
  /** Authorization codes only: the redirect URI they were issued for. */
  redirectUri?: string;
}

export type Verified = { ok: true; claims: TokenClaims } | { ok: false; reason: 'invalid' | 'expired' | 'revoked' };

const PREFIX: Record<TokenKind, string> = { access: 'act', refresh: 'rft', code: 'code' };

export class TokenMint {
  private readonly revoked = new Set<string>();
  /** Per account, the last serial issued before it removed the app. */
  private readonly revokedAccounts = new Map<string, number>();
  private issued = 0;

  constructor(
    private readonly secret: string,
    private readonly nowSeconds: () => number,
  ) {}

  issue(claims: Omit<TokenClaims, 'nonce' | 'issuedAt' | 'serial'>): string {
    const full: TokenClaims = { ...claims, issuedAt: this.nowSeconds(), serial: ++this.issued, nonce: randomBytes(8).toString('hex') };
    const body = Buffer.from(JSON.stringify(full)).toString('base64url');
    return `${PREFIX[claims.kind]}.${body}.${this.mac(body)}`;
  }

  verify(token: string, kind: TokenKind, platform: Platform): Verified {
    const [prefix, body, mac] = token.split('.');
    if (prefix !== PREFIX[kind] || !body || !mac) return { ok: false, reason: 'invalid' };
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'invalid' };
    let claims: TokenClaims;
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as TokenClaims;
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    if (claims.kind !== kind || claims.platform !== platform) return { ok: false, reason: 'invalid' };
    if (this.revoked.has(claims.nonce)) return { ok: false, reason: 'revoked' };
    // By order of issue, not by clock: a code issued in the same second as the removal, after it, works.
    const lastRevoked = this.revokedAccounts.get(claims.openId);
    if (lastRevoked !== undefined && claims.serial <= lastRevoked) return { ok: false, reason: 'revoked' };
    if (claims.expiresAt <= this.nowSeconds()) return { ok: false, reason: 'expired' };
    return { ok: true, claims };
  }

  /** Single-use tokens (codes, rotated refresh tokens) and revoked access tokens. */
  revoke(claims: TokenClaims): void {
    this.revoked.add(claims.nonce);
  }

  /** Every token of the account issued until now stops working: the account removed the app. */
  revokeAccount(openId: string): void {
    this.revokedAccounts.set(openId, this.issued);
  }

  private mac(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }
}
