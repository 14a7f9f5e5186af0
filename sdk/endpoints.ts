/**
 * Every /v1 route the client calls, grouped as the client's methods are: client.videos.list is
 * ENDPOINTS.videos.list. The types are api-types.ts, generated from the gateway's route schemas, so a
 * field added to a route is a field of the client; a test checks that every route is here. The one
 * route left out is GET /v1/events/stream, a Server-Sent Events stream rather than one envelope.
 */
import type {
  AccountInsightsJson,
  AccountInsightsQuery,
  AccountQuery,
  AutoMessageCreateBody,
  AutoMessageDeleteBody,
  AutoMessageGetBody,
  AutoMessageSortBody,
  AutoMessageStatusBody,
  AutoMessageUpdateBody,
  BenchmarkJson,
  BenchmarkQuery,
  CapabilitiesQuery,
  CommentCreateBody,
  CommentCreatedJson,
  CommentDeleteBody,
  CommentHideBody,
  CommentLikeBody,
  CommentListQuery,
  CommentPageJson,
  CommentReplyCreateBody,
  CommentReplyListQuery,
  ConversationListQuery,
  CreatedWebhookEndpointJson,
  CreateWebhookEndpointBody,
  DeletedEndpointJson,
  DeliveryPageJson,
  EmptyActionBody,
  EmptyJson,
  EndpointIdParams,
  EventIdParams,
  EventJson,
  EventPageJson,
  FlatJson,
  HashtagQuery,
  LegacyPostStatsQuery,
  LegacyPublishStatusQuery,
  LegacyVideoPublishBody,
  ListDeliveriesQuery,
  ListedWebhookEndpointJson,
  ListEventsQuery,
  ListRecordsQuery,
  ListVideosQuery,
  LocationQuery,
  MediaDownloadBody,
  MediaDownloadJson,
  MediaUploadJson,
  MessageListQuery,
  MessageMediaUploadFields,
  MultipartUploadFields,
  MusicPageJson,
  MusicSearchBody,
  PassThroughJson,
  PhotoJson,
  PhotoPublishBody,
  PhotoUploadFields,
  PrecheckIdParams,
  PrecheckJson,
  ProductPageJson,
  ProductQueryBody,
  PublishRecordJson,
  PublishStatusJson,
  PublishStatusQuery,
  RecordPageJson,
  RecoveredJson,
  RecoverEndpointBody,
  RedeliverBody,
  RedeliveriesJson,
  RemoteUploadBody,
  RotateSecretBody,
  SeatJson,
  SendMessageBody,
  ShopPublishBody,
  ShopPublishJson,
  ShopPublishStatusQuery,
  SubmitPrecheckBody,
  TestEventJson,
  UpdateWebhookEndpointBody,
  UploadedVideoJson,
  VideoIdParams,
  VideoInsightsJson,
  VideoInsightsQuery,
  VideoJson,
  VideoPageJson,
  VideoPublishBody,
  VideoSettingsJson,
  WebhookEndpointJson,
} from './api-types';
import { endpoint, type FileAnswer, type UploadFile } from './endpoint';

const BUSINESS = '/v1/vplat/v1.3/business';
const COMMENT = `${BUSINESS}/comment`;
const MESSAGE = `${BUSINESS}/message`;

type Items<T> = { items: T[] };
/** The text fields of a multipart form: its schema without the file part, which is `file`. */
type Fields<T> = Omit<T, 'file'>;

