/**
 * What a shop post links or uses: the creator's products (cached briefly per seat and query), the
 * music search (regular pages over the shop's irregular ones, core/shop/music-paging.ts) and cover
 * photos (checked here, the one place for the rule, then uploaded with the seat's token). On every
 * path the account is checked first (1007), then the request's content. Official failures
 * propagate as UpstreamError (3001/3002).
 */
import type { JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  CheckPhotoUploadRequest,
  QueryProductsRequest,
  SearchMusicRequest,
  ShopCatalogService,
  UploadPhotoRequest,
} from '../../gen/vps/shop/v1/shop_pb';
import { customerOf } from '../context';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import { invalidField } from '../errors';
import { bookSeat, seatAccessToken, type BoundSeat } from '../publishing/seats';
import {
  assemblePage,
  CursorRefused,
  decodeCursor,
  encodeCursor,
  MUSIC_PAGE_SIZE,
  type CursorScope,
  type MusicCursor,
  type MusicItem,
} from '../shop/music-paging';
import { checkPhoto, PhotoRefused } from '../shop/photo';
import { TtlCache } from '../shop/product-cache';
import { normalizeProductQuery, productCacheKey, ProductQueryProblem } from '../shop/products';
import type { Upstream } from '../upstream';
import { flattenOfficial } from '../upstream/mapping';
import { getShopProducts, searchMusic, uploadPhotoFile, type GetShopProductsQuery } from '../upstream/shop/content';

/** Checked here as well as by the HTTP schema, for callers that reach core over Connect. */
const REGION = /^[A-Za-z]{2}$/;
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

interface ProductPage {
  products: JsonObject[];
  totalCount: number;
  nextPageToken: string;
}

const flat = (official: object) => flattenOfficial(official as Record<string, unknown>) as JsonObject;

export class ShopCatalogHandlers implements ServiceImpl<typeof ShopCatalogService> {
  private readonly products: TtlCache<ProductPage>;

  constructor(readonly deps: { db: Db; sealedBox: SealedBox; upstream: Upstream; productCacheTtlMs: number }) {
    this.products = new TtlCache(deps.productCacheTtlMs);
  }

  async queryProducts(req: QueryProductsRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (!req.accountId) throw invalidField('accountId', 'is required');
    const seat = await bookSeat(this.deps.db, customerId, req.accountId, 'shop', 'accountId');
    let query;
    try {
      query = normalizeProductQuery(req);
    } catch (err) {
      if (err instanceof ProductQueryProblem) throw invalidField(err.field, err.reason);
      throw err;
    }
    const key = productCacheKey(seat.id, seat.accountId, query);
    // fresh: true skips the read but still refills the entry, so the next plain query sees it too.
    const hit = req.fresh ? undefined : this.products.get(key);
    const entry = hit ?? this.products.set(key, await this.readProducts(seatAccessToken(this.deps.sealedBox, seat), query));
    return { ...entry.value, cached: hit !== undefined, fetchedAt: timestampFromDate(entry.fetchedAt) };
  }

  private async readProducts(accessToken: string, query: GetShopProductsQuery): Promise<ProductPage> {
    const data = await getShopProducts(this.deps.upstream.shop, accessToken, query);
    return { products: (data.products ?? []).map(flat), totalCount: data.total_count ?? 0, nextPageToken: data.next_page_token ?? '' };
  }

  async searchMusic(req: SearchMusicRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (!req.accountId) throw invalidField('accountId', 'is required');
    const keyword = req.keyword.trim();
    if (!keyword) throw invalidField('keyword', 'is required');
    const seat = await bookSeat(this.deps.db, customerId, req.accountId, 'shop', 'accountId');
    const pageSize = req.pageSize === 0 ? MUSIC_PAGE_SIZE.default : req.pageSize;
    if (pageSize < MUSIC_PAGE_SIZE.min || pageSize > MUSIC_PAGE_SIZE.max)
      throw invalidField('pageSize', `must be an integer from ${MUSIC_PAGE_SIZE.min} to ${MUSIC_PAGE_SIZE.max}`);
    if (req.region && !REGION.test(req.region)) throw invalidField('region', 'must be an ISO 3166-1 alpha-2 code');
    if (req.language && !LANGUAGE.test(req.language)) throw invalidField('language', 'must be a BCP 47 language tag');
    const scope: CursorScope = { seatId: seat.id, keyword, region: req.region, language: req.language };
    let cursor: MusicCursor | undefined;
    if (req.cursor) {
      try {
        cursor = decodeCursor(this.deps.sealedBox, scope, req.cursor);
      } catch (err) {
        if (err instanceof CursorRefused) {
          throw invalidField(
            'cursor',
            "is not a cursor of this search: pass the previous page's nextCursor unchanged, with the same accountId, keyword, region and language",
          );
        }
        throw err;
      }
    }
    const token = seatAccessToken(this.deps.sealedBox, seat);
    const page = await assemblePage({
      pageSize,
      cursor,
      fetchPage: async ({ searchId, pageToken, pageSize: size }) => {
        const data = await searchMusic(this.deps.upstream.shop, token, {
          keyword,
          search_id: searchId,
          page_token: pageToken,
          page_size: size,
          region: req.region || undefined,
          language: req.language || undefined,
        });
        return {
          items: (data.music ?? []).map((m) => flat(m) as MusicItem & JsonObject),
          hasMore: data.has_more === true,
          nextPageToken: data.next_page_token ?? '',
          searchId: data.search_id ?? '',
        };
      },
    });
    return { music: page.items as JsonObject[], nextCursor: page.next ? encodeCursor(this.deps.sealedBox, scope, page.next) : '' };
  }

  async uploadPhoto(req: UploadPhotoRequest, ctx: HandlerContext) {
    // The account first (1007), then the bytes, as every upload route does.
    const seat = await this.photoUploadSeat(req.accountId, ctx);
    const bytes = Buffer.from(req.data.buffer, req.data.byteOffset, req.data.byteLength);
    let photo;
    try {
      photo = await checkPhoto(bytes);
    } catch (err) {
      if (err instanceof PhotoRefused) throw invalidField('file', err.message);
      throw err;
    }
    const fileName = req.fileName || `cover.${photo.format.toLowerCase()}`;
    const data = await uploadPhotoFile(this.deps.upstream.shop, seatAccessToken(this.deps.sealedBox, seat), {
      fileName,
      contentType: photo.contentType,
      bytes,
    });
    return {
      photoUri: data.photo_file.photo_uri,
      format: photo.format,
      width: photo.width,
      height: photo.height,
      sizeBytes: BigInt(bytes.length),
    };
  }

  /** What uploadPhoto checks before the image, for a front end to ask before it reads one. */
  async checkPhotoUpload(req: CheckPhotoUploadRequest, ctx: HandlerContext) {
    await this.photoUploadSeat(req.accountId, ctx);
    return {};
  }

  private async photoUploadSeat(accountId: string, ctx: HandlerContext): Promise<BoundSeat> {
    if (!accountId) throw invalidField('accountId', 'is required');
    return bookSeat(this.deps.db, customerOf(ctx).customerId, accountId, 'shop', 'accountId');
  }
}
