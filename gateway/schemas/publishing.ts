import { Type, type Static } from '@sinclair/typebox';
import { MAX_CAPTION_UTF16, MAX_PHOTO_CAPTION_UTF16, MAX_PHOTO_TITLE_UTF16 } from '../../core/publishing/caption';
import { PUBLISH_STATUSES } from '../../core/vocabulary';
import { REASON_CATEGORIES } from '../../core/publishing/status';
import { MAX_PHOTOS, MAX_SHOP_TITLE_UTF16 } from '../../core/services/publish.service';
import { PRIVACY_LEVELS } from '../../core/vocabulary';
import { NullableTimestamp, Timestamp } from './common';

const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const PublishRecordJson = Type.Object({
  id: Type.String({ description: "The service's publish record id (not a share id)" }),
  publishId: Type.String({
    description:
      "The handle to poll the status query with, never null: the same value as shareId. The platform's share id (video track) or video id (shop track) once known; until then the service's handle (`vpsh_…`), which the status query accepts for good",
  }),
  shareId: Type.String({
    description:
      "The platform's share id (video track) or video id (shop track) once known; until then the service's handle, equal to `handle`",
  }),
  handle: Type.String({
    description:
      "The service's handle of this publish (`vpsh_…`), the same from the publish answer on; the status query of the record's track accepts it as well as the platform's id. shareId differs from it once the platform's id is known",
  }),
  status: literals(PUBLISH_STATUSES, 'Normalized status, one of the six of the spec'),
  unconfirmed: Type.Boolean({
    description:
      'true: the service stopped following the publish without a final status from the platform; status is the last one known. Do not publish again before checking the account; a later status query clears it if the platform reports a final status',
  }),
  unconfirmedAt: NullableTimestamp,
  officialStatus: Nullable(Type.String()),
  postId: Nullable(Type.String({ description: "The post's item id, about 3 minutes after publish_complete" })),
  failReason: Nullable(
    Type.String({
      description: "For publish_failed: why, in the platform's words where it gave any (the spec's failReason); null otherwise",
    }),
  ),
  reason: Nullable(
    Type.String({ description: 'Why the record is where it is: the failure, the service error or the unconfirmed outcome' }),
  ),
  reasonCategory: Type.Union([literals(REASON_CATEGORIES), Type.Null()]),
  track: Type.Union([Type.Literal('video'), Type.Literal('shop')]),
  kind: Type.Union([Type.Literal('video'), Type.Literal('photo')]),
  channel: Type.Union([Type.Literal('v1.3'), Type.Literal('legacy')], { description: 'The route that accepted the publish' }),
  seatId: Type.String(),
  accountId: Type.String(),
  videoId: Nullable(Type.String({ description: 'The video library record id, when the media came from the library' })),
  draft: Type.Boolean(),
  workflowId: Type.String({ description: 'The Temporal workflow following the publish' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  completedAt: NullableTimestamp,
});
export type PublishRecordJson = Static<typeof PublishRecordJson>;

const Bool = (description: string) => Type.Optional(Type.Boolean({ description }));
const Text = (maxLength: number, description: string) => Type.Optional(Type.String({ maxLength, description }));

/** The video post fields of both routes; they differ only in the account field's name. */
const videoPostFields = {
  videoUrl: Type.Optional(
    Type.String({ minLength: 1, maxLength: 2048, description: 'Public URL of the video (a library videoUrl or your own); or videoId' }),
  ),
  videoId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A video library record id instead of videoUrl' })),
  // The UTF-16 limit is checked by core with the spec's counting, which JSON Schema's maxLength (code points) does not do.
  caption: Text(MAX_CAPTION_UTF16 * 2, `At most ${MAX_CAPTION_UTF16} UTF-16 code units and 30 mentions`),
  isBrandOrganic: Bool('Brand organic content'),
  isBrandedContent: Bool('Branded content; takes priority over isBrandOrganic'),
  disableComment: Bool('Turn comments off'),
  disableDuet: Bool('Turn duets off'),
  disableStitch: Bool('Turn stitches off'),
  thumbnailOffset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Cover frame, in milliseconds' }),
  ),
  customThumbnailUrl: Text(2048, 'A cover image URL instead of a frame'),
  isAiGenerated: Bool('AI-generated content label'),
  draft: Bool("Send to the account's inbox as a draft (status publish_draft_inbox)"),
  locationId: Text(200, 'Location tag id (GET …/publish/location)'),
  locationName: Text(200, 'Location tag name'),
  musicSoundId: Text(200, 'Commercial music id'),
  musicSoundVolume: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  videoOriginalSoundVolume: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
};

const Account = Type.String({ minLength: 1, maxLength: 200, description: 'The bound account: username or businessId' });

export const VideoPublishBody = Type.Object({ account: Account, ...videoPostFields }, { additionalProperties: false });
export type VideoPublishBody = Static<typeof VideoPublishBody>;

export const LegacyVideoPublishBody = Type.Object(
  {
    accountId: Type.String({ minLength: 1, maxLength: 200, description: 'The bound account (businessId or username)' }),
    ...videoPostFields,
  },
  { additionalProperties: false },
);
export type LegacyVideoPublishBody = Static<typeof LegacyVideoPublishBody>;

export const PhotoPublishBody = Type.Object(
  {
    account: Account,
    photoUrls: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
      minItems: 1,
      maxItems: MAX_PHOTOS,
      description: `1 to ${MAX_PHOTOS} public image URLs`,
    }),
    privacyLevel: literals(PRIVACY_LEVELS),
    photoCoverIndex: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PHOTOS - 1 })),
    // UTF-16 limits are checked by core, as for the video caption; these bound what is read.
    title: Text(MAX_PHOTO_TITLE_UTF16 * 2, `At most ${MAX_PHOTO_TITLE_UTF16} UTF-16 code units`),
    caption: Text(
      MAX_PHOTO_CAPTION_UTF16 * 2,
      `At most ${MAX_PHOTO_CAPTION_UTF16} UTF-16 code units (the official photo limit) and 30 mentions`,
    ),
    autoAddMusic: Bool('Let the platform add music'),
    isBrandOrganic: Bool('Brand organic content'),
    isBrandedContent: Bool('Branded content'),
    disableComment: Bool('Turn comments off'),
    draft: Bool("Send to the account's inbox as a draft"),
    musicSoundId: Text(200, 'Commercial music id'),
    locationId: Text(200, 'Location tag id'),
    locationName: Text(200, 'Location tag name'),
  },
  { additionalProperties: false },
);
export type PhotoPublishBody = Static<typeof PhotoPublishBody>;

