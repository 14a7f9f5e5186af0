/** Publish record rows to protobuf messages. */
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { PublishRecordSchema, type PublishRecord } from '../../gen/vps/publish/v1/publish_pb';
import type { PublishRecordRow } from '../db/repositories/publish-records';
import { TRACKS } from './accounts';
import { failReason } from '../publishing/status';

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(d) : undefined);

export function toPublishRecord(row: PublishRecordRow): PublishRecord {
  return create(PublishRecordSchema, {
    id: row.id,
    track: TRACKS[row.track],
    kind: row.kind,
    channel: row.channel,
    seatId: row.seatId,
    accountId: row.accountId,
    videoId: row.videoId ?? '',
    shareId: row.shareId ?? '',
    status: row.status,
    officialStatus: row.officialStatus ?? '',
    postId: row.postId ?? '',
    reason: row.reason ?? '',
    reasonCategory: row.reasonCategory ?? '',
    draft: row.draft,
    workflowId: row.workflowId,
    createdAt: ts(row.createdAt),
    updatedAt: ts(row.updatedAt),
    completedAt: ts(row.completedAt),
    unconfirmedAt: ts(row.unconfirmedAt),
    failReason: failReason(row) ?? '',
  });
}
