/**
 * Every /v1 route the client calls, grouped as the client's methods are: client.videos.list is
 * ENDPOINTS.videos.list. The types come from the gateway's route schemas (type-only imports), so a
 * field added to a route is a field of the client; a test checks that every route is here.
 */
import type { EventJson } from '../gateway/schemas/events';
import type { EventPageJson, EventIdParams, ListEventsQuery, RedeliverBody, DeliveryJson, DeliveryPageJson, ListDeliveriesQuery } from '../gateway/schemas/events';
import type { LegacyVideoPublishBody, ListRecordsQuery, PhotoPublishBody, PublishRecordJson, PublishStatusJson, PublishStatusQuery, LegacyPublishStatusQuery, RecordPageJson, ShopPublishBody, ShopPublishJson, ShopPublishStatusQuery, VideoPublishBody } from '../gateway/schemas/publishing';
import type { SeatJson } from '../gateway/schemas/seats';
import type { ListVideosQuery, MultipartUploadFields, RemoteUploadBody, UploadedVideoJson, VideoIdParams, VideoJson, VideoPageJson } from '../gateway/schemas/videos';
import type { CreateWebhookEndpointBody, CreatedWebhookEndpointJson, EndpointIdParams, WebhookEndpointJson } from '../gateway/schemas/webhook-endpoints';
import { endpoint, type Json, type UploadFile } from './endpoint';

const BUSINESS = '/v1/vplat/v1.3/business';

type Items<T> = { items: T[] };

export const ENDPOINTS = {
  seats: {
    list: endpoint<{ data: Items<Json<typeof SeatJson>> }>('GET', '/v1/seats'),
  },
  videos: {
    list: endpoint<{ query?: Json<typeof ListVideosQuery>; data: Json<typeof VideoPageJson> }>('GET', '/v1/videos'),
    get: endpoint<{ params: Json<typeof VideoIdParams>; data: Json<typeof VideoJson> }>('GET', '/v1/videos/:id'),
    delete: endpoint<{ params: Json<typeof VideoIdParams>; data: Json<typeof VideoJson> }>('DELETE', '/v1/videos/:id'),
    /** A direct upload: the file streams from disk (or memory, or a stream) with progress. */
    upload: endpoint<{ fields: Omit<Json<typeof MultipartUploadFields>, 'file'>; file: UploadFile; data: Json<typeof UploadedVideoJson> }>('POST', '/v1/videos', { upload: true }),
    /** A remote upload: the service fetches sourceUrl in a workflow. */
    uploadFromUrl: endpoint<{ body: Json<typeof RemoteUploadBody>; data: Json<typeof UploadedVideoJson> }>('POST', '/v1/videos'),
  },
  publish: {
    video: endpoint<{ body: Json<typeof VideoPublishBody>; data: Json<typeof PublishRecordJson> }>('POST', `${BUSINESS}/video/publish`),
    /** Deprecated (removal in 1.6.x): the older route, with accountId. */
    videoLegacy: endpoint<{ body: Json<typeof LegacyVideoPublishBody>; data: Json<typeof PublishRecordJson> }>('POST', '/v1/publish/vplat'),
    photo: endpoint<{ body: Json<typeof PhotoPublishBody>; data: Json<typeof PublishRecordJson> }>('POST', `${BUSINESS}/photo/publish`),
    /** A shop post; a retry first asks /v1/publish/records for the earlier attempt. */
    shop: endpoint<{ body: Json<typeof ShopPublishBody>; data: Json<typeof ShopPublishJson> }>('POST', '/v1/publish/tts', { checkEarlierAttempt: true }),
    status: endpoint<{ query: Json<typeof PublishStatusQuery>; data: Json<typeof PublishStatusJson> }>('GET', `${BUSINESS}/publish/status`),
    /** Deprecated (removal in 1.6.x): use status with publishId. */
    statusLegacy: endpoint<{ query: Json<typeof LegacyPublishStatusQuery>; data: Json<typeof PublishStatusJson> }>('GET', '/v1/publish/vplat/status'),
    shopStatus: endpoint<{ query: Json<typeof ShopPublishStatusQuery>; data: Json<typeof PublishStatusJson> }>('GET', '/v1/publish/tts/status'),
    records: endpoint<{ query?: Json<typeof ListRecordsQuery>; data: Json<typeof RecordPageJson> }>('GET', '/v1/publish/records'),
  },
  webhooks: {
    create: endpoint<{ body: Json<typeof CreateWebhookEndpointBody>; data: Json<typeof CreatedWebhookEndpointJson> }>('POST', '/v1/webhook-endpoints'),
    list: endpoint<{ data: Items<Json<typeof WebhookEndpointJson>> }>('GET', '/v1/webhook-endpoints'),
    delete: endpoint<{ params: Json<typeof EndpointIdParams>; data: { id: string; deleted: true } }>('DELETE', '/v1/webhook-endpoints/:id'),
  },
  events: {
    list: endpoint<{ query?: Json<typeof ListEventsQuery>; data: Json<typeof EventPageJson> }>('GET', '/v1/events'),
    get: endpoint<{ params: Json<typeof EventIdParams>; data: Json<typeof EventJson> }>('GET', '/v1/events/:id'),
    redeliver: endpoint<{ params: Json<typeof EventIdParams>; body?: Json<typeof RedeliverBody>; data: Items<Json<typeof DeliveryJson>> }>('POST', '/v1/events/:id/redeliver'),
    deliveries: endpoint<{ params: Json<typeof EventIdParams>; query?: Json<typeof ListDeliveriesQuery>; data: Json<typeof DeliveryPageJson> }>('GET', '/v1/events/:id/deliveries'),
  },
} as const;
