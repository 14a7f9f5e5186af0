import type { MessageInitShape } from '@bufbuild/protobuf';
import {
  PublishService,
  type GetPublishStatusResponse,
  type GetShopPublishStatusResponse,
  type PublishVideoRequestSchema,
} from '../../../gen/vps/publish/v1/publish_pb';
import { publishRecordJson, shopPublishJson } from '../../presenters/publishing';
import { deprecated, okEnvelope } from '../../schemas/common';
import {
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
} from '../../schemas/publishing';
import { defineRoute } from '../../rpc-route';
import { BUSINESS } from './paths';

/** Both publish routes carry the same post fields; only the account field's name differs. */
function videoPostRequest(
  body: Omit<VideoPublishBody, 'account'>,
  account: string,
  channel: 'v1.3' | 'legacy',
): MessageInitShape<typeof PublishVideoRequestSchema> {
  return {
    channel,
    account,
    videoUrl: body.videoUrl ?? '',
    videoId: body.videoId ?? '',
    caption: body.caption ?? '',
    isBrandOrganic: body.isBrandOrganic,
    isBrandedContent: body.isBrandedContent,
    disableComment: body.disableComment,
    disableDuet: body.disableDuet,
    disableStitch: body.disableStitch,
    thumbnailOffset: body.thumbnailOffset === undefined ? undefined : BigInt(body.thumbnailOffset),
    customThumbnailUrl: body.customThumbnailUrl ?? '',
    isAiGenerated: body.isAiGenerated,
    draft: body.draft ?? false,
    locationId: body.locationId ?? '',
    locationName: body.locationName ?? '',
    musicSoundId: body.musicSoundId ?? '',
    musicSoundVolume: body.musicSoundVolume,
    videoOriginalSoundVolume: body.videoOriginalSoundVolume,
  };
}

function statusData(res: GetPublishStatusResponse | GetShopPublishStatusResponse) {
  if (res.result.case === 'record') return { ...publishRecordJson(res.result.value), matchedRecord: true as const };
  const lookup = res.result.value!;
  return {
    publishId: lookup.publishId,
    status: lookup.status,
    officialStatus: lookup.officialStatus,
    postIds: [...lookup.postIds],
    failReason: lookup.status === 'publish_failed' ? lookup.reason || null : null,
    reason: lookup.reason || null,
    matchedRecord: false as const,
  };
}

const statusSchema = { response: { 200: okEnvelope(PublishStatusJson) } };

