/**
 * Publishing on both tracks: accepting a video, photo or shop post (checks in the spec's order:
 * fields, then the account binding, then the video or file id), handing it to the intake, which
 * stores it and starts its workflow, and reading publish state. The submit itself happens in the
 * workflow, once.
 */
import type { Logger } from '../logger';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Client } from '@temporalio/client';
import type {
  GetPublishStatusRequest,
  GetShopPublishStatusRequest,
  ListPublishRecordsRequest,
  PublishPhotoRequest,
  PublishService,
  PublishShopVideoRequest,
  PublishVideoRequest,
  SearchLocationsRequest,
  SuggestHashtagsRequest,
} from '../../gen/vps/publish/v1/publish_pb';
import { customerOf } from '../context';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import * as records from '../db/repositories/publish-records';
import type { PublishRecordRow } from '../db/repositories/publish-records';
import { PUBLISH_STATUSES } from '../db/schema';
import { ApiError, invalidField } from '../errors';
import type { EventRecorder } from '../events/recorder';
import { toPublishRecord } from '../mappers/publishing';
import { probeOfRow } from '../mappers/videos';
import { mediaUrl, type TokenSigner } from '../media/signed-tokens';
import { AccountSettingsCache } from '../publishing/account-settings';
import { anchorTextProblem } from '../publishing/anchor-text';
import { captionProblem, MAX_PHOTO_CAPTION_UTF16, MAX_PHOTO_TITLE_UTF16 } from '../publishing/caption';
import { PublishIntake, type IntakeSettings } from '../publishing/intake';
import { recordIdOfHandle } from '../publishing/handles';
import { libraryVideoOf } from '../publishing/library-video';
import { productAnchorText } from '../publishing/product-anchor';
import { refreshFromPlatform, SeatUnavailableError } from '../publishing/records';
import { bookSeat, seatAccessToken, type BoundSeat } from '../publishing/seats';
import { shopLibraryFile } from '../publishing/shop-files';
import { isTerminal, normalizeOfficialStatus } from '../publishing/status';
import type { Upstream } from '../upstream';
import { UpstreamError } from '../upstream/failures';
import { PHOTO_PUBLISH_FIELDS, SHOP_PUBLISH_FIELDS, VIDEO_PUBLISH_FIELDS } from '../upstream/field-tables';
import { toOfficial, flattenOfficial } from '../upstream/mapping';
import { getVideoStatus } from '../upstream/shop/content';
import { getPublishStatus, searchLocations, suggestHashtags, PRIVACY_LEVELS, type PrivacyLevel } from '../upstream/vplat/publishing';

export type PublishSettings = IntakeSettings;

export const MAX_PHOTOS = 35;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The shop post's text (video_info.title), as the official 202607 post takes it. */
export const MAX_SHOP_TITLE_UTF16 = 4000;

/** Ids that are not official shop video ids, each refused with 1005 naming what they are. */
const WRONG_SHOP_ID_KINDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^pub_/, "is a publish record id; pass the record's shareId (the official video id)"],
  [/^vid_/, 'is a video library record id; pass the shareId of the shop publish record (the official video id)'],
];

/** Id kinds that are not share ids, each refused with 1005 and a message naming the right kind. */
const WRONG_ID_KINDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^pub_/, "is a publish record id; pass the record's shareId"],
  [/^vid_/, 'is a video library record id; pass the shareId from the publish response'],
  [/^\d{6,}$/, 'looks like a post id (item_id); pass the shareId from the publish response'],
];

export class PublishHandlers implements ServiceImpl<typeof PublishService> {
  constructor(
    readonly deps: {
      db: Db;
      sealedBox: SealedBox;
      upstream: Upstream;
      events: EventRecorder;
      signer: TokenSigner;
      publicUrl: string;
      temporalClient: () => Promise<Client>;
      taskQueue: string;
      settings: PublishSettings;
      logger: Logger;
    },
  ) {
    this.accountSettings = new AccountSettingsCache(deps.upstream);
    this.intake = new PublishIntake(deps);
  }

  private readonly accountSettings: AccountSettingsCache;
  private readonly intake: PublishIntake;

