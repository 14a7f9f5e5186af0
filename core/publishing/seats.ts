/**
 * The seat a request acts through, named by its account: the spec's first check on every path
 * that calls the platform for an account (1007 when none of the caller's seats holds it, or when
 * the platform removed its authorization), and the seat's upstream access token.
 */
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import { findCustomerSeatByAccount, type SeatRow } from '../db/repositories/seats';
import type { SeatTrack } from '../db/schema';
import { ApiError } from '../errors';
import { openCredentials } from '../upstream/credentials';

export type BoundSeat = SeatRow & { accountId: string; credentialsSealed: string };

const TRACK_WORDS: Record<SeatTrack, string> = { video: 'video track', shop: 'shop track' };

/** `field` names the request field that carried the account, for the message and `data.field`. */
export async function bookSeat(db: Db, customerId: string, account: string, track: SeatTrack, field: string): Promise<BoundSeat> {
  const seat = await findCustomerSeatByAccount(db, customerId, account, track);
  if (!seat?.accountId || !seat.credentialsSealed) {
    throw new ApiError(
      1007,
      `${field}: ${account} is not bound to any of your ${TRACK_WORDS[track]} seats; bind it to a seat first (GET /v1/seats lists them)`,
      {
        data: { field },
      },
    );
  }
  if (seat.authorizationStatus === 'reauthorization_required') {
    throw new ApiError(
      1007,
      `${field}: the authorization of ${account} was removed on the platform; connect the account to seat ${seat.id} again`,
      {
        data: { field, seatId: seat.id, authorizationStatus: seat.authorizationStatus },
      },
    );
  }
  return seat as BoundSeat;
}

export function seatAccessToken(sealedBox: SealedBox, seat: BoundSeat): string {
  return openCredentials(sealedBox, seat.id, seat.credentialsSealed).accessToken;
}
