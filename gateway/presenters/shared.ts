/**
 * What every presenter shares: names of the core's enums in JSON, and timestamps as ISO text. Enum
 * names come from the core's tables, never restated here.
 */
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Seat } from '../../gen/vps/seat/v1/seat_pb';
import { AUTHORIZATION_STATUSES, TRACKS } from '../../core/mappers/accounts';
import type { SeatJson } from '../schemas/seats';

function invert<K extends string, V>(table: Record<K, V>): Map<V, K> {
  return new Map((Object.entries(table) as [K, V][]).map(([k, v]) => [v, k]));
}
const trackNames = invert(TRACKS);
const authorizationNames = invert(AUTHORIZATION_STATUSES);

/** The track's name in JSON; a message without one (never sent by core) reads as the video track. */
export function trackName(track: Seat['track']): SeatJson['track'] {
  return trackNames.get(track) ?? 'video';
}

/** The seat's authorization status in JSON; a message without one reads as unbound. */
export function authorizationName(status: Seat['authorizationStatus']): SeatJson['authorizationStatus'] {
  return authorizationNames.get(status) ?? 'unbound';
}

export function isoOrNull(t: Timestamp | undefined): string | null {
  return t ? timestampDate(t).toISOString() : null;
}

/** A timestamp core always sets; one missing reads as the epoch rather than failing the answer. */
export function iso(t: Timestamp | undefined): string {
  return isoOrNull(t) ?? new Date(0).toISOString();
}
