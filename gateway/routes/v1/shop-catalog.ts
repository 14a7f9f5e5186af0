/**
 * The shop catalog over HTTP: the product query and the music search are plain RPC rows; the
 * cover photo upload (POST /v1/photos) is multipart: core accepts the caller and the account
 * before the file is read, the file part is read into memory with a hard cap (the limit plus one
 * byte, so an oversized file is refused as soon as it passes the limit), then core checks the
 * account again, then the bytes, and uploads them to the shop. The rule
 * itself lives in core (core/shop/photo.ts); the gateway only bounds what it buffers.
 */
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Transport } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { ShopCatalogService } from '../../../gen/vps/shop/v1/shop_pb';
import { PHOTO_MAX_BYTES } from '../../../core/shop/photo';
import { registerSmallUpload } from '../../multipart';
import { defineRoute, forwardedHeaders, type RpcRoute } from '../../rpc-route';
import { okEnvelope } from '../../schemas/common';
import {
  MusicPageJson,
  MusicSearchBody,
  PhotoJson,
  PhotoUploadFields,
  ProductPageJson,
  ProductQueryBody,
} from '../../schemas/shop-catalog';

/** POST /v1/products/query and POST /v1/music/search. */
export const shopCatalogRoutes: RpcRoute[] = [
  defineRoute({
    method: 'POST',
    url: '/products/query',
    summary: 'Products the shop account can link, cached 60 seconds per seat and query (fresh: true bypasses and refills)',
    rpc: ShopCatalogService.method.queryProducts,
    schema: { body: ProductQueryBody, response: { 200: okEnvelope(ProductPageJson) } },
    toRequest: (req) => {
      const b = req.body;
      return {
        accountId: b.accountId,
        keyword: b.keyword ?? '',
        pageSize: b.pageSize ?? 0,
        pageToken: b.pageToken ?? '',
        sortField: b.sortField ?? '',
        sortOrder: b.sortOrder ?? '',
        fresh: b.fresh ?? false,
      };
    },
    toData: (res) => ({
      items: res.products,
      totalCount: res.totalCount,
      nextPageToken: res.nextPageToken || null,
      cached: res.cached,
      fetchedAt: timestampDate(res.fetchedAt!).toISOString(),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/music/search',
    summary: 'Music licensed for commerce, in regular pages: exactly pageSize unique tracks until the results end',
    rpc: ShopCatalogService.method.searchMusic,
    schema: { body: MusicSearchBody, response: { 200: okEnvelope(MusicPageJson) } },
    toRequest: (req) => {
      const b = req.body;
      return {
        accountId: b.accountId,
        keyword: b.keyword,
        pageSize: b.pageSize ?? 0,
        cursor: b.cursor ?? '',
        region: b.region ?? '',
        language: b.language ?? '',
      };
    },
    toData: (res) => ({ items: res.music, nextCursor: res.nextCursor || null }),
  }),
];

/** POST /v1/photos (multipart). */
export async function registerPhotoUploadRoute(app: FastifyInstance, opts: { transport: Transport; drainBytes: number }): Promise<void> {
  await registerSmallUpload(app, {
    transport: opts.transport,
    url: '/photos',
    schema: {
      summary:
        'Upload a cover photo for a shop post: multipart/form-data with accountId and the part file (in either order); returns photoUri',
      // Documents the form; its parts are read and checked one by one.
      body: { content: { 'multipart/form-data': { schema: PhotoUploadFields } } },
      response: { 200: okEnvelope(PhotoJson) },
    },
    accountField: 'accountId',
    drainBytes: opts.drainBytes,
    maxBytes: PHOTO_MAX_BYTES,
    check: (req, accountId) =>
      opts.transport.unary(ShopCatalogService.method.checkPhotoUpload, undefined, undefined, forwardedHeaders(req), { accountId }),
    // Authenticates, meters, checks the account, then the bytes (core/shop/photo.ts).
    send: async (req, upload) => {
      const res = await opts.transport.unary(ShopCatalogService.method.uploadPhoto, undefined, undefined, forwardedHeaders(req), {
        accountId: upload.account,
        fileName: upload.fileName,
        data: upload.data,
      });
      const photo = res.message;
      return {
        header: res.header,
        data: {
          photoUri: photo.photoUri,
          format: photo.format,
          width: photo.width,
          height: photo.height,
          sizeBytes: Number(photo.sizeBytes),
        },
      };
    },
  });
}
