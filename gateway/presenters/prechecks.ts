import type { Precheck } from '../../gen/vps/shop/v1/shop_pb';
import { isoOrNull } from './shared';
import type { PrecheckJson } from '../schemas/prechecks';

const verdict = (v: string) => (v === 'passed' || v === 'failed' ? v : null);

export function precheckJson(p: Precheck): PrecheckJson {
  return {
    taskId: p.id,
    officialTaskId: p.officialTaskId || null,
    status: p.status as PrecheckJson['status'],
    violation: verdict(p.violation),
    quality: verdict(p.quality),
    issues: p.issues as PrecheckJson['issues'],
    reason: p.reason || null,
    seatId: p.seatId,
    accountId: p.accountId,
    fileId: p.fileId,
    videoId: p.videoId,
    productId: p.productId,
    productTitle: p.productTitle,
    workflowId: p.workflowId,
    createdAt: isoOrNull(p.createdAt)!,
    updatedAt: isoOrNull(p.updatedAt)!,
    completedAt: isoOrNull(p.completedAt),
  };
}
