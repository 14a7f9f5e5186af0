/**
 * Binding an account to a seat, for the operator (AdminService.BindSeat) and for a customer who
 * connects through the platform's consent page (ConsoleSeatService) alike: one place for the seat
 * table's rules (1006, 1008) and for starting the token refresh that keeps the binding alive.
 */
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import { sqlState, UNIQUE_VIOLATION } from '../db/errors';
import * as seatsRepo from '../db/repositories/seats';
import { ApiError } from '../errors';
import type { Logger } from '../logger';
import type { TokenRefreshStarter } from '../temporal/token-refresh';
import { sealCredentials, type SeatCredentials } from '../upstream/credentials';

export interface SeatBinding {
  seatId: string;
  accountId: string;
  /** Undefined when the platform did not tell: a reconnect keeps the name it had. */
  accountUsername: string | null | undefined;
  credentials: SeatCredentials;
  accessTokenExpiresAt: Date | null;
  refreshTokenExpiresAt: Date | null;
  /** When set, a seat of another customer is answered like a missing one. */
  customerId?: string;
}

export interface BindingDeps {
  db: Db;
  sealedBox: SealedBox;
  startTokenRefresh: TokenRefreshStarter;
  logger: Logger;
}

export function seatNotFound(seatId: string): ApiError {
  return new ApiError(1005, `seat ${seatId || '(empty id)'} does not exist`);
}

function seatTaken(seatId: string): ApiError {
  return new ApiError(1008, `seat ${seatId} is already bound to another account; a seat can bind only one account of the platform`);
}

function alreadyBound(accountId: string): ApiError {
  return new ApiError(1006, `account ${accountId} is already bound to another seat; add it to the original seat`);
}

/**
 * Binds the account and starts its token refresh. Binding the account a seat already holds is a
 * reconnect: it replaces the credentials and makes the authorization active again.
 */
export async function bindAccount(deps: BindingDeps, binding: SeatBinding): Promise<seatsRepo.SeatRow> {
  const { accountId } = binding;
  try {
    const row = await deps.db.transaction(async (tx) => {
      const seat = await seatsRepo.findSeat(tx, binding.seatId);
      if (!seat || (binding.customerId !== undefined && seat.customerId !== binding.customerId)) throw seatNotFound(binding.seatId);
      if (seat.accountId !== null && seat.accountId !== accountId) throw seatTaken(seat.id);
      const holder = await seatsRepo.findSeatByAccount(tx, seat.track, accountId);
      if (holder && holder.id !== seat.id) throw alreadyBound(accountId);
      const bound = await seatsRepo.bindSeat(tx, seat.id, {
        accountId,
        accountUsername:
          binding.accountUsername !== undefined ? binding.accountUsername : seat.accountId === accountId ? seat.accountUsername : null,
        credentialsSealed: sealCredentials(deps.sealedBox, seat.id, binding.credentials),
        accessTokenExpiresAt: binding.accessTokenExpiresAt,
        refreshTokenExpiresAt: binding.refreshTokenExpiresAt,
      });
      // Another account won a concurrent bind of this seat after it was read above.
      if (!bound) throw seatTaken(seat.id);
      return bound;
    });
    await ensureTokenRefresh(deps, row.id);
    return row;
  } catch (err) {
    // Two concurrent binds of one account: the unique index decides, and the loser gets 1006.
    if (sqlState(err) === UNIQUE_VIOLATION) throw alreadyBound(accountId);
    throw err;
  }
}

/**
 * The binding stands even when Temporal is unreachable: core starts the refresh of every bound
 * seat again on start-up, so a missed start heals with the next deploy or restart.
 */
async function ensureTokenRefresh(deps: BindingDeps, seatId: string): Promise<void> {
  try {
    await deps.startTokenRefresh(seatId);
  } catch (err) {
    deps.logger.error({ err, seatId }, 'could not start the token refresh workflow');
  }
}
