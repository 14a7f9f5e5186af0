/**
 * What changes a publish record, shared by the publish workflow's activities and by the status
 * query that refreshes a record while its caller waits: reading the official status, applying a
 * change once, and logging `vplat.publish.status_changed` for it.
 */
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import * as records from '../db/repositories/publish-records';
import type { PublishRecordRow, PublishChange } from '../db/repositories/publish-records';
import { findSeat } from '../db/repositories/seats';
import { catalogued } from '../events/event-types';
import type { EventRecorder } from '../events/recorder';
import type { Upstream } from '../upstream';
import { openCredentials } from '../upstream/credentials';
import { getPublishStatus } from '../upstream/vplat/publishing';
import { getVideoStatus, type VideoStatusData } from '../upstream/shop/content';
import { pollingHandleOf, publishHandleOf } from './handles';
import { categoryOfOfficialReason, failReason, isTerminal, normalizeOfficialStatus } from './status';

export interface PublishRecordDeps {
  db: Db;
  sealedBox: SealedBox;
  upstream: Upstream;
  events: EventRecorder;
}

/** The seat no longer holds the account the record was published to: its token cannot be used. */
export class SeatUnavailableError extends Error {
  constructor(readonly record: PublishRecordRow) {
    super(`seat ${record.seatId} no longer holds account ${record.accountId}`);
    this.name = 'SeatUnavailableError';
  }
}

/** The access token of the seat that published the record, while it still holds that account. */
export async function recordAccessToken(deps: Pick<PublishRecordDeps, 'db' | 'sealedBox'>, record: PublishRecordRow): Promise<string> {
  const seat = await findSeat(deps.db, record.seatId);
  if (!seat?.credentialsSealed || seat.accountId !== record.accountId) throw new SeatUnavailableError(record);
  return openCredentials(deps.sealedBox, seat.id, seat.credentialsSealed).accessToken;
}

/**
 * Applies a change to a record as read and logs the event it makes. The event is recorded first,
 * under a key that names the new state, and the row written second: a crash between the two is
 * repaired by the next refresh, which records the same event again (stored once) and writes the
 * row. Returns the record as it now stands, whoever changed it.
 */
export async function applyChange(
  deps: Pick<PublishRecordDeps, 'db' | 'events'>,
  seen: PublishRecordRow,
  change: PublishChange,
): Promise<PublishRecordRow> {
  const write: PublishChange = { ...change };
  // A final status found later (a caller's status query) confirms the outcome after all.
  if (seen.unconfirmedAt && write.status && isTerminal(write.status)) {
    // …and the unconfirmed explanation goes with the flag, unless the final status brings its own.
    Object.assign(write, { unconfirmedAt: null, reason: write.reason ?? null, reasonCategory: write.reasonCategory ?? null });
  }
  const next = { ...seen, ...write };
  if (isTerminal(next.status) && !seen.completedAt) next.completedAt = write.completedAt = new Date();
  if (next.status !== seen.status || next.postId !== seen.postId) await recordStatusEvent(deps.events, seen, next);
  else if (next.unconfirmedAt && !seen.unconfirmedAt) await recordUnconfirmedEvent(deps.events, next);
  const written = await records.updateIfUnchanged(deps.db, seen, write);
  return written ?? (await records.findPublishRecord(deps.db, seen.id)) ?? next;
}

/** The record as publish events carry it (snake_case, like every event's data). */
function recordData(r: PublishRecordRow) {
  return {
    record_id: r.id,
    track: r.track,
    kind: r.kind,
    account_id: r.accountId,
    video_id: r.videoId,
    // As the API's shareId: the platform's id once known, the service's handle until then.
    share_id: pollingHandleOf(r),
    handle: publishHandleOf(r.id),
    status: r.status,
    official_status: r.officialStatus,
    post_id: r.postId,
    reason: r.reason,
    fail_reason: failReason(r),
    reason_category: r.reasonCategory,
    unconfirmed: r.unconfirmedAt !== null,
    draft: r.draft,
  };
}