  async publishVideo(req: PublishVideoRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const field = req.channel === 'legacy' ? 'accountId' : 'account';
    if (!req.account) throw invalidField(field, 'is required');
    if (!req.videoUrl === !req.videoId) throw invalidField('videoUrl', 'give exactly one of videoUrl and videoId');
    const caption = captionProblem(req.caption);
    if (caption) throw invalidField('caption', caption);
    if (req.thumbnailOffset !== undefined && req.thumbnailOffset < 0n)
      throw invalidField('thumbnailOffset', 'must be a non-negative integer (milliseconds)');
    for (const [name, value] of [
      ['musicSoundVolume', req.musicSoundVolume],
      ['videoOriginalSoundVolume', req.videoOriginalSoundVolume],
    ] as const) {
      if (value !== undefined && (value < 0 || value > 100)) throw invalidField(name, 'must be from 0 to 100');
    }
    const seat = await bookSeat(this.deps.db, customerId, req.account, 'video', field);
    const video = await libraryVideoOf(this.deps.db, this.deps.publicUrl, customerId, req.videoUrl, req.videoId);
    const duration = video ? probeOfRow(video)?.durationSeconds : undefined;
    if (duration) {
      const max = (await this.settingsOf(seat))?.max_video_post_duration_sec;
      if (max && duration > max) {
        const videoField = req.videoId ? 'videoId' : 'videoUrl';
        throw invalidField(
          videoField,
          `the video lasts ${duration} s; ${req.account} may post videos of at most ${max} s (GET …/business/video/settings)`,
        );
      }
    }
    const request = toOfficial(
      VIDEO_PUBLISH_FIELDS,
      {
        videoUrl: video ? mediaUrl(this.deps.signer, this.deps.publicUrl, video.id, video.expiresAt!) : req.videoUrl,
        caption: req.caption || undefined,
        // The platform refuses a post without both disclosures; absent means not promotional.
        isBrandOrganic: req.isBrandOrganic ?? false,
        isBrandedContent: req.isBrandedContent ?? false,
        disableComment: req.disableComment,
        disableDuet: req.disableDuet,
        disableStitch: req.disableStitch,
        thumbnailOffset: req.thumbnailOffset === undefined ? undefined : Number(req.thumbnailOffset),
        customThumbnailUrl: req.customThumbnailUrl || undefined,
        isAiGenerated: req.isAiGenerated,
        draft: req.draft || undefined,
        locationId: req.locationId || undefined,
        locationName: req.locationName || undefined,
        musicSoundId: req.musicSoundId || undefined,
        musicSoundVolume: req.musicSoundVolume,
        videoOriginalSoundVolume: req.videoOriginalSoundVolume,
      },
      { business_id: seat.accountId, post_info: {} },
    );
    const accepted = await this.intake.accept({
      seat,
      customerId,
      track: 'video',
      kind: 'video',
      channel: req.channel === 'legacy' ? 'legacy' : 'v1.3',
      videoId: video?.id ?? null,
      request,
      draft: req.draft,
    });
    return { record: toPublishRecord(this.acceptedRecord(accepted)) };
  }