export const PublishStatusQuery = Type.Object(
  {
    publishId: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        "The shareId of the publish response: the platform's share id or the service's handle (`vpsh_…`); an old shareId is accepted",
    }),
    account: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Required only when publishId matches none of your publish records' }),
    ),
  },
  { additionalProperties: false },
);
export type PublishStatusQuery = Static<typeof PublishStatusQuery>;

export const LegacyPublishStatusQuery = Type.Object(
  {
    shareId: Type.String({ minLength: 1, maxLength: 200 }),
    account: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type LegacyPublishStatusQuery = Static<typeof LegacyPublishStatusQuery>;

export const OfficialLookupJson = Type.Object({
  publishId: Type.String(),
  status: literals(PUBLISH_STATUSES),
  officialStatus: Type.String(),
  postIds: Type.Array(Type.String()),
  failReason: Type.Union([Type.String(), Type.Null()], { description: "For publish_failed: the platform's reason" }),
  reason: Type.Union([Type.String(), Type.Null()]),
  matchedRecord: Type.Literal(false, { description: 'No publish record of yours has this share id: a plain official lookup' }),
});

export const PublishStatusJson = Type.Union([
  Type.Composite([PublishRecordJson, Type.Object({ matchedRecord: Type.Literal(true) })]),
  OfficialLookupJson,
]);

export const ListRecordsQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ maxLength: 64, description: 'nextCursor of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, default 20' })),
    status: Type.Optional(literals(PUBLISH_STATUSES)),
    seatId: Type.Optional(Type.String({ maxLength: 64 })),
    fileId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Only shop publishes of this fileId: find an earlier attempt before retrying a shop publish',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListRecordsQuery = Static<typeof ListRecordsQuery>;

export const RecordPageJson = Type.Object({
  items: Type.Array(PublishRecordJson),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
});

export const HashtagQuery = Type.Object(
  {
    account: Account,
    keyword: Type.String({ minLength: 1, maxLength: 100 }),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 10 })),
  },
  { additionalProperties: false },
);
export type HashtagQuery = Static<typeof HashtagQuery>;

export const LocationQuery = Type.Object(
  { account: Account, searchQuery: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
export type LocationQuery = Static<typeof LocationQuery>;

/** An official answer flattened to camelCase fields (docs/decisions/publishing.md, "Fields beyond the spec's mapping tables"). */
export const PassThroughJson = Type.Object({}, { additionalProperties: true });

export const ShopPublishBody = Type.Object(
  {
    fileId: Type.String({ minLength: 1, maxLength: 200, description: 'From a shop track upload (POST /v1/videos); consumed by one post' }),
    accountId: Type.String({ minLength: 1, maxLength: 200, description: 'The bound shop account (creatorUserOpenId)' }),
    productId: Type.String({ minLength: 1, maxLength: 200, description: 'From POST /v1/products/query' }),
    title: Type.String({
      minLength: 1,
      maxLength: MAX_SHOP_TITLE_UTF16 * 2,
      description: `The video's text, at most ${MAX_SHOP_TITLE_UTF16} UTF-16 code units`,
    }),
    isAiGenerated: Bool('AI-generated content label'),
    coverUri: Text(2048, 'A cover from POST /v1/photos; wins over coverTimestampMs'),
    coverTimestampMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'A cover frame, in milliseconds' }),
    ),
    musicId: Text(200, 'From POST /v1/music/search'),
    productTitle: Text(200, "Anchor text: at most 30 characters, no punctuation or emoji; the product's own title, made fit, when absent"),
  },
  { additionalProperties: false },
);
export type ShopPublishBody = Static<typeof ShopPublishBody>;

/**
 * The shop publish answer: the record, except that videoId is the official video id to poll
 * /v1/publish/tts/status with, as the spec's polling rule reads it; the library id moves to
 * libraryVideoId. The record itself (records list, status queries) keeps videoId = library id.
 */
export const ShopPublishJson = Type.Composite([
  Type.Omit(PublishRecordJson, ['videoId']),
  Type.Object({
    videoId: Type.String({
      description:
        "What to poll GET /v1/publish/tts/status?videoId= with (the record's shareId): the shop's video id once known, the service's handle (`vpsh_…`) until then",
    }),
    libraryVideoId: Nullable(Type.String({ description: 'The video library record id the file id came from' })),
    earlierAttempt: Type.Boolean({
      description: "The file id was published before: this is that attempt's record, and nothing was sent again",
    }),
  }),
]);
export type ShopPublishJson = Static<typeof ShopPublishJson>;

export const ShopPublishStatusQuery = Type.Object(
  {
    videoId: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "The shop's video id or the service's handle (`vpsh_…`): the shareId of the shop publish record",
    }),
    accountId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Required only when videoId matches none of your publish records' }),
    ),
  },
  { additionalProperties: false },
);
export type ShopPublishStatusQuery = Static<typeof ShopPublishStatusQuery>;
