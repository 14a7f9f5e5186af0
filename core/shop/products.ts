/**
 * The product query's rules: its defaults and bounds (the HTTP schema reads them from here), and
 * the cache key, built from the query after defaults are applied so that spelling a default out
 * (`sortOrder: "DESC"`) and leaving it out share one entry.
 */
import type { GetShopProductsQuery, ShopProductSortField } from '../upstream/shop/content';

export const PRODUCT_PAGE_SIZE = { min: 1, max: 100, default: 20 } as const;
export const PRODUCT_SORT_FIELDS: readonly ShopProductSortField[] = ['PRODUCT_ID', 'PRICE', 'SALE'];
export const SORT_ORDERS = ['ASC', 'DESC'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];
/** The shop's own defaults (partner docs), applied here so the cache key is canonical. */
export const DEFAULT_SORT: { field: ShopProductSortField; order: SortOrder } = { field: 'PRODUCT_ID', order: 'DESC' };

export interface ProductQueryInput {
  keyword: string;
  pageSize: number;
  pageToken: string;
  sortField: string;
  sortOrder: string;
}

/** Raised for a field outside its range; the service turns it into 2001 naming the field. */
export class ProductQueryProblem extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/**
 * The official query for a request. The keyword is trimmed (surrounding spaces match nothing more
 * on the shop) but its case is kept: matching is the shop's business, and folding case here could
 * share an entry between queries the shop tells apart.
 */
export function normalizeProductQuery(input: ProductQueryInput): GetShopProductsQuery {
  const pageSize = input.pageSize === 0 ? PRODUCT_PAGE_SIZE.default : input.pageSize;
  if (!Number.isInteger(pageSize) || pageSize < PRODUCT_PAGE_SIZE.min || pageSize > PRODUCT_PAGE_SIZE.max) {
    throw new ProductQueryProblem('pageSize', `must be an integer from ${PRODUCT_PAGE_SIZE.min} to ${PRODUCT_PAGE_SIZE.max}`);
  }
  const sortField = input.sortField || DEFAULT_SORT.field;
  if (!PRODUCT_SORT_FIELDS.includes(sortField as ShopProductSortField)) {
    throw new ProductQueryProblem('sortField', `must be one of ${PRODUCT_SORT_FIELDS.join(', ')}`);
  }
  const sortOrder = input.sortOrder || DEFAULT_SORT.order;
  if (!SORT_ORDERS.includes(sortOrder as SortOrder)) throw new ProductQueryProblem('sortOrder', `must be one of ${SORT_ORDERS.join(', ')}`);
  const keyword = input.keyword.trim();
  return {
    page_size: pageSize,
    ...(input.pageToken ? { page_token: input.pageToken } : {}),
    ...(keyword ? { title_keyword: keyword } : {}),
    sort_field: sortField as ShopProductSortField,
    sort_order: sortOrder as SortOrder,
  };
}

/** One entry per seat, account and canonical query. The account is part of it in case a seat is ever re-bound. */
export function productCacheKey(seatId: string, accountId: string, query: GetShopProductsQuery): string {
  return JSON.stringify([
    seatId,
    accountId,
    query.title_keyword ?? '',
    query.page_size,
    query.page_token ?? '',
    query.sort_field,
    query.sort_order,
  ]);
}
