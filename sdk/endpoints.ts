/**
 * Every /v1 route the client calls, grouped as the client's methods are: client.videos.list is
 * ENDPOINTS.videos.list. The types come from the gateway's route schemas (type-only imports), so a
 * field added to a route is a field of the client; a test checks that every route is here. The one
 * route left out is GET /v1/events/stream, a Server-Sent Events stream rather than one envelope.
 */
import type {
  CommentCreateBody,
  CommentCreatedJson,
  CommentDeleteBody,
  CommentHideBody,
  CommentLikeBody,
  CommentListQuery,
  CommentPageJson,
  CommentReplyCreateBody,
  CommentReplyListQuery,
  EmptyJson,
} from '../gateway/schemas/comments';
import type {
  DeliveryPageJson,
  EventIdParams,
  EventJson,
  EventPageJson,
  ListDeliveriesQuery,
  ListEventsQuery,
  RedeliverBody,
  RedeliveriesJson,
} from '../gateway/schemas/events';
import type {
  AccountInsightsJson,
  AccountInsightsQuery,
  AccountQuery,
  BenchmarkJson,
  BenchmarkQuery,
  LegacyPostStatsQuery,
  VideoInsightsJson,
  VideoInsightsQuery,
  VideoSettingsJson,
} from '../gateway/schemas/insights';
import type {
  AutoMessageCreateBody,
  AutoMessageDeleteBody,
  AutoMessageGetBody,
  AutoMessageSortBody,
  AutoMessageStatusBody,
  AutoMessageUpdateBody,
  CapabilitiesQuery,
  ConversationListQuery,
  FlatJson,
  MediaDownloadBody,
  MediaDownloadJson,
  MediaUploadJson,
  MessageListQuery,
  MessageMediaUploadFields,
  SendMessageBody,
} from '../gateway/schemas/messages';
import type { PrecheckIdParams, PrecheckJson, SubmitPrecheckBody } from '../gateway/schemas/prechecks';
import type {
  HashtagQuery,
  LegacyPublishStatusQuery,
  LegacyVideoPublishBody,
  ListRecordsQuery,
  LocationQuery,
  PassThroughJson,
  PhotoPublishBody,
  PublishRecordJson,
  PublishStatusJson,
  PublishStatusQuery,
  RecordPageJson,
  ShopPublishBody,
  ShopPublishJson,
  ShopPublishStatusQuery,
  VideoPublishBody,
} from '../gateway/schemas/publishing';
import type { SeatJson } from '../gateway/schemas/seats';
import type {
  MusicPageJson,
  MusicSearchBody,
  PhotoJson,
  PhotoUploadFields,
  ProductPageJson,
  ProductQueryBody,
} from '../gateway/schemas/shop-catalog';
import type {
  ListVideosQuery,
  MultipartUploadFields,
  RemoteUploadBody,
  UploadedVideoJson,
  VideoIdParams,
  VideoJson,
  VideoPageJson,
} from '../gateway/schemas/videos';
import type {
  CreatedWebhookEndpointJson,
  CreateWebhookEndpointBody,
  DeletedEndpointJson,
  EmptyActionBody,
  EndpointIdParams,
  ListedWebhookEndpointJson,
  RecoverEndpointBody,
  RecoveredJson,
  RotateSecretBody,
  TestEventJson,
  UpdateWebhookEndpointBody,
  WebhookEndpointJson,
} from '../gateway/schemas/webhook-endpoints';
import { endpoint, type FileAnswer, type Json, type UploadFile } from './endpoint';

const BUSINESS = '/v1/vplat/v1.3/business';
const COMMENT = `${BUSINESS}/comment`;
const MESSAGE = `${BUSINESS}/message`;

type Items<T> = { items: T[] };
/** The text fields of a multipart form: its schema without the file part, which is `file`. */
type Fields<T> = Omit<T, 'file'>;

