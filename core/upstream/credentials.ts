/**
 * A seat's upstream credentials as stored: sealed JSON bound to the seat id. Read and written only
 * through here, so the stored shape has one definition.
 */
import type { SealedBox } from '../crypto/sealed-box';

export interface SeatCredentials {
  accessToken: string;
  refreshToken?: string;
  scopes?: string[];
}

export function sealCredentials(box: SealedBox, seatId: string, credentials: SeatCredentials): string {
  return box.seal(JSON.stringify(credentials), seatId);
}

export function openCredentials(box: SealedBox, seatId: string, sealed: string): SeatCredentials {
  return JSON.parse(box.open(sealed, seatId)) as SeatCredentials;
}
