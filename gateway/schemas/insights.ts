import { Type, type Static } from '@sinclair/typebox';
import { MAX_LOOKBACK_DAYS, MAX_VIDEO_IDS, MAX_VIDEO_PAGE } from '../../core/engagement/insight-rules';
import { BUSINESS_CATEGORIES } from '../../core/upstream/vplat/insights';

const Account = Type.String({ minLength: 1, maxLength: 200, description: 'The bound video track account: username or businessId' });

// Comma lists travel as one query value; core splits them and names a bad entry.
const Fields = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'Comma-separated field names, camelCase as in the answer (official snake_case names are accepted too); absent: every field',
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

export const VideoInsightsQuery = Type.Object(
  {
    account: Account,
    fields: Fields,
    videoIds: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: `Comma-separated post ids (item_id), at most ${MAX_VIDEO_IDS}` })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'nextCursor of the previous page' })),
    maxCount: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_VIDEO_PAGE, description: `Page size, 1 to ${MAX_VIDEO_PAGE} (default ${MAX_VIDEO_PAGE}); a page may be shorter while hasMore is true` })),
  },
  { additionalProperties: false },
);
export type VideoInsightsQuery = Static<typeof VideoInsightsQuery>;

export const LegacyPostStatsQuery = Type.Object(
  {
    itemId: Type.String({ minLength: 1, maxLength: 64, description: 'The post id (item_id)' }),
    account: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The bound account; absent: your video track seats are searched for the post' })),
  },
  { additionalProperties: false },
);
export type LegacyPostStatsQuery = Static<typeof LegacyPostStatsQuery>;

export const BenchmarkQuery = Type.Object(
  {
    account: Account,
    // A plain string: core's refusal lists the allowed values, which a schema enum's message does not.
    category: Type.String({ minLength: 1, maxLength: 64, description: 'One of the official 25 categories', examples: [...BUSINESS_CATEGORIES] }),
  },
  { additionalProperties: false },
);
export type BenchmarkQuery = Static<typeof BenchmarkQuery>;

export const AccountQuery = Type.Object({ account: Account }, { additionalProperties: false });
export type AccountQuery = Static<typeof AccountQuery>;

/** An official answer flattened to camelCase fields by the endpoint's field table. */
const Flattened = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const AccountInsightsJson = Flattened('The account; metrics[] (one entry a day) only with a date range');

export const VideoInsightsJson = Type.Object(
  {
    items: Type.Array(Type.Object({ itemId: Type.String() }, { additionalProperties: true })),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
    hasMore: Type.Boolean(),
  },
  { additionalProperties: true },
);

export const BenchmarkJson = Flattened('The category\'s averages');
export const VideoSettingsJson = Flattened('What the account may publish: privacyLevelOptions, maxVideoPostDurationSec, …');
