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

/**
 * The stored value as it should be now (sealed under the current key), or undefined when it
 * already is. Throws when it cannot be opened.
 */
export function resealedCredentials(box: SealedBox, seatId: string, sealed: string): string | undefined {
  const { plaintext, stale } = box.unseal(sealed, seatId);
  return stale ? box.seal(plaintext, seatId) : undefined;
}