  async publishPhoto(req: PublishPhotoRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (!req.account) throw invalidField('account', 'is required');
    if (req.photoUrls.length < 1 || req.photoUrls.length > MAX_PHOTOS)
      throw invalidField('photoUrls', `must list 1 to ${MAX_PHOTOS} image URLs (got ${req.photoUrls.length})`);
    const badUrl = req.photoUrls.findIndex((u) => !/^https?:\/\/\S+$/i.test(u));
    if (badUrl >= 0) throw invalidField(`photoUrls[${badUrl}]`, 'must be an absolute http(s) URL');
    if (!req.privacyLevel) throw invalidField('privacyLevel', 'is required');
    if (!(PRIVACY_LEVELS as readonly string[]).includes(req.privacyLevel))
      throw invalidField('privacyLevel', `must be one of ${PRIVACY_LEVELS.join(', ')}`);
    if (req.photoCoverIndex !== undefined && (req.photoCoverIndex < 0 || req.photoCoverIndex >= req.photoUrls.length)) {
      throw invalidField('photoCoverIndex', `must index one of the ${req.photoUrls.length} photoUrls, from 0`);
    }
    const caption = captionProblem(req.caption, MAX_PHOTO_CAPTION_UTF16);
    if (caption) throw invalidField('caption', caption);
    if (req.title.length > MAX_PHOTO_TITLE_UTF16)
      throw invalidField('title', `must be at most ${MAX_PHOTO_TITLE_UTF16} UTF-16 code units (got ${req.title.length})`);
    const seat = await bookSeat(this.deps.db, customerId, req.account, 'video', 'account');
    const settings = await this.settingsOf(seat);
    if (settings && !settings.privacy_level_options.includes(req.privacyLevel as PrivacyLevel)) {
      throw invalidField(
        'privacyLevel',
        `${req.privacyLevel} is not available for ${req.account}; it allows ${settings.privacy_level_options.join(', ')} (GET …/business/video/settings)`,
      );
    }
    const request = toOfficial(
      PHOTO_PUBLISH_FIELDS,
      {
        photoUrls: [...req.photoUrls],
        photoCoverIndex: req.photoCoverIndex,
        privacyLevel: req.privacyLevel,
        title: req.title || undefined,
        caption: req.caption || undefined,
        autoAddMusic: req.autoAddMusic,
        // The platform refuses a post without both disclosures; absent means not promotional.
        isBrandOrganic: req.isBrandOrganic ?? false,
        isBrandedContent: req.isBrandedContent ?? false,
        disableComment: req.disableComment,
        draft: req.draft || undefined,
        musicSoundId: req.musicSoundId || undefined,
        locationId: req.locationId || undefined,
        locationName: req.locationName || undefined,
      },
      { business_id: seat.accountId },
    );
    const accepted = await this.intake.accept({
      seat,
      customerId,
      track: 'video',
      kind: 'photo',
      channel: 'v1.3',
      videoId: null,
      request,
      draft: req.draft,
    });
    return { record: toPublishRecord(this.acceptedRecord(accepted)) };
  }

  async getPublishStatus(req: GetPublishStatusRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const publishId = req.publishId.trim();
    if (!publishId) throw invalidField('publishId', 'is required');
    const wrongKind = WRONG_ID_KINDS.find(([pattern]) => pattern.test(publishId));
    if (wrongKind) throw new ApiError(1005, `publishId ${publishId} ${wrongKind[1]}`, { data: { field: 'publishId' } });
    const handled = await this.recordOfHandle(customerId, 'video', publishId, 'publishId');
    if (handled) return { result: { case: 'record' as const, value: toPublishRecord(await this.refreshed(handled)) } };
    const record = await records.findRecordByShareId(this.deps.db, customerId, 'video', publishId);
    if (record) return { result: { case: 'record' as const, value: toPublishRecord(await this.refreshed(record)) } };
    if (!req.account) throw invalidField('account', 'is required when publishId matches none of your publish records');
    const seat = await bookSeat(this.deps.db, customerId, req.account, 'video', 'account');
    const official = await getPublishStatus(this.deps.upstream.vplat, seatAccessToken(this.deps.sealedBox, seat), {
      business_id: seat.accountId,
      publish_id: publishId,
    });
    return {
      result: {
        case: 'lookup' as const,
        value: {
          publishId,
          status: normalizeOfficialStatus(official.status),
          officialStatus: official.status,
          postIds: official.post_ids ?? [],
          reason: official.reason ?? '',
        },
      },
    };
  }

  async listPublishRecords(req: ListPublishRecordsRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const limit = req.limit || DEFAULT_PAGE_SIZE;
    if (limit < 1 || limit > MAX_PAGE_SIZE) throw invalidField('limit', `must be from 1 to ${MAX_PAGE_SIZE}`);
    if (req.status && !(PUBLISH_STATUSES as readonly string[]).includes(req.status))
      throw invalidField('status', `must be one of ${PUBLISH_STATUSES.join(', ')}`);
    if (req.cursor && !/^pub_[0-9a-z]{26}$/.test(req.cursor)) throw invalidField('cursor', 'is not a cursor this list returned');
    const rows = await records.listPublishRecords(this.deps.db, {
      customerId,
      before: req.cursor || undefined,
      limit: limit + 1,
      status: req.status || undefined,
      seatId: req.seatId || undefined,
      fileId: req.fileId || undefined,
    });
    const page = rows.slice(0, limit);
    return { records: page.map(toPublishRecord), nextCursor: rows.length > limit ? page[page.length - 1]!.id : '' };
  }

