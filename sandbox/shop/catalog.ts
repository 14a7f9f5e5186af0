/**
 * The products a creator can link (Get Shop Products, 202509). Every shop account sees the same
 * 25 seeded products, so tests and demos can name them, with a fixed spread of showcase statuses
 * (ADDED, ADDABLE and REJECTED all occur); the control API adds more per account. A REJECTED
 * product is listed but cannot be linked (170001012).
 *
 * Listing follows the partner docs: `sort_field` PRODUCT_ID (default) | PRICE | SALE and
 * `sort_order` DESC (default) | ASC, where an empty or unknown value falls back to the default
 * instead of being refused; `title_keyword` matches case-insensitively inside the title;
 * `page_token` is opaque, shaped like the platform's (base64 of `offset=<n>`), and
 * `next_page_token` is empty on the last page.
 */
import { stableNumber } from '../posts';
import { SHOP } from '../official-error';
import { CREATOR } from './errors';

export const ADDED_STATUSES = ['ADDABLE', 'ADDED', 'REJECTED'] as const;
export type AddedStatus = (typeof ADDED_STATUSES)[number];

export interface Product {
  id: string;
  title: string;
  /** Two decimals, as the platform prints prices. */
  amount: string;
  currency: string;
  addedStatus: AddedStatus;
  brandName: string;
  salesCount: number;
}

/** The official `products[]` item. */
export interface OfficialProduct {
  id: string;
  title: string;
  price: { amount: string; currency: string };
  added_status: AddedStatus;
  brand_name: string;
  images: Array<{ url: string; width: number; height: number }>;
  sales_count: number;
}

const SEED_TITLES: ReadonlyArray<[title: string, brand: string]> = [
  ['Wireless Charging Stand', 'Voltra'],
  ['Ceramic Pour Over Coffee Set', 'Kilnhouse'],
  ['Insulated Steel Water Bottle', 'Peakwell'],
  ['Vitamin C Brightening Serum', 'Lumina Skin'],
  ['Compact Folding Yoga Mat', 'Stillpoint'],
  ['Noise Cancelling Earbuds', 'Voltra'],
  ['Silk Sleep Mask', 'Duskwear'],
  ['Cast Iron Skillet 10 Inch', 'Hearthline'],
  ['LED Desk Lamp with USB Port', 'Brightnook'],
  ['Organic Cotton Crew Tee', 'Fieldthread'],
  ['Bamboo Cutting Board Set', 'Hearthline'],
  ['Mini Portable Blender', 'Peakwell'],
  ['Hydrating Lip Oil', 'Lumina Skin'],
  ['Magnetic Phone Car Mount', 'Voltra'],
  ['Linen Throw Pillow Cover', 'Duskwear'],
  ['Resistance Band Kit', 'Stillpoint'],
  ['Scented Soy Candle', 'Kilnhouse'],
  ['Stainless Steel Lunch Box', 'Peakwell'],
  ['Ring Light with Tripod', 'Brightnook'],
  ['Waterproof Hiking Backpack', 'Fieldthread'],
  ['Electric Milk Frother', 'Kilnhouse'],
  ['Aloe Soothing Gel', 'Lumina Skin'],
  ['Smart Plug Two Pack', 'Voltra'],
  ['Knitted Beanie Hat', 'Fieldthread'],
  ['Weighted Jump Rope', 'Stillpoint'],
];

/** Fixed so that every status occurs: every fifth product is rejected, every third already added. */
function seedStatus(index: number): AddedStatus {
  if (index % 5 === 4) return 'REJECTED';
  return index % 3 === 0 ? 'ADDED' : 'ADDABLE';
}

export const SEED_PRODUCTS: readonly Product[] = SEED_TITLES.map(([title, brandName], i) => ({
  // 19-digit ids starting with 17, as the platform's product ids do.
  id: `17${String(29_000_000_000_000_000n + BigInt(stableNumber(title, 1e9)) * 100n + BigInt(i)).padStart(17, '0')}`,
  title,
  brandName,
  amount: (4.99 + stableNumber(`${title}:price`, 9500) / 100).toFixed(2),
  currency: 'USD',
  addedStatus: seedStatus(i),
  salesCount: stableNumber(`${title}:sales`, 20_000),
}));

