import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';
import {
  ConsoleSessionSchema,
  type ConsoleService,
  type CreateApiKeyRequest,
  type RevokeApiKeyRequest,
  type SignInRequest,
} from '../../gen/vps/console/v1/console_pb';
import { customerOf } from '../context';
import { PASSWORD_MAX_LENGTH, verifyNothing, verifyPassword } from '../crypto/passwords';
import { csrfTokenOf, generateSessionToken } from '../crypto/session-tokens';
import type { Db } from '../db/client';
import * as sessions from '../db/repositories/console-sessions';
import { admitSignIn, recordSignInSuccess, sweepSignInRows } from '../db/repositories/sign-in-throttle';
import * as tenancy from '../db/repositories/tenancy';
import { ApiError, invalidField } from '../errors';
import { consoleSessionKey, type ConsoleSessionContext } from '../interceptors/access.interceptor';
import { toApiKey } from '../mappers/accounts';
import type { Logger } from '../logger';
import { addressGroup, CLIENT_ADDRESS_HEADER } from '../net/client-address';
import { PasswordSlots } from '../sign-in/password-slots';
import { throttleKeys, type Admission, type SignInThrottleSettings } from '../sign-in/throttle';
import { issueApiKey } from './admin.service';

// One message for an unknown e-mail and a wrong password, so the answer does not reveal accounts.
const WRONG_CREDENTIALS = 'e-mail or password is wrong';
const MAX_KEY_NAME = 100;

function sessionOf(ctx: HandlerContext): ConsoleSessionContext {
  const session = ctx.values.get(consoleSessionKey);
  // The access class of every console method but SignIn requires a session: its absence is a wiring bug.
  if (!session) throw new Error(`no console session for ${ctx.method.name}`);
  return session;
}

/** How sign-ins are throttled (CONSOLE_SIGN_IN_* settings). */
export interface SignInSettings {
  throttle: SignInThrottleSettings;
  /** Password checks one process runs at once; more are refused at once. */
  maxHashes: number;
}

/** Used where no configuration is given (benchmarks); `vps serve` and the test stack pass their own. */
export const DEFAULT_SIGN_IN: SignInSettings = {
  throttle: { address: { burst: 10, refillMs: 60_000 }, account: { burst: 10, refillMs: 15_000 } },
  maxHashes: 2,
};

function throttled(admission: Extract<Admission, { admitted: false }>): ApiError {
  const what = admission.limitedBy.includes('address') ? 'from this address' : 'for this account from new addresses';
  return new ApiError(2002, `too many failed sign-ins ${what}; retry after ${admission.retryAfterSeconds} s`, {
    retryAfterSeconds: admission.retryAfterSeconds,
  });
}

/** The console's own methods: signing in and out, and the customer's API keys. */
export class ConsoleHandlers implements ServiceImpl<typeof ConsoleService> {
  private readonly slots: PasswordSlots;

  constructor(private readonly deps: { db: Db; lifetime: sessions.SessionLifetime; signIn: SignInSettings; logger: Logger }) {
    this.slots = new PasswordSlots(deps.signIn.maxHashes);
  }

