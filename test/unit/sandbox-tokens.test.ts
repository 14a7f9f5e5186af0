import { TokenMint } from '../../sandbox/tokens';

describe('the emulator token mint', () => {
  it('revokes what an account was issued before it removed the app, and honours what it is issued after, even within the same second', () => {
    const mint = new TokenMint('secret', () => 1_000);
    const claims = { platform: 'business' as const, kind: 'code' as const, openId: 'acct', expiresAt: 2_000, scope: [] };
    const before = mint.issue(claims);
    mint.revokeAccount('acct');
    const after = mint.issue(claims);
    expect(mint.verify(before, 'code', 'business')).toEqual({ ok: false, reason: 'revoked' });
    expect(mint.verify(after, 'code', 'business')).toMatchObject({ ok: true });
  });
});