export const ENDPOINTS = {
  seats: {
    list: endpoint<{ data: Items<SeatJson> }>('GET', '/v1/seats'),
  },
  videos: {
    list: endpoint<{ query?: ListVideosQuery; data: VideoPageJson }>('GET', '/v1/videos'),
    get: endpoint<{ params: VideoIdParams; data: VideoJson }>('GET', '/v1/videos/:id'),
    delete: endpoint<{ params: VideoIdParams; data: VideoJson }>('DELETE', '/v1/videos/:id'),
    /** A direct upload: the file streams from disk (or memory, or a stream) with progress. */
    upload: endpoint<{ fields: Fields<MultipartUploadFields>; file: UploadFile; data: UploadedVideoJson }>('POST', '/v1/videos', {
      upload: true,
    }),
    /** A remote upload: the service fetches sourceUrl in a workflow. */
    uploadFromUrl: endpoint<{ body: RemoteUploadBody; data: UploadedVideoJson }>('POST', '/v1/videos'),
  },
  publish: {
    video: endpoint<{ body: VideoPublishBody; data: PublishRecordJson }>('POST', `${BUSINESS}/video/publish`),
    /** Deprecated (removal in 1.6.x): the older route, with accountId. */
    videoLegacy: endpoint<{ body: LegacyVideoPublishBody; data: PublishRecordJson }>('POST', '/v1/publish/vplat'),
    photo: endpoint<{ body: PhotoPublishBody; data: PublishRecordJson }>('POST', `${BUSINESS}/photo/publish`),
    /** A shop post; a retry first asks /v1/publish/records for the earlier attempt. */
    shop: endpoint<{ body: ShopPublishBody; data: ShopPublishJson }>('POST', '/v1/publish/tts', {
      checkEarlierAttempt: true,
    }),
    status: endpoint<{ query: PublishStatusQuery; data: PublishStatusJson }>('GET', `${BUSINESS}/publish/status`),
    /** Deprecated (removal in 1.6.x): use status with publishId. */
    statusLegacy: endpoint<{ query: LegacyPublishStatusQuery; data: PublishStatusJson }>('GET', '/v1/publish/vplat/status'),
    shopStatus: endpoint<{ query: ShopPublishStatusQuery; data: PublishStatusJson }>('GET', '/v1/publish/tts/status'),
    records: endpoint<{ query?: ListRecordsQuery; data: RecordPageJson }>('GET', '/v1/publish/records'),
    hashtags: endpoint<{ query: HashtagQuery; data: PassThroughJson }>('GET', `${BUSINESS}/hashtag/suggestion`),
    locations: endpoint<{ query: LocationQuery; data: PassThroughJson }>('GET', `${BUSINESS}/publish/location`),
  },
  prechecks: {
    /** Counts against the account's daily pre-check quota (2002 when used up). */
    create: endpoint<{ body: SubmitPrecheckBody; data: PrecheckJson }>('POST', '/v1/publish/tts/precheck'),
    get: endpoint<{ params: PrecheckIdParams; data: PrecheckJson }>('GET', '/v1/publish/tts/precheck/:taskId'),
  },
  shop: {
    products: endpoint<{ body: ProductQueryBody; data: ProductPageJson }>('POST', '/v1/products/query'),
    music: endpoint<{ body: MusicSearchBody; data: MusicPageJson }>('POST', '/v1/music/search'),
    /** A cover photo for a shop post: its photoUri is the post's coverUri. */
    photos: endpoint<{ fields: Fields<PhotoUploadFields>; file: UploadFile; data: PhotoJson }>('POST', '/v1/photos', { upload: true }),
  },
  comments: {
    list: endpoint<{ query: CommentListQuery; data: CommentPageJson }>('GET', `${COMMENT}/list`),
    replies: endpoint<{ query: CommentReplyListQuery; data: CommentPageJson }>('GET', `${COMMENT}/reply/list`),
    create: endpoint<{ body: CommentCreateBody; data: CommentCreatedJson }>('POST', `${COMMENT}/create`),
    reply: endpoint<{ body: CommentReplyCreateBody; data: CommentCreatedJson }>('POST', `${COMMENT}/reply/create`),
    like: endpoint<{ body: CommentLikeBody; data: EmptyJson }>('POST', `${COMMENT}/like`),
    hide: endpoint<{ body: CommentHideBody; data: EmptyJson }>('POST', `${COMMENT}/hide`),
    delete: endpoint<{ body: CommentDeleteBody; data: EmptyJson }>('POST', `${COMMENT}/delete`),
  },
  messages: {
    conversations: endpoint<{ query: ConversationListQuery; data: FlatJson }>('GET', `${MESSAGE}/conversation/list`),
    list: endpoint<{ query: MessageListQuery; data: FlatJson }>('GET', `${MESSAGE}/content/list`),
    send: endpoint<{ body: SendMessageBody; data: FlatJson }>('POST', `${MESSAGE}/send`),
    capabilities: endpoint<{ query: CapabilitiesQuery; data: FlatJson }>('GET', `${MESSAGE}/capabilities/get`),
    /** An image for imageMediaId of send (JPG or PNG, at most 3 MB). */
    uploadMedia: endpoint<{ fields: Fields<MessageMediaUploadFields>; file: UploadFile; data: MediaUploadJson }>(
      'POST',
      `${MESSAGE}/media/upload`,
      { upload: true },
    ),
    downloadMedia: endpoint<{ body: MediaDownloadBody; data: MediaDownloadJson }>('POST', `${MESSAGE}/media/download`),
    /** The media's bytes, fetched by the service with the account's token. */
    fetchMedia: endpoint<{ query: MediaDownloadBody; data: FileAnswer }>('GET', `${MESSAGE}/media/content`, {
      answersFile: true,
    }),
    autoMessages: {
      get: endpoint<{ body: AutoMessageGetBody; data: FlatJson }>('POST', `${MESSAGE}/auto_message/get`),
      create: endpoint<{ body: AutoMessageCreateBody; data: FlatJson }>('POST', `${MESSAGE}/auto_message/create`),
      update: endpoint<{ body: AutoMessageUpdateBody; data: FlatJson }>('POST', `${MESSAGE}/auto_message/update`),
      delete: endpoint<{ body: AutoMessageDeleteBody; data: FlatJson }>('POST', `${MESSAGE}/auto_message/delete`),
      sort: endpoint<{ body: AutoMessageSortBody; data: FlatJson }>('POST', `${MESSAGE}/auto_message/sort`),
      setStatus: endpoint<{ body: AutoMessageStatusBody; data: FlatJson }>('POST', `${MESSAGE}/auto_message/status/update`),
    },
  },
  insights: {
    account: endpoint<{ query: AccountInsightsQuery; data: AccountInsightsJson }>('GET', `${BUSINESS}/get`),
    videos: endpoint<{ query: VideoInsightsQuery; data: VideoInsightsJson }>('GET', `${BUSINESS}/video/list`),
    /** Deprecated (removal in 1.6.x): use videos with videoIds. */
    postStatsLegacy: endpoint<{ query: LegacyPostStatsQuery; data: VideoInsightsJson }>('GET', '/v1/publish/stats'),
    benchmark: endpoint<{ query: BenchmarkQuery; data: BenchmarkJson }>('GET', `${BUSINESS}/benchmark`),
    videoSettings: endpoint<{ query: AccountQuery; data: VideoSettingsJson }>('GET', `${BUSINESS}/video/settings`),
  },
  webhooks: {
    create: endpoint<{ body: CreateWebhookEndpointBody; data: CreatedWebhookEndpointJson }>('POST', '/v1/webhook-endpoints'),
    list: endpoint<{ data: Items<ListedWebhookEndpointJson> }>('GET', '/v1/webhook-endpoints'),
    get: endpoint<{ params: EndpointIdParams; data: ListedWebhookEndpointJson }>('GET', '/v1/webhook-endpoints/:id'),
    /** Changes the fields given (url, eventTypes, description, enabled); the secret stays. */
    update: endpoint<{
      params: EndpointIdParams;
      body: UpdateWebhookEndpointBody;
      data: ListedWebhookEndpointJson;
    }>('PATCH', '/v1/webhook-endpoints/:id'),
    delete: endpoint<{ params: EndpointIdParams; data: DeletedEndpointJson }>('DELETE', '/v1/webhook-endpoints/:id'),
    /** The new secret is in the answer, once; `oldSecretExpiresInSeconds: 0` stops the old one signing at once. */
    rotateSecret: endpoint<{
      params: EndpointIdParams;
      body?: RotateSecretBody;
      data: CreatedWebhookEndpointJson;
    }>('POST', '/v1/webhook-endpoints/:id/rotate-secret'),
    enable: endpoint<{
      params: EndpointIdParams;
      body?: EmptyActionBody;
      data: WebhookEndpointJson;
    }>('POST', '/v1/webhook-endpoints/:id/enable'),
    test: endpoint<{ params: EndpointIdParams; body?: EmptyActionBody; data: TestEventJson }>('POST', '/v1/webhook-endpoints/:id/test'),
    recover: endpoint<{ params: EndpointIdParams; body: RecoverEndpointBody; data: RecoveredJson }>(
      'POST',
      '/v1/webhook-endpoints/:id/recover',
    ),
    deliveries: endpoint<{
      params: EndpointIdParams;
      query?: ListDeliveriesQuery;
      data: DeliveryPageJson;
    }>('GET', '/v1/webhook-endpoints/:id/deliveries'),
  },
  events: {
    list: endpoint<{ query?: ListEventsQuery; data: EventPageJson }>('GET', '/v1/events'),
    get: endpoint<{ params: EventIdParams; data: EventJson }>('GET', '/v1/events/:id'),
    redeliver: endpoint<{ params: EventIdParams; body?: RedeliverBody; data: RedeliveriesJson }>('POST', '/v1/events/:id/redeliver'),
    deliveries: endpoint<{
      params: EventIdParams;
      query?: ListDeliveriesQuery;
      data: DeliveryPageJson;
    }>('GET', '/v1/events/:id/deliveries'),
  },
  deliveries: {
    /** Every endpoint's deliveries, newest first; the same filters as one endpoint's log. */
    list: endpoint<{ query?: ListDeliveriesQuery; data: DeliveryPageJson }>('GET', '/v1/deliveries'),
  },
} as const;
