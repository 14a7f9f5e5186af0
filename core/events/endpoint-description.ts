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
  // Line breaks and other controls would break the table and the CLI's columns.
  if (/[\u0000-\u001f\u007f]/.test(description)) throw invalidField('description', 'must be one line, without control characters');
  return description;
}
