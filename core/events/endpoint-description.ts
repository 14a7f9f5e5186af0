/**
 * A webhook endpoint's description: the customer's note telling endpoints apart in the console's
 * table and `vps webhooks list`, so one line of at most 500 characters (code points), without
 * control characters. An empty string clears it.
 */
import { invalidField } from '../errors';

export const MAX_DESCRIPTION_LENGTH = 500;

/** The description to store: null for none; throws 2001 naming `description` when it is not one. */
export function checkedDescription(description: string): string | null {
  if (description === '') return null;
  if ([...description].length > MAX_DESCRIPTION_LENGTH)
    throw invalidField('description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  // Line breaks and other controls (C0, C1, the Unicode line and paragraph separators) would break
  // the table and the CLI's columns; bidirectional controls would reorder what follows them.
  if (/[\p{Cc}\p{Zl}\p{Zp}\u200e\u200f\u202a-\u202e\u2066-\u2069]/u.test(description))
    throw invalidField('description', 'must be one line, without control characters');
  return description;
}
