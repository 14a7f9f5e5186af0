import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import type {
  AdminService,
  BindSeatRequest,
  CreateApiKeyRequest,
  CreateCustomerRequest,
  CreateSeatRequest,
  CreateUserRequest,
  GetCustomerRequest,
  ListApiKeysRequest,
  ListSeatsRequest,
  ListUsersRequest,
  RevokeApiKeyRequest,
  SetUserDisabledRequest,
  SetUserPasswordRequest,
  UnbindSeatRequest,
  UpdateCustomerRequest,
} from '../../gen/vps/admin/v1/admin_pb';
import { generateApiKey } from '../crypto/api-keys';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../crypto/passwords';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import * as sessions from '../db/repositories/console-sessions';
import * as seatsRepo from '../db/repositories/seats';
import * as tenancy from '../db/repositories/tenancy';
import { ApiError, invalidField } from '../errors';
import { toApiKey, toCustomer, toSeat, toUser, trackFromProto } from '../mappers/accounts';
import type { Logger } from '../logger';
import type { HealthProbe } from '../temporal/health';
import type { TokenRefreshStarter } from '../temporal/token-refresh';
import { bindAccount } from '../seats/binding';

const MAX_NAME = 200;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function required(field: string, value: string): string {
  const v = value.trim();
  if (!v) throw invalidField(field, 'is required');
  if (v.length > MAX_NAME) throw invalidField(field, `must be at most ${MAX_NAME} characters`);
  return v;
}

function quota(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 100_000) throw invalidField('seatQuota', 'must be an integer from 0 to 100000');
  return value;
}

const dateOf = (t: Timestamp | undefined) => (t ? timestampDate(t) : null);

function notFound(kind: string, id: string): ApiError {
  return new ApiError(1005, `${kind} ${id || '(empty id)'} does not exist`);
}

/** Issues a key to a user, for the operator and for the console alike; the plaintext is returned once. */
export async function issueApiKey(db: Db, user: { id: string; customerId: string }, name: string) {
  const key = generateApiKey();
  const row = await tenancy.insertApiKey(db, {
    customerId: user.customerId,
    userId: user.id,
    name: name.trim().slice(0, MAX_NAME),
    prefix: key.prefix,
    keyHash: key.hash,
  });
  return { apiKey: toApiKey(row), plaintext: key.plaintext };
}

/** Operator actions. Each rule of the spec's seat table is enforced here, inside a transaction. */
export class AdminHandlers implements ServiceImpl<typeof AdminService> {
  constructor(
    private readonly deps: { db: Db; sealedBox: SealedBox; health: HealthProbe; startTokenRefresh: TokenRefreshStarter; logger: Logger },
  ) {}

  async createCustomer(req: CreateCustomerRequest) {
    const row = await tenancy.insertCustomer(this.deps.db, {
      name: required('name', req.name),
      seatQuota: quota(req.seatQuota),
      planExpiresAt: dateOf(req.planExpiresAt),
    });
    return { customer: toCustomer(row) };
  }

  async listCustomers() {
    return { customers: (await tenancy.listCustomers(this.deps.db)).map(toCustomer) };
  }

  async getCustomer(req: GetCustomerRequest) {
    const row = await tenancy.findCustomer(this.deps.db, req.id);
    if (!row) throw notFound('customer', req.id);
    return { customer: toCustomer(row) };
  }

  async updateCustomer(req: UpdateCustomerRequest) {
    if (req.clearPlanExpiry && req.planExpiresAt) throw invalidField('planExpiresAt', 'cannot be set together with clearPlanExpiry');
    const patch: Parameters<typeof tenancy.updateCustomer>[2] = {};
    if (req.name !== undefined) patch.name = required('name', req.name);
    if (req.seatQuota !== undefined) patch.seatQuota = quota(req.seatQuota);
    if (req.planExpiresAt) patch.planExpiresAt = timestampDate(req.planExpiresAt);
    if (req.clearPlanExpiry) patch.planExpiresAt = null;
    const row = await tenancy.updateCustomer(this.deps.db, req.id, patch);
    if (!row) throw notFound('customer', req.id);
    return { customer: toCustomer(row) };
  }

  async createUser(req: CreateUserRequest) {
    const email = required('email', req.email);
    if (!EMAIL.test(email)) throw invalidField('email', 'must be an e-mail address');
    if (!(await tenancy.findCustomer(this.deps.db, req.customerId))) throw notFound('customer', req.customerId);
    const row = await tenancy.insertUser(this.deps.db, { customerId: req.customerId, email, name: req.name.trim() });
    if (!row) throw invalidField('email', `${email} is already registered`);
    return { user: toUser(row) };
  }

