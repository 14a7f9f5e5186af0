/**
 * The console sign-in throttle: failed sign-ins draw from two token buckets in Postgres, one per
 * client address group and one per account (the e-mail), so the limits hold across every core
 * instance. A try is judged only when both buckets hold a token; otherwise it is refused with 2002
 * and a Retry-After, before any password is hashed, and a refused try draws nothing, so hammering
 * a throttled bucket does not keep it empty.
 *
 * - The address bucket is the strict one: a small burst, then one try a minute (by default). A
 *   right password fills it again, so a person who mistyped a few times starts afresh.
 * - The account bucket only slows a guesser who spreads tries over many addresses: its refill is
 *   quick, so Retry-After is a few seconds at most. A right password gives its token back.
 * - Address groups an account was signed in to before (known addresses) do not draw from the
 *   account bucket at all: someone guessing from elsewhere can delay the account's owner at a new
 *   address by one refill, and cannot delay the owner at home at all.
 *
 * This module is the rule; ../db/repositories/sign-in-throttle.ts applies it inside one transaction.
 */
import { createHash } from 'node:crypto';

export interface BucketSettings {
  /** Failed tries allowed in a burst: the bucket's capacity. */
  burst: number;
  /** One token comes back this often. */
  refillMs: number;
}

export interface SignInThrottleSettings {
  address: BucketSettings;
  account: BucketSettings;
}

/** How long a successful sign-in makes its address group known for the account. */
export const KNOWN_ADDRESS_TTL_MS = 30 * 86_400_000;

/** The bucket's tokens after `elapsedMs` of refill from `tokens`, never beyond its capacity. */
export function refilled(tokens: number, elapsedMs: number, bucket: BucketSettings): number {
  return Math.min(bucket.burst, tokens + Math.max(0, elapsedMs) / bucket.refillMs);
}

/** Whole seconds until the bucket holds one token again; at least 1 (Retry-After is a whole number). */
export function secondsUntilToken(tokens: number, bucket: BucketSettings): number {
  return Math.max(1, Math.ceil(((1 - tokens) * bucket.refillMs) / 1000));
}

/** A bucket's state as read under its row lock: tokens already refilled to the database's now. */
export interface BucketState {
  tokens: number;
}

export type Admission =
  { admitted: true; drawsAccount: boolean } | { admitted: false; retryAfterSeconds: number; limitedBy: Array<'address' | 'account'> };

/**
 * Whether a try may go on to the password check, and from which buckets it draws: the address
 * bucket always, the account bucket unless the address group is known for the account. Pure, so
 * the one rule is tested without a database.
 */
export function admit(state: { address: BucketState; account: BucketState; known: boolean }, settings: SignInThrottleSettings): Admission {
  const limitedBy: Array<'address' | 'account'> = [];
  let wait = 0;
  if (state.address.tokens < 1) {
    limitedBy.push('address');
    wait = Math.max(wait, secondsUntilToken(state.address.tokens, settings.address));
  }
  if (!state.known && state.account.tokens < 1) {
    limitedBy.push('account');
    wait = Math.max(wait, secondsUntilToken(state.account.tokens, settings.account));
  }
  if (limitedBy.length > 0) return { admitted: false, retryAfterSeconds: wait, limitedBy };
  return { admitted: true, drawsAccount: !state.known };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * E-mails compare case-insensitively at sign-in (the users table's lookup does), so the account
 * bucket does too: `Alice@…` and `alice@…` are one account to a guesser.
 */
function accountOf(email: string): string {
  return email.trim().toLowerCase();
}

/** The keys of a try's rows: hashed, so the tables hold no e-mail or address in clear. */
export function throttleKeys(email: string, addressGroup: string): { address: string; account: string; known: string } {
  const account = accountOf(email);
  return {
    address: `addr:${sha256(addressGroup)}`,
    account: `acct:${sha256(account)}`,
    known: sha256(`${account}\n${addressGroup}`),
  };
}
