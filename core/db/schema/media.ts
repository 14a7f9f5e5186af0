import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { customers } from './tenancy';
import { seats, type SeatTrack } from './seats';
import type { PrecheckStatus, PublishStatus, VideoStatus } from '../../vocabulary';

/**
 * The columns every media row starts with: its id, the customer and seat it belongs to, and the
 * track, copied from the seat when the row is made, so a later rebind of the seat cannot move it.
 * A function: each table needs builders of its own.
 */
function ownedBySeat() {
  return {
    id: text('id').primaryKey(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    seatId: text('seat_id')
      .notNull()
      .references(() => seats.id),
    track: text('track').$type<SeatTrack>().notNull(),
  };
}

export { VIDEO_STATUSES, type VideoStatus } from '../../vocabulary';
export const VIDEO_SOURCES = ['multipart', 'remote'] as const;
export type VideoSource = (typeof VIDEO_SOURCES)[number];

export const videos = pgTable(
  'videos',
  {
    ...ownedBySeat(),
    status: text('status').$type<VideoStatus>().notNull(),
    source: text('source').$type<VideoSource>().notNull(),
    sourceUrl: text('source_url'),
    fileName: text('file_name'),
    /** Container recognised from the file's bytes (MP4, MOV, WEBM, …). */
    container: text('container'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    sha256: text('sha256'),
    /** Where the bytes are, relative to the media store; null once removed. */
    storageKey: text('storage_key'),
    /** Shop track: the file id from the shop's upload API, consumed by one post. */
    fileId: text('file_id'),
    /** Video track: when the signed URL was issued and when it (and the record) expires. */
    urlIssuedAt: timestamp('url_issued_at', { withTimezone: true, precision: 3 }),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }),
    /**
     * Video track: when a start of the lifetime workflow (the timer to expiresAt) was confirmed by
     * Temporal. Null on an available record means no start is known to have succeeded: the
     * workers' periodic repair starts one (docs/decisions/video-library.md, "Video expiry repair").
     */
    lifetimeStartedAt: timestamp('lifetime_started_at', { withTimezone: true, precision: 3 }),
    failureReason: text('failure_reason'),
    /**
     * Shop track: the publish record that holds the file id. Set once, under the row's lock, so
     * of two publishes of one file id only one reaches the platform; cleared only when the shop
     * refused the post outright (a refused post does not consume the file id).
     */
    publishRecordId: text('publish_record_id'),
    /** What the upload learned of the file beyond its container, e.g. bytes fetched from a source. */
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index('videos_customer_idx').on(t.customerId, t.id),
    // The repair's two questions, each over the few rows that can answer it: available records
    // with no confirmed timer, and available records past their expiry.
    index('videos_lifetime_unconfirmed_idx')
      .on(t.urlIssuedAt)
      .where(sql`${t.status} = 'available' and ${t.track} = 'video' and ${t.lifetimeStartedAt} is null`),
    index('videos_available_expiry_idx')
      .on(t.expiresAt)
      .where(sql`${t.status} = 'available' and ${t.track} = 'video'`),
    // The outcome repair's question: records that ended lately, whose event may be missing.
    index('videos_ended_idx')
      .on(t.updatedAt)
      .where(sql`${t.status} in ('available', 'failed')`),
    check('videos_track_check', sql`${t.track} in ('video', 'shop')`),
    check('videos_status_check', sql`${t.status} in ('uploading', 'processing', 'available', 'failed', 'expired')`),
  ],
);

export { PUBLISH_STATUSES, type PublishStatus } from '../../vocabulary';
export const PUBLISH_KINDS = ['video', 'photo'] as const;
export type PublishKind = (typeof PUBLISH_KINDS)[number];
/** Which route accepted the publish: the v1.3 mirror or the deprecated one. */
export const PUBLISH_CHANNELS = ['v1.3', 'legacy'] as const;
export type PublishChannel = (typeof PUBLISH_CHANNELS)[number];

export const publishRecords = pgTable(
  'publish_records',
  {
    ...ownedBySeat(),
    kind: text('kind').$type<PublishKind>().notNull(),
    channel: text('channel').$type<PublishChannel>().notNull(),
    /** The account the publish went to (businessId or creatorUserOpenId), as bound at the time. */
    accountId: text('account_id').notNull(),
    /** The library record published, when the media came from the library. */
    videoId: text('video_id').references(() => videos.id),
    /** The official request, without credentials: what the workflow sends, once. */
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    draft: boolean('draft').notNull().default(false),
    status: text('status').$type<PublishStatus>().notNull(),
    officialStatus: text('official_status'),
    /** The official handle: share id (video track) or video id (shop track). */
    shareId: text('share_id'),
    postId: text('post_id'),
    reason: text('reason'),
    reasonCategory: text('reason_category'),
    /** Set before the official submit call: a retry that finds it set without a shareId must not send again. */
    submitStartedAt: timestamp('submit_started_at', { withTimezone: true, precision: 3 }),
    submittedAt: timestamp('submitted_at', { withTimezone: true, precision: 3 }),
    completedAt: timestamp('completed_at', { withTimezone: true, precision: 3 }),
    /**
     * When the service stopped following a publish the platform never confirmed either way: the
     * status stays the last one known. Cleared if a later status query finds a final status.
     */
    unconfirmedAt: timestamp('unconfirmed_at', { withTimezone: true, precision: 3 }),
    workflowId: text('workflow_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('publish_records_customer_idx').on(t.customerId, t.id),
    uniqueIndex('publish_records_share_key').on(t.track, t.shareId),
    check(
      'publish_records_status_check',
      sql`${t.status} in ('submitted', 'publish_processing', 'publish_complete', 'publish_failed', 'publish_draft_inbox', 'service_error')`,
    ),
  ],
);

export { PRECHECK_STATUSES, type PrecheckStatus } from '../../vocabulary';

export const prechecks = pgTable(
  'prechecks',
  {
    ...ownedBySeat(),
    accountId: text('account_id').notNull(),
    videoId: text('video_id')
      .notNull()
      .references(() => videos.id),
    fileId: text('file_id').notNull(),
    productId: text('product_id').notNull(),
    productTitle: text('product_title').notNull(),
    status: text('status').$type<PrecheckStatus>().notNull(),
    officialTaskId: text('official_task_id'),
    /** passed or failed, per dimension, once known. */
    violation: text('violation'),
    quality: text('quality'),
    issues: jsonb('issues').$type<Record<string, unknown>[]>().notNull().default([]),
    reason: text('reason'),
    /** The UTC day the pre-check counts against the account's daily quota. */
    quotaDay: text('quota_day').notNull(),
    workflowId: text('workflow_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index('prechecks_customer_idx').on(t.customerId, t.id),
    index('prechecks_quota_idx').on(t.track, t.accountId, t.quotaDay),
    check('prechecks_status_check', sql`${t.status} in ('submitted', 'processing', 'passed', 'failed', 'service_error')`),
  ],
);