async function recordStatusEvent(events: EventRecorder, before: PublishRecordRow, after: PublishRecordRow): Promise<void> {
  await events.record({
    customerId: after.customerId,
    seatId: after.seatId,
    ...catalogued('vplat.publish.status_changed'),
    occurredAt: new Date(),
    data: { ...recordData(after), previous_status: before.status },
    sourceKey: `publish-status:${after.id}:${after.status}:${after.postId ?? ''}`,
  });
}

/** The service stopped following the publish without a final status: logged once per record. */
async function recordUnconfirmedEvent(events: EventRecorder, record: PublishRecordRow): Promise<void> {
  await events.record({
    customerId: record.customerId,
    seatId: record.seatId,
    ...catalogued('vplat.publish.unconfirmed'),
    occurredAt: new Date(),
    data: recordData(record),
    sourceKey: `publish-unconfirmed:${record.id}`,
  });
}

/** The change the official status of a submitted record makes, if any. */
export function changeFromOfficial(
  record: PublishRecordRow,
  official: { status: string; post_ids?: string[]; reason?: string },
): PublishChange | undefined {
  const status = normalizeOfficialStatus(official.status);
  const postId = official.post_ids?.find((id) => id !== '') ?? record.postId;
  if (status === record.status && postId === record.postId && official.status === record.officialStatus) return undefined;
  const change: PublishChange = { status, officialStatus: official.status, postId };
  if (status === 'publish_failed') {
    change.reason = official.reason ?? 'the platform reported the publish as failed without a reason';
    change.reasonCategory = categoryOfOfficialReason(change.reason);
  }
  return change;
}

type OfficialStatus = { status: string; post_ids?: string[]; reason?: string };

/** The shop's status of a video in the shape of the video track's: the shop reports no reason or post id. */
function fromShopVideo(video: VideoStatusData['video']): OfficialStatus {
  return {
    status: video.post_status,
    ...(video.post_status === 'FAIL' ? { reason: 'the shop reported the post as failed without a reason' } : {}),
  };
}

/** The official status in one shape for both tracks. */
async function officialStatus(
  deps: PublishRecordDeps,
  record: PublishRecordRow,
  accessToken: string,
  shareId: string,
): Promise<OfficialStatus> {
  if (record.track === 'shop') return fromShopVideo((await getVideoStatus(deps.upstream.shop, accessToken, shareId)).video);
  return getPublishStatus(deps.upstream.vplat, accessToken, { business_id: record.accountId, publish_id: shareId });
}

async function applyOfficial(deps: PublishRecordDeps, record: PublishRecordRow, official: OfficialStatus): Promise<PublishRecordRow> {
  // A status the record already passed (a late or reordered answer) is not applied backwards.
  if (isTerminal(record.status) && !(record.status === 'publish_complete' && !record.postId)) return record;
  const change = changeFromOfficial(record, official);
  return change ? applyChange(deps, record, change) : record;
}

/**
 * Reads the official status of a submitted record and applies what changed. Upstream failures
 * propagate (as UpstreamError) for the caller to classify.
 */
export async function refreshFromPlatform(deps: PublishRecordDeps, record: PublishRecordRow): Promise<PublishRecordRow> {
  if (!record.shareId) return record;
  const accessToken = await recordAccessToken(deps, record);
  return applyOfficial(deps, record, await officialStatus(deps, record, accessToken, record.shareId));
}

/**
 * Reads a shop record's video back from the shop with the token of the seat that now holds its
 * account, applies what changed, and returns the shop's answer too: its post time is not stored.
 * Upstream failures propagate (as UpstreamError).
 */
export async function readShopVideo(
  deps: PublishRecordDeps,
  record: PublishRecordRow & { shareId: string },
  accessToken: string,
): Promise<{ record: PublishRecordRow; video: VideoStatusData['video'] }> {
  const { video } = await getVideoStatus(deps.upstream.shop, accessToken, record.shareId);
  return { record: await applyOfficial(deps, record, fromShopVideo(video)), video };
}
