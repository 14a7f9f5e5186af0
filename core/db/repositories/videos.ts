import { and, desc, eq, inArray, isNotNull, isNull, lt, ne, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Executor } from '../client';
import { videos, type SeatTrack, type VideoSource, type VideoStatus } from '../schema';

export type VideoRow = typeof videos.$inferSelect;

/** One record of the customer's library, or undefined (unknown or another customer's: both 1005). */
export async function findVideoOfCustomer(db: Executor, customerId: string, id: string): Promise<VideoRow | undefined> {
  const [row] = await db
    .select()
    .from(videos)
    .where(and(eq(videos.id, id), eq(videos.customerId, customerId)));
  return row;
}

/** A record by id alone, for callers that proved their right to it otherwise (tickets, signed URLs, workflows). */
export async function findVideo(db: Executor, id: string): Promise<VideoRow | undefined> {
  const [row] = await db.select().from(videos).where(eq(videos.id, id));
  return row;
}

export async function insertVideo(
  db: Executor,
  input: {
    id: string;
    customerId: string;
    seatId: string;
    track: SeatTrack;
    status: VideoStatus;
    source: VideoSource;
    sourceUrl?: string | null;
    fileName?: string | null;
  },
): Promise<VideoRow> {
  const [row] = await db.insert(videos).values(input).returning();
  return row!;
}

/** What a stored file is: written once its bytes are in the media store. */
export interface StoredFile {
  storageKey: string;
  sizeBytes: number;
  sha256: string;
  container: string;
}

/**
 * Moves a record on from `from` only: every transition is conditional, so a delete that happened
 * meanwhile (status expired) is never overwritten by a late upload step. Undefined when the record
 * was no longer in `from`.
 */
export async function transitionVideo(
  db: Executor,
  id: string,
  from: readonly VideoStatus[],
  set: Partial<
    Pick<
      VideoRow,
      'status' | 'storageKey' | 'sizeBytes' | 'sha256' | 'container' | 'fileId' | 'urlIssuedAt' | 'expiresAt' | 'failureReason' | 'details'
    >
  >,
): Promise<VideoRow | undefined> {
  const [row] = await db
    .update(videos)
    .set({ ...set, updatedAt: new Date() })
    .where(and(eq(videos.id, id), inArray(videos.status, [...from])))
    .returning();
  return row;
}

/** A soft delete: expired at once, kept for audit. Undefined when it was deleted already. */
export async function softDeleteVideo(db: Executor, customerId: string, id: string): Promise<VideoRow | undefined> {
  const [row] = await db
    .update(videos)
    .set({ status: 'expired', deletedAt: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(videos.id, id), eq(videos.customerId, customerId), isNull(videos.deletedAt)))
    .returning();
  return row;
}

/** The lifetime ended: expired unless it already was (a delete may have come first). */
export async function expireVideo(db: Executor, id: string): Promise<VideoRow | undefined> {
  const [row] = await db
    .update(videos)
    .set({ status: 'expired', updatedAt: new Date() })
    .where(and(eq(videos.id, id), ne(videos.status, 'expired')))
    .returning();
  return row;
}

/** Temporal confirmed a start of the record's lifetime workflow (a first start, or one already running). */
export async function markLifetimeStarted(db: Executor, id: string): Promise<void> {
  await db
    .update(videos)
    .set({ lifetimeStartedAt: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(videos.id, id), isNull(videos.lifetimeStartedAt)));
}

/** What the expiry repair needs of a record to start its lifetime: ids for the search attributes, and the expiry. */
export type LifetimeCandidate = Pick<VideoRow, 'id' | 'customerId' | 'seatId' | 'expiresAt'>;

const lifetimeCandidate = { id: videos.id, customerId: videos.customerId, seatId: videos.seatId, expiresAt: videos.expiresAt };

/**
 * Available video track records with no confirmed lifetime start, available for at least
 * `graceMs` (younger ones may still have their start under way), oldest first.
 */
export async function videosWithoutLifetime(db: Executor, q: { graceMs: number; limit: number }): Promise<LifetimeCandidate[]> {
  return availableVideoTrack(
    db,
    and(isNull(videos.lifetimeStartedAt), sql`${videos.urlIssuedAt} <= now() - make_interval(secs => ${q.graceMs / 1000})`)!,
    videos.urlIssuedAt,
    q.limit,
  );
}

