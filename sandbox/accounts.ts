/** Sandbox accounts of both platforms: the people a tester signs in as on the authorize page. */
import { randomBytes } from 'node:crypto';
import type { Platform } from './official-error';

export interface Account {
  openId: string;
  platform: Platform;
  username: string;
  displayName: string;
  /** Private accounts get the private privacy options, as video/settings reports them. */
  isPrivate: boolean;
  createdAt: number;
}

/** The accounts `npm start` binds the demo seats to; the seed and the emulator agree on them. */
export const DEMO_ACCOUNTS: ReadonlyArray<Pick<Account, 'openId' | 'platform' | 'username' | 'displayName'>> = [
  { openId: 'sandbox-business-0001', platform: 'business', username: 'demo_video', displayName: 'Demo Video Account' },
  { openId: 'sandbox-business-0002', platform: 'business', username: 'demo_video_2', displayName: 'Second Demo Account' },
  { openId: 'sandbox-creator-0001', platform: 'shop', username: 'demo_shop', displayName: 'Demo Shop Creator' },
];

export class AccountRegistry {
  private readonly accounts = new Map<string, Account>();

  constructor(private readonly now: () => number) {
    for (const demo of DEMO_ACCOUNTS) this.create(demo);
  }

  create(input: { platform: Platform; openId?: string; username?: string; displayName?: string; isPrivate?: boolean }): Account {
    const openId = input.openId ?? `${input.platform === 'shop' ? 'sbx-creator' : 'sbx-business'}-${randomBytes(8).toString('hex')}`;
    const existing = this.accounts.get(openId);
    if (existing) return existing;
    const username = input.username ?? `user_${openId.slice(-8)}`;
    const account: Account = {
      openId,
      platform: input.platform,
      username,
      displayName: input.displayName ?? username,
      isPrivate: input.isPrivate ?? false,
      createdAt: this.now(),
    };
    this.accounts.set(openId, account);
    return account;
  }

  get(openId: string): Account | undefined {
    return this.accounts.get(openId);
  }

  /**
   * The account a valid token names. A token outlives an emulator restart, and so must its
   * account: one the registry no longer knows is recreated from the token.
   */
  forToken(openId: string, platform: Platform): Account {
    return this.accounts.get(openId) ?? this.create({ openId, platform });
  }

  list(platform?: Platform): Account[] {
    return [...this.accounts.values()].filter((a) => !platform || a.platform === platform);
  }
}
