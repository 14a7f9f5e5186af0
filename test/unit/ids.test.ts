import { newId } from '../../core/ids';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** Crockford base32 leaves out i, l, o and u. */
const ID_SHAPE = /^seat_[0-9a-hjkmnp-tv-z]{26}$/;

/** Reads the millisecond time back from the first 10 characters after the prefix. */
function timeOf(id: string): number {
  const encoded = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11);
  return [...encoded].reduce((acc, c) => acc * 32 + ALPHABET.indexOf(c), 0);
}

describe('newId', () => {
  it('is the prefix, an underscore and 26 lower-case Crockford base32 characters', () => {
    const id = newId('seat');

    expect(id).toMatch(ID_SHAPE);
  });

  it('starts with whatever prefix it is given', () => {
    expect(newId('whk').startsWith('whk_')).toBe(true);
    expect(newId('whk')).toHaveLength('whk_'.length + 26);
  });

  it('encodes the creation time in its first 10 characters', () => {
    const now = Date.UTC(2025, 0, 15, 12, 30, 45, 123);

    expect(timeOf(newId('seat', now))).toBe(now);
  });

  it('uses the current time by default', () => {
    const before = Date.now();
    const id = newId('seat');
    const after = Date.now();

    expect(timeOf(id)).toBeGreaterThanOrEqual(before);
    expect(timeOf(id)).toBeLessThanOrEqual(after);
  });

  it('sorts as strings in the order of creation time', () => {
    const base = Date.UTC(2025, 0, 1);
    const times = [0, 1, 31, 32, 33, 1_000, 1_023, 1_024, 60_000, 86_400_000, 365 * 86_400_000].map((d) => base + d);
    const ids = times.map((t) => newId('rec', t));

    expect([...ids].sort()).toEqual(ids);
  });

  it('makes 1000 distinct ids within the same millisecond', () => {
    const now = Date.now();
    const ids = Array.from({ length: 1000 }, () => newId('rec', now));

    expect(new Set(ids).size).toBe(1000);
  });
});
