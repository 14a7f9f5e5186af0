import { Type, type Static } from '@sinclair/typebox';
import { MAX_URL_LENGTH } from '../../core/net/address-policy';
import { VIDEO_STATUSES } from '../../core/vocabulary';
import { NullableTimestamp, Timestamp } from './common';

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(t: T) => Type.Union([t, Type.Null()]);

export const VideoStatusJson = Type.Union(
  VIDEO_STATUSES.map((s) => Type.Literal(s)),
  {
    description:
      'uploading: bytes arriving; processing: being fetched or handed to the shop; available: usable for publishing; failed: see failureReason; expired: the URL lifetime ended or the record was deleted',
  },
);

/** A video library record, camelCase; absent values are null. */
export const VideoJson = Type.Object({
  id: Type.String({ description: 'Video library record id' }),
  seatId: Type.String(),
  track: Type.Union([Type.Literal('video'), Type.Literal('shop')], { description: 'video: yields videoUrl; shop: yields fileId' }),
  status: VideoStatusJson,
  source: Type.Union([Type.Literal('multipart'), Type.Literal('remote')]),
  sourceUrl: Nullable(Type.String()),
  fileName: Nullable(Type.String()),
  container: Nullable(Type.String({ description: 'Recognised from the bytes: MP4, MOV, 3GP, WEBM, MKV, AVI, FLV, WMV, MPEG' })),
  sizeBytes: Nullable(Type.Integer()),
  sha256: Nullable(Type.String({ description: 'Lower-case hex SHA-256 of the bytes' })),
  videoUrl: Nullable(Type.String({ description: 'Video track: signed URL of the file, while status is available' })),
  fileId: Nullable(Type.String({ description: 'Shop track: single-use file id for a shop post' })),
  expiresAt: NullableTimestamp,
  failureReason: Nullable(Type.String()),
  createdAt: Timestamp,
  deletedAt: NullableTimestamp,
  workflowId: Nullable(Type.String({ description: 'The Temporal workflow carrying a remote or shop track upload' })),
  probe: Type.Union(
    [
      Type.Object({
        durationSeconds: Type.Union([Type.Number(), Type.Null()]),
        width: Nullable(Type.Integer()),
        height: Nullable(Type.Integer()),
        videoCodec: Nullable(Type.String()),
        audioCodec: Nullable(Type.String()),
      }),
      Type.Null(),
    ],
    {
      description: 'What the headers of an MP4, MOV, 3GP, WebM or Matroska file say; null for other containers or an unreadable header',
    },
  ),
});
export type VideoJson = Static<typeof VideoJson>;

/** The upload response: the record and where to follow it. */
export const UploadedVideoJson = Type.Composite([
  VideoJson,
  Type.Object({
    statusPath: Type.String({ description: 'GET this path to follow the upload (status, then videoUrl or fileId)' }),
    next: Nullable(
      Type.String({
        description:
          'Null once the upload has finished. While status is processing (a fetch or shop hand-off that outlasted the wait of this request), what to do: poll statusPath until status is available or failed, or wait for the event vplat.video.available or vplat.video.failed of this record',
      }),
    ),
  }),
]);
export type UploadedVideoJson = Static<typeof UploadedVideoJson>;

export const VideoPageJson = Type.Object({
  items: Type.Array(VideoJson),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next page; null on the last page' }),
});

/** Both optional when the caller has exactly one bound seat: the upload then goes to it. */
const SeatOrAccount = {
  seatId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The seat to upload for; or account. Either may be left out when you have exactly one bound seat',
    }),
  ),
  account: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'A bound account of one of your seats: businessId, username or creatorUserOpenId; or seatId. Either may be left out when you have exactly one bound seat',
    }),
  ),
};

export const RemoteUploadBody = Type.Object(
  {
    sourceUrl: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'Public https URL the service fetches the video from' }),
    ...SeatOrAccount,
  },
  { additionalProperties: false },
);
export type RemoteUploadBody = Static<typeof RemoteUploadBody>;

/** The text fields of a multipart upload; they come before the `file` part. */
export const MultipartUploadFields = Type.Object(
  {
    ...SeatOrAccount,
    file: Type.String({ format: 'binary', description: 'The video file; MP4, MOV, WEBM and the other containers the platforms take' }),
  },
  { additionalProperties: false },
);

export const ListVideosQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, default 20' })),
    status: Type.Optional(VideoStatusJson),
    seatId: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type ListVideosQuery = Static<typeof ListVideosQuery>;

export const VideoIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
export type VideoIdParams = Static<typeof VideoIdParams>;

export const MediaQuery = Type.Object(
  {
    expires: Type.Integer({ minimum: 0, maximum: 99_999_999_999 }),
    signature: Type.String({ minLength: 1, maxLength: 128 }),
  },
  { additionalProperties: false },
);
export type MediaQuery = Static<typeof MediaQuery>;