  async publishShopVideo(req: PublishShopVideoRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    for (const [field, value] of [
      ['fileId', req.fileId],
      ['accountId', req.accountId],
      ['productId', req.productId],
      ['title', req.title],
    ] as const) {
      if (!value.trim()) throw invalidField(field, 'is required');
    }
    if (req.title.length > MAX_SHOP_TITLE_UTF16)
      throw invalidField('title', `must be at most ${MAX_SHOP_TITLE_UTF16} UTF-16 code units (got ${req.title.length})`);
    if (req.productTitle) {
      const problem = anchorTextProblem(req.productTitle);
      if (problem) throw invalidField('productTitle', problem);
    }
    if (req.coverTimestampMs !== undefined && req.coverTimestampMs < 0n)
      throw invalidField('coverTimestampMs', 'must be a non-negative integer (milliseconds)');
    const seat = await bookSeat(this.deps.db, customerId, req.accountId, 'shop', 'accountId');
    const video = await shopLibraryFile(this.deps.db, customerId, seat, req.fileId);
    // A file id already held by a publish answers with that publish, before anything else is asked of the shop.
    if (video.publishRecordId) return this.earlierAttempt(video.publishRecordId, req.fileId);
    const anchorText =
      req.productTitle || (await productAnchorText(this.deps.upstream, seatAccessToken(this.deps.sealedBox, seat), req.productId));
    const request = toOfficial(SHOP_PUBLISH_FIELDS, {
      fileId: req.fileId,
      title: req.title,
      isAiGenerated: req.isAiGenerated,
      coverUri: req.coverUri || undefined,
      coverTimestampMs: req.coverTimestampMs === undefined ? undefined : Number(req.coverTimestampMs),
      musicId: req.musicId || undefined,
      productId: req.productId,
      productTitle: anchorText,
    });
    const accepted = await this.intake.accept({
      seat,
      customerId,
      track: 'shop',
      kind: 'video',
      channel: 'v1.3',
      videoId: video.id,
      request,
      draft: false,
    });
    if ('earlier' in accepted) return this.earlierAttempt(accepted.earlier, req.fileId);
    return { record: toPublishRecord(accepted.record), earlierAttempt: false };
  }

  async getShopPublishStatus(req: GetShopPublishStatusRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const videoId = req.videoId.trim();
    if (!videoId) throw invalidField('videoId', 'is required');
    const wrongKind = WRONG_SHOP_ID_KINDS.find(([pattern]) => pattern.test(videoId));
    if (wrongKind) throw new ApiError(1005, `videoId ${videoId} ${wrongKind[1]}`, { data: { field: 'videoId' } });
    const handled = await this.recordOfHandle(customerId, 'shop', videoId, 'videoId');
    if (handled) return { result: { case: 'record' as const, value: toPublishRecord(await this.refreshed(handled)) } };
    const record = await records.findRecordByShareId(this.deps.db, customerId, 'shop', videoId);
    if (record) return { result: { case: 'record' as const, value: toPublishRecord(await this.refreshed(record)) } };
    if (!req.accountId) throw invalidField('accountId', 'is required when videoId matches none of your publish records');
    const seat = await bookSeat(this.deps.db, customerId, req.accountId, 'shop', 'accountId');
    const official = await getVideoStatus(this.deps.upstream.shop, seatAccessToken(this.deps.sealedBox, seat), videoId);
    return {
      result: {
        case: 'lookup' as const,
        value: {
          publishId: videoId,
          status: normalizeOfficialStatus(official.video.post_status),
          officialStatus: official.video.post_status,
          postIds: [],
          reason: '',
        },
      },
    };
  }

