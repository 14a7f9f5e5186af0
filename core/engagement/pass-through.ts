/**
 * The shape of every comment, message and insight call: the account's video track seat first
 * (1007 when none of the caller's seats holds it), the official call with that seat's token, and
 * the answer flattened to camelCase by the endpoint's field table (fields the table does not name
 * follow the one joining rule). Validation happens before, in the route's schema and the service.
 */
import type { JsonObject } from '@bufbuild/protobuf';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import { bookSeat, seatAccessToken, type BoundSeat } from '../publishing/seats';
import { fromOfficial, type FieldTable } from '../upstream/mapping';

export interface PassThroughDeps {
  db: Db;
  sealedBox: SealedBox;
}

export async function passThrough(
  deps: PassThroughDeps,
  req: { customerId: string; account: string },
  call: (accessToken: string, seat: BoundSeat) => Promise<object>,
  table: FieldTable = [],
): Promise<{ data: JsonObject }> {
  const seat = await bookSeat(deps.db, req.customerId, req.account, 'video', 'account');
  const official = await call(seatAccessToken(deps.sealedBox, seat), seat);
  return { data: fromOfficial(table, official as Record<string, unknown>) as JsonObject };
}