export const ENDPOINTS = {
  seats: {
    list: endpoint<{ data: Items<Json<typeof SeatJson>> }>('GET', '/v1/seats'),
  },
  videos: {
    list: endpoint<{ query?: Json<typeof ListVideosQuery>; data: Json<typeof VideoPageJson> }>('GET', '/v1/videos'),
    get: endpoint<{ params: Json<typeof VideoIdParams>; data: Json<typeof VideoJson> }>('GET', '/v1/videos/:id'),
    delete: endpoint<{ params: Json<typeof VideoIdParams>; data: Json<typeof VideoJson> }>('DELETE', '/v1/videos/:id'),
    /** A direct upload: the file streams from disk (or memory, or a stream) with progress. */
    upload: endpoint<{ fields: Fields<Json<typeof MultipartUploadFields>>; file: UploadFile; data: Json<typeof UploadedVideoJson> }>(
      'POST',
      '/v1/videos',
      { upload: true },
    ),
    /** A remote upload: the service fetches sourceUrl in a workflow. */
    uploadFromUrl: endpoint<{ body: Json<typeof RemoteUploadBody>; data: Json<typeof UploadedVideoJson> }>('POST', '/v1/videos'),
  },
  publish: {
    video: endpoint<{ body: Json<typeof VideoPublishBody>; data: Json<typeof PublishRecordJson> }>('POST', `${BUSINESS}/video/publish`),
    /** Deprecated (removal in 1.6.x): the older route, with accountId. */
    videoLegacy: endpoint<{ body: Json<typeof LegacyVideoPublishBody>; data: Json<typeof PublishRecordJson> }>('POST', '/v1/publish/vplat'),
    photo: endpoint<{ body: Json<typeof PhotoPublishBody>; data: Json<typeof PublishRecordJson> }>('POST', `${BUSINESS}/photo/publish`),
    /** A shop post; a retry first asks /v1/publish/records for the earlier attempt. */
    shop: endpoint<{ body: Json<typeof ShopPublishBody>; data: Json<typeof ShopPublishJson> }>('POST', '/v1/publish/tts', {
      checkEarlierAttempt: true,
    }),
    status: endpoint<{ query: Json<typeof PublishStatusQuery>; data: Json<typeof PublishStatusJson> }>('GET', `${BUSINESS}/publish/status`),
    /** Deprecated (removal in 1.6.x): use status with publishId. */
    statusLegacy: endpoint<{ query: Json<typeof LegacyPublishStatusQuery>; data: Json<typeof PublishStatusJson> }>(
      'GET',
      '/v1/publish/vplat/status',
    ),
    shopStatus: endpoint<{ query: Json<typeof ShopPublishStatusQuery>; data: Json<typeof PublishStatusJson> }>(
      'GET',
      '/v1/publish/tts/status',
    ),
    records: endpoint<{ query?: Json<typeof ListRecordsQuery>; data: Json<typeof RecordPageJson> }>('GET', '/v1/publish/records'),
    hashtags: endpoint<{ query: Json<typeof HashtagQuery>; data: Json<typeof PassThroughJson> }>('GET', `${BUSINESS}/hashtag/suggestion`),
    locations: endpoint<{ query: Json<typeof LocationQuery>; data: Json<typeof PassThroughJson> }>('GET', `${BUSINESS}/publish/location`),
  },
  prechecks: {
    /** Counts against the account's daily pre-check quota (2002 when used up). */
    create: endpoint<{ body: Json<typeof SubmitPrecheckBody>; data: Json<typeof PrecheckJson> }>('POST', '/v1/publish/tts/precheck'),
    get: endpoint<{ params: Json<typeof PrecheckIdParams>; data: Json<typeof PrecheckJson> }>('GET', '/v1/publish/tts/precheck/:taskId'),
  },
  shop: {
    products: endpoint<{ body: Json<typeof ProductQueryBody>; data: Json<typeof ProductPageJson> }>('POST', '/v1/products/query'),
    music: endpoint<{ body: Json<typeof MusicSearchBody>; data: Json<typeof MusicPageJson> }>('POST', '/v1/music/search'),
    /** A cover photo for a shop post: its photoUri is the post's coverUri. */
    photos: endpoint<{ fields: Fields<Json<typeof PhotoUploadFields>>; file: UploadFile; data: Json<typeof PhotoJson> }>(
      'POST',
      '/v1/photos',
      { upload: true },
    ),
  },
  comments: {
    list: endpoint<{ query: Json<typeof CommentListQuery>; data: Json<typeof CommentPageJson> }>('GET', `${COMMENT}/list`),
    replies: endpoint<{ query: Json<typeof CommentReplyListQuery>; data: Json<typeof CommentPageJson> }>('GET', `${COMMENT}/reply/list`),
    create: endpoint<{ body: Json<typeof CommentCreateBody>; data: Json<typeof CommentCreatedJson> }>('POST', `${COMMENT}/create`),
    reply: endpoint<{ body: Json<typeof CommentReplyCreateBody>; data: Json<typeof CommentCreatedJson> }>(
      'POST',
      `${COMMENT}/reply/create`,
    ),
    like: endpoint<{ body: Json<typeof CommentLikeBody>; data: Json<typeof EmptyJson> }>('POST', `${COMMENT}/like`),
    hide: endpoint<{ body: Json<typeof CommentHideBody>; data: Json<typeof EmptyJson> }>('POST', `${COMMENT}/hide`),
    delete: endpoint<{ body: Json<typeof CommentDeleteBody>; data: Json<typeof EmptyJson> }>('POST', `${COMMENT}/delete`),
  },
  messages: {
    conversations: endpoint<{ query: Json<typeof ConversationListQuery>; data: Json<typeof FlatJson> }>(
      'GET',
      `${MESSAGE}/conversation/list`,
    ),
    list: endpoint<{ query: Json<typeof MessageListQuery>; data: Json<typeof FlatJson> }>('GET', `${MESSAGE}/content/list`),
    send: endpoint<{ body: Json<typeof SendMessageBody>; data: Json<typeof FlatJson> }>('POST', `${MESSAGE}/send`),
    capabilities: endpoint<{ query: Json<typeof CapabilitiesQuery>; data: Json<typeof FlatJson> }>('GET', `${MESSAGE}/capabilities/get`),
    /** An image for imageMediaId of send (JPG or PNG, at most 3 MB). */
    uploadMedia: endpoint<{ fields: Fields<Json<typeof MessageMediaUploadFields>>; file: UploadFile; data: Json<typeof MediaUploadJson> }>(
      'POST',
      `${MESSAGE}/media/upload`,
      { upload: true },
    ),
    downloadMedia: endpoint<{ body: Json<typeof MediaDownloadBody>; data: Json<typeof MediaDownloadJson> }>(
      'POST',
      `${MESSAGE}/media/download`,
    ),
    /** The media's bytes, fetched by the service with the account's token. */
    fetchMedia: endpoint<{ query: Json<typeof MediaDownloadBody>; data: FileAnswer }>('GET', `${MESSAGE}/media/content`, {
      answersFile: true,
    }),
    autoMessages: {
      get: endpoint<{ body: Json<typeof AutoMessageGetBody>; data: Json<typeof FlatJson> }>('POST', `${MESSAGE}/auto_message/get`),
      create: endpoint<{ body: Json<typeof AutoMessageCreateBody>; data: Json<typeof FlatJson> }>('POST', `${MESSAGE}/auto_message/create`),
      update: endpoint<{ body: Json<typeof AutoMessageUpdateBody>; data: Json<typeof FlatJson> }>('POST', `${MESSAGE}/auto_message/update`),
      delete: endpoint<{ body: Json<typeof AutoMessageDeleteBody>; data: Json<typeof FlatJson> }>('POST', `${MESSAGE}/auto_message/delete`),
      sort: endpoint<{ body: Json<typeof AutoMessageSortBody>; data: Json<typeof FlatJson> }>('POST', `${MESSAGE}/auto_message/sort`),
      setStatus: endpoint<{ body: Json<typeof AutoMessageStatusBody>; data: Json<typeof FlatJson> }>(
        'POST',
        `${MESSAGE}/auto_message/status/update`,
      ),
    },
  },
  insights: {
    account: endpoint<{ query: Json<typeof AccountInsightsQuery>; data: Json<typeof AccountInsightsJson> }>('GET', `${BUSINESS}/get`),
    videos: endpoint<{ query: Json<typeof VideoInsightsQuery>; data: Json<typeof VideoInsightsJson> }>('GET', `${BUSINESS}/video/list`),
    /** Deprecated (removal in 1.6.x): use videos with videoIds. */
    postStatsLegacy: endpoint<{ query: Json<typeof LegacyPostStatsQuery>; data: Json<typeof VideoInsightsJson> }>(
      'GET',
      '/v1/publish/stats',
    ),
    benchmark: endpoint<{ query: Json<typeof BenchmarkQuery>; data: Json<typeof BenchmarkJson> }>('GET', `${BUSINESS}/benchmark`),
    videoSettings: endpoint<{ query: Json<typeof AccountQuery>; data: Json<typeof VideoSettingsJson> }>(
      'GET',
      `${BUSINESS}/video/settings`,
    ),
  },
  webhooks: {
    create: endpoint<{ body: Json<typeof CreateWebhookEndpointBody>; data: Json<typeof CreatedWebhookEndpointJson> }>(
      'POST',
      '/v1/webhook-endpoints',
    ),
    list: endpoint<{ data: Items<Json<typeof ListedWebhookEndpointJson>> }>('GET', '/v1/webhook-endpoints'),
    get: endpoint<{ params: Json<typeof EndpointIdParams>; data: Json<typeof ListedWebhookEndpointJson> }>(
      'GET',
      '/v1/webhook-endpoints/:id',
    ),
    /** Changes the fields given (url, eventTypes, description, enabled); the secret stays. */
    update: endpoint<{
      params: Json<typeof EndpointIdParams>;
      body: Json<typeof UpdateWebhookEndpointBody>;
      data: Json<typeof ListedWebhookEndpointJson>;
    }>('PATCH', '/v1/webhook-endpoints/:id'),
    delete: endpoint<{ params: Json<typeof EndpointIdParams>; data: Json<typeof DeletedEndpointJson> }>(
      'DELETE',
      '/v1/webhook-endpoints/:id',
    ),
    /** The new secret is in the answer, once; `oldSecretExpiresInSeconds: 0` stops the old one signing at once. */
    rotateSecret: endpoint<{
      params: Json<typeof EndpointIdParams>;
      body?: Json<typeof RotateSecretBody>;
      data: Json<typeof CreatedWebhookEndpointJson>;
    }>('POST', '/v1/webhook-endpoints/:id/rotate-secret'),
    enable: endpoint<{
      params: Json<typeof EndpointIdParams>;
      body?: Json<typeof EmptyActionBody>;
      data: Json<typeof WebhookEndpointJson>;
    }>('POST', '/v1/webhook-endpoints/:id/enable'),
    test: endpoint<{ params: Json<typeof EndpointIdParams>; body?: Json<typeof EmptyActionBody>; data: Json<typeof TestEventJson> }>(
      'POST',
      '/v1/webhook-endpoints/:id/test',
    ),
    recover: endpoint<{ params: Json<typeof EndpointIdParams>; body: Json<typeof RecoverEndpointBody>; data: Json<typeof RecoveredJson> }>(
      'POST',
      '/v1/webhook-endpoints/:id/recover',
    ),
    deliveries: endpoint<{
      params: Json<typeof EndpointIdParams>;
      query?: Json<typeof ListDeliveriesQuery>;
      data: Json<typeof DeliveryPageJson>;
    }>('GET', '/v1/webhook-endpoints/:id/deliveries'),
  },
  events: {
    list: endpoint<{ query?: Json<typeof ListEventsQuery>; data: Json<typeof EventPageJson> }>('GET', '/v1/events'),
    get: endpoint<{ params: Json<typeof EventIdParams>; data: Json<typeof EventJson> }>('GET', '/v1/events/:id'),
    redeliver: endpoint<{ params: Json<typeof EventIdParams>; body?: Json<typeof RedeliverBody>; data: Json<typeof RedeliveriesJson> }>(
      'POST',
      '/v1/events/:id/redeliver',
    ),
    deliveries: endpoint<{
      params: Json<typeof EventIdParams>;
      query?: Json<typeof ListDeliveriesQuery>;
      data: Json<typeof DeliveryPageJson>;
    }>('GET', '/v1/events/:id/deliveries'),
  },
  deliveries: {
    /** Every endpoint's deliveries, newest first; the same filters as one endpoint's log. */
    list: endpoint<{ query?: Json<typeof ListDeliveriesQuery>; data: Json<typeof DeliveryPageJson> }>('GET', '/v1/deliveries'),
  },
} as const;