  /**
   * The caller's record a service handle names, on the track whose status query was asked;
   * undefined when the value is not a handle (then it is the platform's id). A handle of no record
   * of the caller's, or of the other track's, is 1005: no official lookup could answer it.
   */
  private async recordOfHandle(
    customerId: string,
    track: 'video' | 'shop',
    value: string,
    field: 'publishId' | 'videoId',
  ): Promise<PublishRecordRow | undefined> {
    const recordId = recordIdOfHandle(value);
    if (!recordId) return undefined;
    const record = await records.findPublishRecord(this.deps.db, recordId);
    if (!record || record.customerId !== customerId)
      throw new ApiError(1005, `${field} ${value} is no publish of yours`, { data: { field } });
    if (record.track !== track) {
      const other = track === 'video' ? 'GET /v1/publish/tts/status?videoId=' : 'GET /v1/vplat/v1.3/business/publish/status?publishId=';
      throw new ApiError(1005, `${field} ${value} is the handle of a ${record.track} track publish; query ${other}`, { data: { field } });
    }
    return record;
  }

  /**
   * A file id is published once: a repeat answers with the attempt that holds it. If that attempt
   * ended without a post, the file id was consumed all the same, so the caller is told to upload again.
   */
  private async earlierAttempt(recordId: string, fileId: string) {
    const earlier = await records.findPublishRecord(this.deps.db, recordId);
    if (!earlier) throw new Error(`file id ${fileId} is held by publish record ${recordId}, which does not exist`);
    if (earlier.status === 'publish_failed' || earlier.unconfirmedAt) {
      const ended = earlier.unconfirmedAt ? `ended unconfirmed at ${earlier.status}` : `ended ${earlier.status}`;
      throw invalidField(
        'fileId',
        `${fileId} was already used by publish record ${earlier.id}, which ${ended}${earlier.reason ? ` (${earlier.reason})` : ''}; a file id is consumed once: upload the video again for a new one`,
      );
    }
    await this.intake.ensureWorkflow(earlier);
    return { record: toPublishRecord(earlier), earlierAttempt: true };
  }

  async suggestHashtags(req: SuggestHashtagsRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (!req.account) throw invalidField('account', 'is required');
    if (!req.keyword) throw invalidField('keyword', 'is required');
    const seat = await bookSeat(this.deps.db, customerId, req.account, 'video', 'account');
    const data = await suggestHashtags(this.deps.upstream.vplat, seatAccessToken(this.deps.sealedBox, seat), {
      business_id: seat.accountId,
      keyword: req.keyword,
      language: req.language || undefined,
    });
    return { data: flattenOfficial(data as unknown as Record<string, unknown>) as JsonObject };
  }

  async searchLocations(req: SearchLocationsRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    if (!req.account) throw invalidField('account', 'is required');
    if (!req.searchQuery) throw invalidField('searchQuery', 'is required');
    const seat = await bookSeat(this.deps.db, customerId, req.account, 'video', 'account');
    const data = await searchLocations(this.deps.upstream.vplat, seatAccessToken(this.deps.sealedBox, seat), {
      business_id: seat.accountId,
      search_query: req.searchQuery,
    });
    return { data: flattenOfficial(data as unknown as Record<string, unknown>) as JsonObject };
  }

  /**
   * The account's settings for a pre-flight check, or undefined when the platform cannot say now:
   * the check is a courtesy, and the platform still judges the publish itself.
   */
  private async settingsOf(seat: BoundSeat) {
    try {
      return await this.accountSettings.get(seat.accountId, seatAccessToken(this.deps.sealedBox, seat));
    } catch (err) {
      if (err instanceof UpstreamError) return undefined;
      throw err;
    }
  }

  /** Video track records hold no file id, so none can be found held by an earlier attempt. */
  private acceptedRecord(accepted: { record: PublishRecordRow } | { earlier: string }): PublishRecordRow {
    if ('earlier' in accepted) throw new Error(`a video track publish found its media held by ${accepted.earlier}`);
    return accepted.record;
  }

  /**
   * The record with what the platform says now. A record past its end is returned as stored; so
   * is one whose refresh failed upstream, since the stored state is still the caller's best answer.
   */
  private async refreshed(record: PublishRecordRow): Promise<PublishRecordRow> {
    if (!record.shareId || (isTerminal(record.status) && !(record.status === 'publish_complete' && !record.postId))) return record;
    try {
      return await refreshFromPlatform(this.deps, record);
    } catch (err) {
      if (err instanceof UpstreamError || err instanceof SeatUnavailableError) return record;
      throw err;
    }
  }
}
