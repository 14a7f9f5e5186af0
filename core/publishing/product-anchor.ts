/**
 * The anchor text of a shop post whose request names none: the linked product's own title, made
 * acceptable (punctuation, symbols and emoji removed, spaces collapsed) and cut to the limit at a
 * word boundary where there is one. The official post requires an anchor text; the spec makes
 * `productTitle` optional, so the service supplies the one a shopper would expect.
 */
import { ApiError, invalidField } from '../errors';
import type { Upstream } from '../upstream';
import { getShopProducts } from '../upstream/shop/content';
import { ANCHOR_TEXT_MAX_CHARACTERS, anchorTextProblem } from './anchor-text';

/** Pages of 100 products searched for a product's title. */
const PRODUCT_LOOKUP_PAGES = 5;

export function anchorTextFromProductTitle(productTitle: string): string {
  const kept = [...productTitle].map((ch) => (/\s/u.test(ch) || anchorTextProblem(ch) === undefined ? ch : ' ')).join('');
  const words = kept.replace(/\s+/gu, ' ').trim();
  const chars = [...words];
  if (chars.length <= ANCHOR_TEXT_MAX_CHARACTERS) return words;
  const cut = chars.slice(0, ANCHOR_TEXT_MAX_CHARACTERS).join('');
  const lastSpace = cut.lastIndexOf(' ');
  return (lastSpace > 0 ? cut.slice(0, lastSpace) : cut).trim();
}

/** The linked product's own title as anchor text; the product must be one the creator can link (1005). */
export async function productAnchorText(upstream: Upstream, accessToken: string, productId: string): Promise<string> {
  let pageToken: string | undefined;
  for (let page = 0; page < PRODUCT_LOOKUP_PAGES; page++) {
    const data = await getShopProducts(upstream.shop, accessToken, { page_size: 100, ...(pageToken ? { page_token: pageToken } : {}) });
    const product = data.products.find((p) => p.id === productId);
    if (product) {
      const text = anchorTextFromProductTitle(product.title);
      if (!text)
        throw invalidField('productTitle', `is required: the title of product ${productId} has no letters or digits to use as anchor text`);
      return text;
    }
    if (!data.next_page_token) break;
    pageToken = data.next_page_token;
  }
  throw new ApiError(1005, `productId: ${productId} is not a product this creator can link (POST /v1/products/query lists them)`, {
    data: { field: 'productId' },
  });
}
