/**
 * The service's publish handle: a value every accepted publish carries in its answer at once, which
 * the status query of its track accepts for as long as the record exists. The platform's own id
 * (the video track's share id, the shop's video id) may come after the answer, or never, when a
 * submit that got no answer is settled from the account's posts; the caller polls with the handle
 * meanwhile, and the record it is answered with shows the platform's id once known.
 *
 * It is derived from the record id rather than stored: the same 26 characters under a prefix no
 * other kind of id uses, so it needs no column and no lookup of its own, and the spec's record id
 * stays distinct from the handles its status queries take.
 */

export const PUBLISH_HANDLE_PREFIX = 'vpsh_';

const RECORD_PREFIX = 'pub_';
const HANDLE = /^vpsh_([0-9a-z]{26})$/;

/** The handle of a publish record (`pub_<26>` → `vpsh_<26>`). */
export function publishHandleOf(recordId: string): string {
  if (!recordId.startsWith(RECORD_PREFIX)) throw new Error(`${recordId} is not a publish record id`);
  return PUBLISH_HANDLE_PREFIX + recordId.slice(RECORD_PREFIX.length);
}

/** The record id a handle names, or undefined when the value is not a handle. */
export function recordIdOfHandle(value: string): string | undefined {
  const match = HANDLE.exec(value);
  return match ? RECORD_PREFIX + match[1] : undefined;
}

/** What a caller polls with: the platform's id once known, the service's handle until then. */
export function pollingHandleOf(record: { id: string; shareId: string | null }): string {
  return record.shareId || publishHandleOf(record.id);
}
