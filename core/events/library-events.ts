/**
 * The events of the video library: a record that became available or failed, so that a caller
 * whose upload was answered `processing` (the fetch or the shop hand-off outlasted the request's
 * wait) learns the outcome without polling. One event per record and outcome: the source key
 * names both, so a retried step that records it again stores nothing new.
 */
import type { VideoRow } from '../db/repositories/videos';
import { catalogued, type EventType } from './event-types';
import type { EventRecorder } from './recorder';

type Outcome = 'available' | 'failed';

const TYPES: Record<Outcome, EventType> = { available: 'vplat.video.available', failed: 'vplat.video.failed' };

/**
 * Logs the outcome the record shows, if it has one (available or failed); a record still on its
 * way, expired or missing logs nothing. Steps call it after writing the row, and again when a
 * retry finds the row written already. The video track's signed URL is not part of the event: it
 * is derived from the record when read (GET /v1/videos/{id}), never stored, and a URL to the file
 * in the event log would outlive a delete of the record.
 */
export async function recordVideoOutcome(events: EventRecorder, row: VideoRow | undefined): Promise<void> {
  if (row?.status !== 'available' && row?.status !== 'failed') return;
  const outcome: Outcome = row.status;
  await events.record({
    customerId: row.customerId,
    seatId: row.seatId,
    ...catalogued(TYPES[outcome]),
    occurredAt: new Date(),
    data: {
      video_id: row.id,
      track: row.track,
      source: row.source,
      status: outcome,
      file_name: row.fileName,
      file_id: row.fileId,
      expires_at: row.expiresAt?.toISOString() ?? null,
      failure_reason: row.failureReason,
    },
    sourceKey: `video-${outcome}:${row.id}`,
  });
}
