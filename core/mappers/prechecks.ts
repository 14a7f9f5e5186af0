/** Pre-check rows to protobuf messages. */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { PrecheckSchema, type Precheck } from '../../gen/vps/shop/v1/shop_pb';
import type { PrecheckRow } from '../db/repositories/prechecks';

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(d) : undefined);

export function toPrecheck(row: PrecheckRow): Precheck {
  return create(PrecheckSchema, {
    id: row.id,
    officialTaskId: row.officialTaskId ?? '',
    seatId: row.seatId,
    accountId: row.accountId,
    videoId: row.videoId,
    fileId: row.fileId,
    productId: row.productId,
    productTitle: row.productTitle,
    status: row.status,
    violation: row.violation ?? '',
    quality: row.quality ?? '',
    // Stored as the activity flattened them: plain JSON objects.
    issues: row.issues as JsonObject[],
    reason: row.reason ?? '',
    workflowId: row.workflowId,
    createdAt: ts(row.createdAt),
    completedAt: ts(row.completedAt),
    updatedAt: ts(row.updatedAt),
  });
}
