import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

// Random bytes drawn in batches: one system call per 256 ids instead of one per id (every request
// gets an id), as Node does for randomUUID.
const pool = Buffer.alloc(4096);
let offset = pool.length;
function randomByte(): number {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool[offset++]!;
}

/**
 * `<prefix>_` + 10 characters of millisecond time + 16 random characters. Ids sort by creation
 * time, which keeps cursor pagination and logs readable; the prefix says what kind of id it is,
 * so a record id pasted where a seat id belongs is recognisable at a glance.
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ALPHABET[randomByte() % 32];
  return `${prefix}_${time}${rand}`;
}
