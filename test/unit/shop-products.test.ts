import { TtlCache } from '../../core/shop/product-cache';
import { normalizeProductQuery, productCacheKey, ProductQueryProblem } from '../../core/shop/products';

const input = (over: Partial<Parameters<typeof normalizeProductQuery>[0]> = {}) => ({
  keyword: '',
  pageSize: 0,
  pageToken: '',
  sortField: '',
  sortOrder: '',
  ...over,
});

describe('product query', () => {
  it('applies the shop’s defaults, so a spelled-out default shares the cache entry', () => {
    const plain = normalizeProductQuery(input({ keyword: ' Lamp ' }));
    expect(plain).toEqual({ page_size: 20, title_keyword: 'Lamp', sort_field: 'PRODUCT_ID', sort_order: 'DESC' });
    const spelled = normalizeProductQuery(input({ keyword: 'Lamp', pageSize: 20, sortField: 'PRODUCT_ID', sortOrder: 'DESC' }));
    expect(productCacheKey('seat_1', 'acc', spelled)).toBe(productCacheKey('seat_1', 'acc', plain));
  });

  it('tells keywords, pages, sorts and seats apart, keeping the keyword’s case', () => {
    const key = (over: Partial<Parameters<typeof normalizeProductQuery>[0]>, seat = 'seat_1') =>
      productCacheKey(seat, 'acc', normalizeProductQuery(input(over)));
    const keys = [
      key({ keyword: 'Lamp' }),
      key({ keyword: 'lamp' }),
      key({ keyword: 'Lamp', pageToken: 't' }),
      key({ keyword: 'Lamp', sortOrder: 'ASC' }),
      key({ keyword: 'Lamp' }, 'seat_2'),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each([
    [{ pageSize: 101 }, 'pageSize'],
    [{ pageSize: -1 }, 'pageSize'],
    [{ sortField: 'NAME' }, 'sortField'],
    [{ sortOrder: 'desc' }, 'sortOrder'],
  ])('refuses %j naming %s', (over, field) => {
    expect(() => normalizeProductQuery(input(over))).toThrow(ProductQueryProblem);
    expect(() => normalizeProductQuery(input(over))).toThrow(new RegExp(`^${field}: `));
  });
});

describe('TtlCache', () => {
  it('serves an entry until the TTL has passed, then forgets it', () => {
    let now = 1_000;
    const cache = new TtlCache<string>(60_000, 10, () => now);
    cache.set('k', 'v');
    now += 59_999;
    expect(cache.get('k')).toEqual({ value: 'v', fetchedAt: new Date(1_000) });
    now += 1;
    expect(cache.get('k')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('stays within its bound, dropping the entry stored longest ago', () => {
    const cache = new TtlCache<number>(60_000, 3);
    for (const k of ['a', 'b', 'c']) cache.set(k, 1);
    cache.set('a', 2); // a refill counts as new
    cache.set('d', 1);
    expect(cache.size).toBe(3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.value).toBe(2);
  });
});
