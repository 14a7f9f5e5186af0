import { Type, type Static } from '@sinclair/typebox';
import { MUSIC_PAGE_SIZE } from '../../core/shop/music-paging';
import { ASPECT_RANGE, PHOTO_FORMATS, PHOTO_MAX_BYTES } from '../../core/shop/photo';
import { PRODUCT_PAGE_SIZE, PRODUCT_SORT_FIELDS, SORT_ORDERS } from '../../core/shop/products';
import { Timestamp } from './common';

const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

const AccountId = Type.String({ minLength: 1, maxLength: 200, description: 'The bound shop account (creatorUserOpenId)' });

export const ProductQueryBody = Type.Object(
  {
    accountId: AccountId,
    keyword: Type.Optional(Type.String({ maxLength: 255, description: 'Words the product title contains' })),
    pageSize: Type.Optional(
      Type.Integer({ minimum: PRODUCT_PAGE_SIZE.min, maximum: PRODUCT_PAGE_SIZE.max, description: `Default ${PRODUCT_PAGE_SIZE.default}` }),
    ),
    pageToken: Type.Optional(Type.String({ maxLength: 1024, description: 'nextPageToken of the previous page' })),
    sortField: Type.Optional(literals(PRODUCT_SORT_FIELDS, 'Default PRODUCT_ID')),
    sortOrder: Type.Optional(literals(SORT_ORDERS, 'Default DESC')),
    fresh: Type.Optional(Type.Boolean({ description: 'Skip the 60-second cache and refill it' })),
  },
  { additionalProperties: false },
);
export type ProductQueryBody = Static<typeof ProductQueryBody>;

/** The official product, flattened; fields the shop adds later pass through. */
const ProductJson = Type.Object(
  {
    id: Type.String({ description: 'productId of a shop publish' }),
    title: Type.Optional(Type.String()),
    priceAmount: Type.Optional(Type.String({ description: 'Two decimals' })),
    priceCurrency: Type.Optional(Type.String()),
    addedStatus: Type.Optional(Type.String({ description: 'ADDABLE, ADDED or REJECTED (cannot be linked)' })),
    brandName: Type.Optional(Type.String()),
    images: Type.Optional(
      Type.Array(Type.Object({ url: Type.String(), width: Type.Integer(), height: Type.Integer() }, { additionalProperties: true })),
    ),
    salesCount: Type.Optional(Type.Integer()),
  },
  { additionalProperties: true },
);

export const ProductPageJson = Type.Object({
  items: Type.Array(ProductJson),
  totalCount: Type.Integer({ description: 'Products matching in all' }),
  nextPageToken: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
  cached: Type.Boolean({ description: 'Whether this answer came from the cache' }),
  fetchedAt: Timestamp,
});

export const MusicSearchBody = Type.Object(
  {
    accountId: AccountId,
    keyword: Type.String({ minLength: 1, maxLength: 100, description: 'Title or author words' }),
    pageSize: Type.Optional(
      Type.Integer({ minimum: MUSIC_PAGE_SIZE.min, maximum: MUSIC_PAGE_SIZE.max, description: `Default ${MUSIC_PAGE_SIZE.default}` }),
    ),
    cursor: Type.Optional(
      Type.String({
        maxLength: 65_536,
        description: 'nextCursor of the previous page, with the same accountId, keyword, region and language',
      }),
    ),
    region: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2' })),
    language: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$', maxLength: 35, description: 'BCP 47' })),
  },
  { additionalProperties: false },
);
export type MusicSearchBody = Static<typeof MusicSearchBody>;

const MusicJson = Type.Object(
  {
    id: Type.String({ description: 'musicId of a shop publish' }),
    title: Type.Optional(Type.String()),
    author: Type.Optional(Type.String()),
    duration: Type.Optional(Type.String({ description: 'Seconds, as the shop writes it' })),
    coverThumbUrlList: Type.Optional(Type.Array(Type.String())),
    playUrlUrlList: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: true },
);

export const MusicPageJson = Type.Object({
  items: Type.Array(MusicJson, { description: 'Exactly pageSize unique tracks unless the results end' }),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null exactly when there is nothing more' }),
});

const [nw, nh] = ASPECT_RANGE.narrowest;
const [ww, wh] = ASPECT_RANGE.widest;

/** The multipart form: accountId and the file part, in either order. */
export const PhotoUploadFields = Type.Object(
  {
    accountId: AccountId,
    file: Type.String({
      format: 'binary',
      description: `${PHOTO_FORMATS.join(', ')} (recognised from the bytes), at most ${PHOTO_MAX_BYTES} bytes, aspect ratio ${nw}:${nh} to ${ww}:${wh}`,
    }),
  },
  { additionalProperties: false },
);

export const PhotoJson = Type.Object({
  photoUri: Type.String({ description: 'coverUri of a shop publish' }),
  format: literals(PHOTO_FORMATS),
  width: Type.Integer(),
  height: Type.Integer(),
  sizeBytes: Type.Integer(),
});