  async listUsers(req: ListUsersRequest) {
    if (!(await tenancy.findCustomer(this.deps.db, req.customerId))) throw notFound('customer', req.customerId);
    return { users: (await tenancy.listUsers(this.deps.db, req.customerId)).map(toUser) };
  }

  async setUserDisabled(req: SetUserDisabledRequest) {
    const row = await tenancy.setUserDisabled(this.deps.db, req.userId, req.disabled);
    if (!row) throw notFound('user', req.userId);
    return { user: toUser(row) };
  }

  async setUserPassword(req: SetUserPasswordRequest) {
    const length = [...req.password].length;
    if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
      throw invalidField('password', `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
    }
    // Sign-in refuses NUL (see ConsoleService.signIn), so a password holding one could never be used.
    if (req.password.includes('\u0000')) throw invalidField('password', 'must not contain the NUL character');
    const hash = await hashPassword(req.password);
    const row = await this.deps.db.transaction(async (tx) => {
      const updated = await sessions.setUserPassword(tx, req.userId, hash);
      // A new password signs out every browser, which is what a user who suspects a leak expects.
      if (updated) await sessions.deleteUserSessions(tx, updated.id, { all: true });
      return updated;
    });
    if (!row) throw notFound('user', req.userId);
    return { user: toUser(row) };
  }

  async createApiKey(req: CreateApiKeyRequest) {
    const user = await tenancy.findUser(this.deps.db, req.userId);
    if (!user) throw notFound('user', req.userId);
    return issueApiKey(this.deps.db, user, req.name);
  }

  async listApiKeys(req: ListApiKeysRequest) {
    if (!(await tenancy.findCustomer(this.deps.db, req.customerId))) throw notFound('customer', req.customerId);
    return { apiKeys: (await tenancy.listApiKeys(this.deps.db, req.customerId, req.userId || undefined)).map(toApiKey) };
  }

  async revokeApiKey(req: RevokeApiKeyRequest) {
    const row = await tenancy.revokeApiKey(this.deps.db, req.id);
    if (!row) throw notFound('API key', req.id);
    return { apiKey: toApiKey(row) };
  }

  async createSeat(req: CreateSeatRequest) {
    const track = trackFromProto(req.track);
    if (!track) throw invalidField('track', 'must be TRACK_VIDEO or TRACK_SHOP');
    const row = await this.deps.db.transaction(async (tx) => {
      const usage = await seatsRepo.countSeatsForUpdate(tx, req.customerId);
      if (!usage) throw notFound('customer', req.customerId);
      if (usage.used >= usage.quota) {
        throw new ApiError(
          1004,
          `seat quota insufficient: ${usage.used} of ${usage.quota} seats in use; ask the administrator for more seats`,
        );
      }
      return seatsRepo.insertSeat(tx, { customerId: req.customerId, name: req.name.trim().slice(0, MAX_NAME), track });
    });
    return { seat: toSeat(row) };
  }

  async listSeats(req: ListSeatsRequest) {
    if (!(await tenancy.findCustomer(this.deps.db, req.customerId))) throw notFound('customer', req.customerId);
    return { seats: (await seatsRepo.listSeatsOfCustomer(this.deps.db, req.customerId)).map(toSeat) };
  }

  async bindSeat(req: BindSeatRequest) {
    const accountId = required('accountId', req.accountId);
    const credentials = req.credentials;
    if (!credentials?.accessToken) throw invalidField('credentials.accessToken', 'is required');
    const row = await bindAccount(this.deps, {
      seatId: req.seatId,
      accountId,
      accountUsername: req.accountUsername.trim() || null,
      credentials: {
        accessToken: credentials.accessToken,
        ...(credentials.refreshToken ? { refreshToken: credentials.refreshToken } : {}),
        scopes: credentials.scopes,
      },
      accessTokenExpiresAt: dateOf(credentials.accessTokenExpiresAt),
      refreshTokenExpiresAt: dateOf(credentials.refreshTokenExpiresAt),
    });
    return { seat: toSeat(row) };
  }

  async unbindSeat(req: UnbindSeatRequest) {
    const row = await seatsRepo.unbindSeat(this.deps.db, req.seatId);
    if (!row) throw notFound('seat', req.seatId);
    return { seat: toSeat(row) };
  }

  async pingWorker() {
    return this.deps.health.ping();
  }
}
