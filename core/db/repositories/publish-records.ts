import { and, desc, eq, gte, inArray, isNotNull, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../client';
import { publishRecords, videos, type PublishStatus } from '../schema';

export type PublishRecordRow = typeof publishRecords.$inferSelect;
export type NewPublishRecord = typeof publishRecords.$inferInsert;

export async function insertPublishRecord(db: Executor, row: NewPublishRecord): Promise<PublishRecordRow> {
  const [inserted] = await db.insert(publishRecords).values(row).returning();
  return inserted!;
}

export async function findPublishRecord(db: Executor, id: string): Promise<PublishRecordRow | undefined> {
  const [row] = await db.select().from(publishRecords).where(eq(publishRecords.id, id));
  return row;
}

/** The caller's record of an official handle on a track; another customer's is not found. */
export async function findRecordByShareId(
  db: Executor,
  customerId: string,
  track: 'video' | 'shop',
  shareId: string,
): Promise<PublishRecordRow | undefined> {
  const [row] = await db
    .select()
    .from(publishRecords)
    .where(and(eq(publishRecords.customerId, customerId), eq(publishRecords.track, track), eq(publishRecords.shareId, shareId)));
  return row;
}

export async function listPublishRecords(
  db: Executor,
  q: { customerId: string; before?: string; limit: number; status?: string; seatId?: string; fileId?: string },
): Promise<PublishRecordRow[]> {
  const conditions: SQL[] = [eq(publishRecords.customerId, q.customerId)];
  if (q.before) conditions.push(lt(publishRecords.id, q.before));
  if (q.status) conditions.push(eq(publishRecords.status, q.status as PublishStatus));
  if (q.seatId) conditions.push(eq(publishRecords.seatId, q.seatId));
  if (q.fileId) {
    const holders = db
      .select({ id: videos.id })
      .from(videos)
      .where(and(eq(videos.customerId, q.customerId), eq(videos.fileId, q.fileId)));
    conditions.push(inArray(publishRecords.videoId, holders));
  }
  return db
    .select()
    .from(publishRecords)
    .where(and(...conditions))
    .orderBy(desc(publishRecords.id))
    .limit(q.limit);
}

/**
 * A shop account's publish records that reached the shop (they hold its video id), newest first:
 * those created from `from` (inclusive) to `to` (exclusive), before the record id `before`.
 */
export async function listShopVideoRecords(
  db: Executor,
  q: { customerId: string; accountId: string; before?: string; from?: Date; to?: Date; limit: number },
): Promise<PublishRecordRow[]> {
  const conditions: SQL[] = [
    eq(publishRecords.customerId, q.customerId),
    eq(publishRecords.track, 'shop'),
    eq(publishRecords.accountId, q.accountId),
    isNotNull(publishRecords.shareId),
  ];
  if (q.before) conditions.push(lt(publishRecords.id, q.before));
  if (q.from) conditions.push(gte(publishRecords.createdAt, q.from));
  if (q.to) conditions.push(lt(publishRecords.createdAt, q.to));
  return db
    .select()
    .from(publishRecords)
    .where(and(...conditions))
    .orderBy(desc(publishRecords.id))
    .limit(q.limit);
}

/**
 * Claims the one official submit of a record: only the first caller gets true. A later caller
 * (a retried activity after a worker died mid-call) must not send again: the first call may have
 * reached the platform.
 */
export async function claimSubmit(db: Executor, id: string): Promise<boolean> {
  const rows = await db
    .update(publishRecords)
    .set({ submitStartedAt: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(publishRecords.id, id), isNull(publishRecords.submitStartedAt)))
    .returning({ id: publishRecords.id });
  return rows.length > 0;
}

/** The platform refused the submit outright, so nothing was created: a retry may send again. */
export async function releaseSubmit(db: Executor, id: string): Promise<void> {
  await db
    .update(publishRecords)
    .set({ submitStartedAt: null, updatedAt: sql`now()` })
    .where(and(eq(publishRecords.id, id), isNull(publishRecords.shareId)));
}

export type PublishChange = Partial<
  Pick<
    PublishRecordRow,
    'status' | 'officialStatus' | 'shareId' | 'postId' | 'reason' | 'reasonCategory' | 'submittedAt' | 'completedAt' | 'unconfirmedAt'
  >
>;

/**
 * Applies a change only if the record is still as the caller read it (status and post id), so of
 * two refreshers that saw the same change, one writes it. Undefined: someone else changed it first.
 */
export async function updateIfUnchanged(
  db: Executor,
  seen: PublishRecordRow,
  change: PublishChange,
): Promise<PublishRecordRow | undefined> {
  const [row] = await db
    .update(publishRecords)
    .set({ ...change, updatedAt: sql`now()` })
    .where(
      and(
        eq(publishRecords.id, seen.id),
        eq(publishRecords.status, seen.status),
        seen.postId === null ? isNull(publishRecords.postId) : eq(publishRecords.postId, seen.postId),
        seen.shareId === null ? isNull(publishRecords.shareId) : eq(publishRecords.shareId, seen.shareId),
      ),
    )
    .returning();
  return row;
}
