import { Type, type Static } from '@sinclair/typebox';
import { MAX_LOOKBACK_DAYS, MAX_VIDEO_IDS, MAX_VIDEO_PAGE } from '../../core/engagement/insight-rules';
import { MAX_SHOP_TITLE_UTF16 } from '../../core/services/publish.service';
import { BUSINESS_CATEGORIES } from '../../core/vocabulary';

const Account = Type.String({ minLength: 1, maxLength: 200, description: 'The bound video track account: username or businessId' });

// Comma lists travel as one query value; core splits them and names a bad entry.
const Fields = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 2000,
    description:
      'Comma-separated field names, camelCase as in the answer (official snake_case names are accepted too); absent: every field',
  }),
);
const Day = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 32, description, examples: ['2026-11-01'] }));

export const AccountInsightsQuery = Type.Object(
  {
    account: Account,
    fields: Fields,
    startDate: Day(`First day of the daily series (metrics), YYYY-MM-DD UTC, at most ${MAX_LOOKBACK_DAYS} days back; with endDate`),
    endDate: Day('Last day of the daily series, YYYY-MM-DD UTC, yesterday at the latest; with startDate'),
  },
  { additionalProperties: false },
);
export type AccountInsightsQuery = Static<typeof AccountInsightsQuery>;

const Instant = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 64, description, examples: ['2026-11-01T09:30:00Z'] }));

export const VideoInsightsQuery = Type.Object(
  {
    account: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'The bound account: username or businessId of a video track seat, or creatorUserOpenId of a shop track seat (a video track seat is looked up first)',
    }),
    fields: Fields,
    videoIds: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1000, description: `Comma-separated post ids (item_id), at most ${MAX_VIDEO_IDS}` }),
    ),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'nextCursor of the previous page' })),
    maxCount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_VIDEO_PAGE,
        description: `Page size, 1 to ${MAX_VIDEO_PAGE} (default ${MAX_VIDEO_PAGE}); a page may be shorter while hasMore is true`,
      }),
    ),
    title: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_SHOP_TITLE_UTF16,
        description: 'Shop track accounts only: videos whose title contains this text, ignoring case (surrounding spaces are dropped)',
      }),
    ),
    from: Instant('Shop track accounts only: videos published at or after this instant, ISO 8601 with a zone (Z or ±hh:mm; send + as %2B)'),
    to: Instant('Shop track accounts only: videos published before this instant, ISO 8601 with a zone'),
  },
  { additionalProperties: false },
);
export type VideoInsightsQuery = Static<typeof VideoInsightsQuery>;

export const LegacyPostStatsQuery = Type.Object(
  {
    itemId: Type.String({ minLength: 1, maxLength: 64, description: 'The post id (item_id)' }),
    account: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'The bound account; absent: your video track seats are searched for the post',
      }),
    ),
  },
  { additionalProperties: false },
);
export type LegacyPostStatsQuery = Static<typeof LegacyPostStatsQuery>;

export const BenchmarkQuery = Type.Object(
  {
    account: Account,
    // A plain string: core's refusal lists the allowed values, which a schema enum's message does not.
    category: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'One of the official 25 categories',
      examples: [...BUSINESS_CATEGORIES],
    }),
  },
  { additionalProperties: false },
);
export type BenchmarkQuery = Static<typeof BenchmarkQuery>;

export const AccountQuery = Type.Object({ account: Account }, { additionalProperties: false });
export type AccountQuery = Static<typeof AccountQuery>;

/** An official answer flattened to camelCase fields by the endpoint's field table. */
const Flattened = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const AccountInsightsJson = Flattened('The account; metrics[] (one entry a day) only with a date range');

const VideoTrackItem = Type.Object(
  { itemId: Type.String() },
  { additionalProperties: true, description: 'A post of a video track account: the official fields, flattened' },
);

const ShopVideoItem = Type.Object(
  {
    track: Type.Literal('shop'),
    videoId: Type.String({ description: "The official video id: the publish record's shareId, for GET /v1/publish/tts/status?videoId=" }),
    title: Type.String({ description: 'The title as published' }),
    status: Type.String({ description: 'The normalized publish status' }),
    officialStatus: Type.Union([Type.String(), Type.Null()], {
      description: "The shop's post_status (SUCCESS, FAIL, PROCESSING); null when the shop no longer knows the video as the creator's",
    }),
    postTime: Type.Union([Type.Integer(), Type.Null()], { description: "The shop's post_time in unix seconds, once the post succeeded" }),
    publishedAt: Type.String({ format: 'date-time', description: 'When the service accepted the publish: what from and to select on' }),
    recordId: Type.String({ description: 'The publish record, as GET /v1/publish/records lists it' }),
  },
  {
    additionalProperties: false,
    description: "A video of a shop track account, from our publish records and the shop's status of it; the shop gives no metrics",
  },
);

export const VideoInsightsJson = Type.Object(
  {
    items: Type.Array(Type.Union([VideoTrackItem, ShopVideoItem])),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
    hasMore: Type.Boolean(),
  },
  { additionalProperties: true },
);

export const BenchmarkJson = Flattened("The category's averages");
export const VideoSettingsJson = Flattened('What the account may publish: privacyLevelOptions, maxVideoPostDurationSec, …');