/**
 * Available video track records more than `graceMs` past their expiry although their lifetime
 * start was confirmed: a timer that works has expired them by then, so theirs ended without
 * expiring them (terminated by an operator, say) or is stuck. Oldest expiry first.
 */
export async function overdueVideos(db: Executor, q: { graceMs: number; limit: number }): Promise<LifetimeCandidate[]> {
  return availableVideoTrack(
    db,
    and(isNotNull(videos.lifetimeStartedAt), sql`${videos.expiresAt} <= now() - make_interval(secs => ${q.graceMs / 1000})`)!,
    videos.expiresAt,
    q.limit,
  );
}

/** Available video track records that also meet `condition`, in `order`: the repair's two lists. */
function availableVideoTrack(db: Executor, condition: SQL, order: PgColumn, limit: number): Promise<LifetimeCandidate[]> {
  return db
    .select(lifetimeCandidate)
    .from(videos)
    .where(and(eq(videos.status, 'available'), eq(videos.track, 'video'), condition))
    .orderBy(order)
    .limit(limit);
}

/** The stored file is gone (removed, or handed to the shop). */
export async function clearStorageKey(db: Executor, id: string): Promise<void> {
  await db.update(videos).set({ storageKey: null, updatedAt: new Date() }).where(eq(videos.id, id));
}

/** One page, newest first: ids sort by creation time, so the last id of a page is the cursor. */
export async function listVideosOfCustomer(
  db: Executor,
  q: { customerId: string; beforeId?: string; limit: number; status?: VideoStatus; seatId?: string },
): Promise<VideoRow[]> {
  return db
    .select()
    .from(videos)
    .where(
      and(
        eq(videos.customerId, q.customerId),
        q.beforeId ? lt(videos.id, q.beforeId) : undefined,
        q.status ? eq(videos.status, q.status) : undefined,
        q.seatId ? eq(videos.seatId, q.seatId) : undefined,
      ),
    )
    .orderBy(desc(videos.id))
    .limit(q.limit);
}

/** The caller's shop track record of a file id, or undefined (unknown or another customer's: both 1005). */
export async function findVideoByFileId(db: Executor, customerId: string, fileId: string): Promise<VideoRow | undefined> {
  const [row] = await db
    .select()
    .from(videos)
    .where(and(eq(videos.customerId, customerId), eq(videos.track, 'shop'), eq(videos.fileId, fileId)));
  return row;
}

/** The record, locked for the transaction: the one place where a file id's publish is decided. */
export async function lockVideo(db: Executor, id: string): Promise<VideoRow | undefined> {
  const [row] = await db.select().from(videos).where(eq(videos.id, id)).for('update');
  return row;
}

/** Marks the file id as held by a publish record. */
export async function holdFileForPublish(db: Executor, id: string, publishRecordId: string): Promise<void> {
  await db.update(videos).set({ publishRecordId, updatedAt: new Date() }).where(eq(videos.id, id));
}

/** The shop refused the post outright, so the file id is unused: another publish may take it. */
export async function releaseFileFromPublish(db: Executor, id: string, publishRecordId: string): Promise<void> {
  await db
    .update(videos)
    .set({ publishRecordId: null, updatedAt: new Date() })
    .where(and(eq(videos.id, id), eq(videos.publishRecordId, publishRecordId)));
}

/** How far back the outcome repair looks: a record that ended earlier than this is left as it is. */
export const OUTCOME_REPAIR_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Records that ended (available or failed) between `graceMs` and a day ago without their outcome
 * event: the process that wrote the row died, or the event store refused, before the event was
 * logged. The key is the one core/events/library-events.ts records under (`video-<status>:<id>`);
 * its test records through both and finds one event. Oldest first.
 */
export async function videosWithoutOutcomeEvent(db: Executor, q: { graceMs: number; limit: number }): Promise<VideoRow[]> {
  return db
    .select()
    .from(videos)
    .where(
      and(
        inArray(videos.status, ['available', 'failed']),
        sql`${videos.updatedAt} <= now() - make_interval(secs => ${q.graceMs / 1000})`,
        sql`${videos.updatedAt} > now() - make_interval(secs => ${OUTCOME_REPAIR_WINDOW_MS / 1000})`,
        sql`not exists (select 1 from events e where e.customer_id = ${videos.customerId}
              and e.source_key = 'video-' || ${videos.status} || ':' || ${videos.id})`,
      ),
    )
    .orderBy(videos.updatedAt)
    .limit(q.limit);
}