export const publishingRoutes = [
  defineRoute({
    method: 'POST',
    url: `${BUSINESS}/video/publish`,
    summary: 'Publish a video post; follow it with publish/status?publishId=<shareId>',
    rpc: PublishService.method.publishVideo,
    schema: { body: VideoPublishBody, response: { 200: okEnvelope(PublishRecordJson) } },
    toRequest: (req) => {
      const { account, ...post } = req.body;
      return videoPostRequest(post, account, 'v1.3');
    },
    toData: (res) => publishRecordJson(res.record!),
  }),
  defineRoute({
    method: 'POST',
    url: '/publish/vplat',
    summary: 'Deprecated (removal in 1.6.x): use POST /v1/vplat/v1.3/business/video/publish, with account instead of accountId',
    rpc: PublishService.method.publishVideo,
    schema: deprecated({ body: LegacyVideoPublishBody, response: { 200: okEnvelope(PublishRecordJson) } }),
    toRequest: (req) => {
      const { accountId, ...post } = req.body;
      return videoPostRequest(post, accountId, 'legacy');
    },
    toData: (res) => publishRecordJson(res.record!),
  }),
  defineRoute({
    method: 'POST',
    url: `${BUSINESS}/photo/publish`,
    summary: 'Publish a photo post of 1 to 35 images',
    rpc: PublishService.method.publishPhoto,
    schema: { body: PhotoPublishBody, response: { 200: okEnvelope(PublishRecordJson) } },
    toRequest: (req) => {
      const b = req.body;
      return {
        account: b.account,
        photoUrls: b.photoUrls,
        photoCoverIndex: b.photoCoverIndex,
        privacyLevel: b.privacyLevel,
        title: b.title ?? '',
        caption: b.caption ?? '',
        autoAddMusic: b.autoAddMusic,
        isBrandOrganic: b.isBrandOrganic,
        isBrandedContent: b.isBrandedContent,
        disableComment: b.disableComment,
        draft: b.draft ?? false,
        musicSoundId: b.musicSoundId ?? '',
        locationId: b.locationId ?? '',
        locationName: b.locationName ?? '',
      };
    },
    toData: (res) => publishRecordJson(res.record!),
  }),
  defineRoute({
    method: 'GET',
    url: `${BUSINESS}/publish/status`,
    summary: 'Publish status: refreshes and returns your record of the share id, or looks it up officially (then account is required)',
    rpc: PublishService.method.getPublishStatus,
    schema: { querystring: PublishStatusQuery, ...statusSchema },
    toRequest: (req) => {
      const q = req.query;
      return { publishId: q.publishId, account: q.account ?? '' };
    },
    toData: statusData,
  }),
  defineRoute({
    method: 'GET',
    url: '/publish/vplat/status',
    summary: 'Deprecated (removal in 1.6.x): use GET /v1/vplat/v1.3/business/publish/status?publishId=<shareId>',
    rpc: PublishService.method.getPublishStatus,
    schema: deprecated({ querystring: LegacyPublishStatusQuery, ...statusSchema }),
    toRequest: (req) => {
      const q = req.query;
      return { publishId: q.shareId, account: q.account ?? '' };
    },
    toData: statusData,
  }),
  defineRoute({
    method: 'GET',
    url: '/publish/records',
    summary: 'Publish records, newest first: a snapshot, not refreshed by listing',
    rpc: PublishService.method.listPublishRecords,
    schema: { querystring: ListRecordsQuery, response: { 200: okEnvelope(RecordPageJson) } },
    toRequest: (req) => {
      const q = req.query;
      return { cursor: q.cursor ?? '', limit: q.limit ?? 0, status: q.status ?? '', seatId: q.seatId ?? '', fileId: q.fileId ?? '' };
    },
    toData: (res) => ({ items: res.records.map(publishRecordJson), nextCursor: res.nextCursor || null }),
  }),
  defineRoute({
    method: 'POST',
    url: '/publish/tts',
    summary: 'Publish a product-linked video to the shop; a file id is consumed once, and a repeat answers with the earlier attempt',
    rpc: PublishService.method.publishShopVideo,
    schema: { body: ShopPublishBody, response: { 200: okEnvelope(ShopPublishJson) } },
    toRequest: (req) => {
      const b = req.body;
      return {
        fileId: b.fileId,
        accountId: b.accountId,
        productId: b.productId,
        title: b.title,
        isAiGenerated: b.isAiGenerated,
        coverUri: b.coverUri ?? '',
        coverTimestampMs: b.coverTimestampMs === undefined ? undefined : BigInt(b.coverTimestampMs),
        musicId: b.musicId ?? '',
        productTitle: b.productTitle ?? '',
      };
    },
    toData: (res) => shopPublishJson(res.record!, res.earlierAttempt),
  }),
  defineRoute({
    method: 'GET',
    url: '/publish/tts/status',
    summary: 'Shop publish status: refreshes your record of the official video id, or looks it up (then accountId is required)',
    rpc: PublishService.method.getShopPublishStatus,
    schema: { querystring: ShopPublishStatusQuery, ...statusSchema },
    toRequest: (req) => {
      const q = req.query;
      return { videoId: q.videoId, accountId: q.accountId ?? '' };
    },
    toData: statusData,
  }),
  defineRoute({
    method: 'GET',
    url: `${BUSINESS}/hashtag/suggestion`,
    summary: 'Hashtag suggestions for a keyword, an aid for writing captions',
    rpc: PublishService.method.suggestHashtags,
    schema: { querystring: HashtagQuery, response: { 200: okEnvelope(PassThroughJson) } },
    toRequest: (req) => {
      const q = req.query;
      return { account: q.account, keyword: q.keyword, language: q.language ?? '' };
    },
    toData: (res) => res.data ?? {},
  }),
  defineRoute({
    method: 'GET',
    url: `${BUSINESS}/publish/location`,
    summary: 'Location tags matching a search, for posts',
    rpc: PublishService.method.searchLocations,
    schema: { querystring: LocationQuery, response: { 200: okEnvelope(PassThroughJson) } },
    toRequest: (req) => {
      const q = req.query;
      return { account: q.account, searchQuery: q.searchQuery };
    },
    toData: (res) => res.data ?? {},
  }),
];