export const SORT_FIELDS = ['PRODUCT_ID', 'PRICE', 'SALE'] as const;
export type SortField = (typeof SORT_FIELDS)[number];

const COMPARE: Record<SortField, (a: Product, b: Product) => number> = {
  // Ids are decimal strings of one length for seeded products, not for added ones: compare as numbers.
  PRODUCT_ID: (a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0),
  PRICE: (a, b) => Number(a.amount) - Number(b.amount) || COMPARE.PRODUCT_ID(a, b),
  SALE: (a, b) => a.salesCount - b.salesCount || COMPARE.PRODUCT_ID(a, b),
};

export interface ProductQuery {
  pageSize: number;
  pageToken?: string;
  titleKeyword?: string;
  sortField?: string;
  sortOrder?: string;
}

function decodePageToken(token: string | undefined): number {
  if (token === undefined) return 0;
  const match = /^offset=(\d+)\n?$/.exec(Buffer.from(token, 'base64').toString('utf8'));
  if (!match) throw SHOP.invalid('page_token');
  return Number(match[1]);
}

export class Catalog {
  private readonly added = new Map<string, Product[]>();
  private sequence = 0;

  constructor(private readonly imageUrl: (productId: string) => string) {}

  products(openId: string): Product[] {
    return [...SEED_PRODUCTS, ...(this.added.get(openId) ?? [])];
  }

  /** The product as a post or precheck may link it: 170001011 unknown, 170001012 rejected. */
  linkable(openId: string, productId: string): Product {
    const product = this.products(openId).find((p) => p.id === productId);
    if (!product) throw CREATOR.productNotFound(productId);
    if (product.addedStatus === 'REJECTED') throw CREATOR.productUnavailable(productId);
    return product;
  }

  add(openId: string, input: Partial<Omit<Product, 'id'>> & { id?: string; title: string }): Product {
    this.sequence += 1;
    const product: Product = {
      id: input.id ?? `1739${String(stableNumber(openId, 1e9)).padStart(9, '0')}${String(this.sequence).padStart(6, '0')}`,
      title: input.title,
      amount: input.amount ?? '9.99',
      currency: input.currency ?? 'USD',
      addedStatus: input.addedStatus ?? 'ADDABLE',
      brandName: input.brandName ?? 'Sandbox Brand',
      salesCount: input.salesCount ?? 0,
    };
    const list = this.added.get(openId) ?? [];
    list.push(product);
    this.added.set(openId, list);
    return product;
  }

  list(openId: string, query: ProductQuery): { products: OfficialProduct[]; total_count: number; next_page_token: string } {
    const keyword = query.titleKeyword?.toLowerCase();
    const field: SortField = SORT_FIELDS.includes(query.sortField as SortField) ? (query.sortField as SortField) : 'PRODUCT_ID';
    const direction = query.sortOrder === 'ASC' ? 1 : -1;
    const matching = this.products(openId)
      .filter((p) => !keyword || p.title.toLowerCase().includes(keyword))
      .sort((a, b) => direction * COMPARE[field](a, b));
    const offset = decodePageToken(query.pageToken);
    const page = matching.slice(offset, offset + query.pageSize);
    const next = offset + page.length;
    return {
      products: page.map((p) => this.official(p)),
      total_count: matching.length,
      next_page_token: next < matching.length ? Buffer.from(`offset=${next}`).toString('base64') : '',
    };
  }

  official(p: Product): OfficialProduct {
    return {
      id: p.id,
      title: p.title,
      price: { amount: p.amount, currency: p.currency },
      added_status: p.addedStatus,
      brand_name: p.brandName,
      images: [{ url: this.imageUrl(p.id), width: 600, height: 600 }],
      sales_count: p.salesCount,
    };
  }
}
