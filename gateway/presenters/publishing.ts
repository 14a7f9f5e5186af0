import type { PublishRecord } from '../../gen/vps/publish/v1/publish_pb';
import { isoOrNull, trackName } from './shared';
import type { PublishRecordJson, ShopPublishJson } from '../schemas/publishing';

export function publishRecordJson(r: PublishRecord): PublishRecordJson {
  return {
    id: r.id,
    publishId: r.shareId || null,
    shareId: r.shareId || null,
    status: r.status as PublishRecordJson['status'],
    unconfirmed: r.unconfirmedAt !== undefined,
    unconfirmedAt: isoOrNull(r.unconfirmedAt),
    officialStatus: r.officialStatus || null,
    postId: r.postId || null,
    failReason: r.failReason || null,
    reason: r.reason || null,
    reasonCategory: (r.reasonCategory || null) as PublishRecordJson['reasonCategory'],
    track: trackName(r.track),
    kind: r.kind as PublishRecordJson['kind'],
    channel: r.channel as PublishRecordJson['channel'],
    seatId: r.seatId,
    accountId: r.accountId,
    videoId: r.videoId || null,
    draft: r.draft,
    workflowId: r.workflowId,
    createdAt: isoOrNull(r.createdAt)!,
    updatedAt: isoOrNull(r.updatedAt)!,
    completedAt: isoOrNull(r.completedAt),
  };
}

/** The shop publish answer: videoId is the official handle to poll with (see ShopPublishJson). */
export function shopPublishJson(r: PublishRecord, earlierAttempt: boolean): ShopPublishJson {
  const { videoId, ...record } = publishRecordJson(r);
  return { ...record, videoId: record.shareId, libraryVideoId: videoId, earlierAttempt };
}
