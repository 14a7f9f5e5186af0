import type { PublishRecord } from '../../gen/vps/publish/v1/publish_pb';
import { pollingHandleOf, publishHandleOf } from '../../core/publishing/handles';
import { isoOrNull, trackName } from './shared';
import type { PublishRecordJson, ShopPublishJson } from '../schemas/publishing';

export function publishRecordJson(r: PublishRecord): PublishRecordJson {
  // Never null: the platform's id once known, the service's handle until then (core/publishing/handles.ts).
  const handle = pollingHandleOf(r);
  return {
    id: r.id,
    publishId: handle,
    shareId: handle,
    handle: publishHandleOf(r.id),
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

/** The shop publish answer: videoId is the handle to poll with (see ShopPublishJson). */
export function shopPublishJson(r: PublishRecord, earlierAttempt: boolean): ShopPublishJson {
  const { videoId, ...record } = publishRecordJson(r);
  return { ...record, videoId: record.shareId, libraryVideoId: videoId, earlierAttempt };
}
