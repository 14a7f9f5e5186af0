import { KeptMap } from '../../core/kept-map';

describe('KeptMap', () => {
  it('keeps at most its limit, dropping the entry set longest ago; setting an entry again makes it the newest', () => {
    const kept = new KeptMap<string, number>(2);
    kept.set('a', 1);
    kept.set('b', 2);
    kept.set('a', 3);
    kept.set('c', 4);
    expect([kept.get('a'), kept.get('b'), kept.get('c'), kept.size]).toEqual([3, undefined, 4, 2]);
    kept.delete('a');
    expect([kept.get('a'), kept.size]).toEqual([undefined, 1]);
  });

  it('refuses a limit that would keep nothing', () => {
    expect(() => new KeptMap(0)).toThrow(RangeError);
  });
});