  async signIn(req: SignInRequest, ctx: HandlerContext) {
    const { db, signIn } = this.deps;
    const email = req.email.trim();
    if (!email) throw invalidField('email', 'is required');
    if (!req.password) throw invalidField('password', 'is required');
    // Hashing is deliberately slow; a megabyte of "password" only costs the caller a refusal.
    if (req.password.length > PASSWORD_MAX_LENGTH) throw new ApiError(1001, WRONG_CREDENTIALS);
    // No password holds NUL (setting one refuses it), and scrypt's HMAC pads a short key with zero
    // bytes, so "secret\0" would otherwise derive the same key as "secret" and sign in.
    if (req.password.includes('\u0000')) throw new ApiError(1001, WRONG_CREDENTIALS);
    // Taken before the throttle's statement, so a burst is turned away without a database write.
    const release = this.slots.tryTake();
    if (!release) {
      throw new ApiError(2002, 'too many sign-ins are being checked at this moment; retry after 1 s', { retryAfterSeconds: 1 });
    }
    const keys = throttleKeys(email, addressGroup(ctx.requestHeader.get(CLIENT_ADDRESS_HEADER)));
    let drewAccount: boolean;
    let user: tenancy.UserRow | undefined;
    let matches: boolean;
    try {
      const admission = await admitSignIn(db, keys, signIn.throttle);
      if (!admission.admitted) throw throttled(admission);
      drewAccount = admission.drawsAccount;
      user = await tenancy.findUserByEmail(db, email);
      matches = user?.passwordHash ? await verifyPassword(req.password, user.passwordHash) : await verifyNothing(req.password);
    } finally {
      release();
    }
    await sweepSignInRows(db, signIn.throttle).catch((err: unknown) => {
      // Left for the next sign-in's sweep: the rows only take space meanwhile.
      this.deps.logger.warn({ err }, 'could not sweep old sign-in throttle rows');
    });
    if (!user || !matches) throw new ApiError(1001, WRONG_CREDENTIALS);
    await recordSignInSuccess(db, keys, signIn.throttle, drewAccount);
    // Only after the password: whether an account is disabled is not told to someone without it.
    if (user.disabledAt) throw new ApiError(1002, 'this user is disabled; contact your administrator');
    const { token, hash } = generateSessionToken();
    await this.deps.db.transaction(async (tx) => {
      await sessions.deleteUserSessions(tx, user.id, { all: false });
      await sessions.insertSession(tx, { userId: user.id, tokenHash: hash, lifetime: this.deps.lifetime });
    });
    return { session: await this.describe(user.id, csrfTokenOf(token)), token };
  }

  async getSession(_req: unknown, ctx: HandlerContext) {
    return { session: await this.describe(customerOf(ctx).userId, sessionOf(ctx).csrfToken) };
  }

  async signOut(_req: unknown, ctx: HandlerContext) {
    await sessions.deleteSession(this.deps.db, sessionOf(ctx).sessionId);
    return {};
  }

  async listApiKeys(_req: unknown, ctx: HandlerContext) {
    const rows = await tenancy.listApiKeys(this.deps.db, customerOf(ctx).customerId);
    // Ids sort by creation time; the console shows the newest first.
    return { apiKeys: rows.reverse().map(toApiKey) };
  }

  async createApiKey(req: CreateApiKeyRequest, ctx: HandlerContext) {
    const principal = customerOf(ctx);
    const name = req.name.trim();
    if (!name) throw invalidField('name', 'is required');
    if (name.length > MAX_KEY_NAME) throw invalidField('name', `must be at most ${MAX_KEY_NAME} characters`);
    return issueApiKey(this.deps.db, { id: principal.userId, customerId: principal.customerId }, name);
  }

  async revokeApiKey(req: RevokeApiKeyRequest, ctx: HandlerContext) {
    const owned = (await tenancy.listApiKeys(this.deps.db, customerOf(ctx).customerId)).some((k) => k.id === req.id);
    // Another customer's key is answered like a missing one.
    if (!owned) throw new ApiError(1005, `API key ${req.id || '(empty id)'} does not exist`);
    const row = await tenancy.revokeApiKey(this.deps.db, req.id);
    if (!row) throw new ApiError(1005, `API key ${req.id} does not exist`);
    return { apiKey: toApiKey(row) };
  }

  private async describe(userId: string, csrfToken: string) {
    const user = await tenancy.findUser(this.deps.db, userId);
    const customer = user && (await tenancy.findCustomer(this.deps.db, user.customerId));
    // The session's user was just authenticated; a row vanishing in between is not the caller's doing.
    if (!user || !customer) throw new Error(`user ${userId} or its customer disappeared`);
    return create(ConsoleSessionSchema, {
      user: { id: user.id, email: user.email, name: user.name },
      customer: { id: customer.id, name: customer.name },
      csrfToken,
    });
  }
}
