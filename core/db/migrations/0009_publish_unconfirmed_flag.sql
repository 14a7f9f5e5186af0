ALTER TABLE "publish_records" DROP CONSTRAINT "publish_records_status_check";--> statement-breakpoint
ALTER TABLE "publish_records" ADD COLUMN "unconfirmed_at" timestamp (3) with time zone;--> statement-breakpoint
-- publish_unconfirmed was a seventh status: such records keep the last status the platform gave
-- (processing when it reported one, else submitted) and are flagged unconfirmed instead.
UPDATE "publish_records" SET
  "unconfirmed_at" = coalesce("completed_at", "updated_at"),
  "completed_at" = NULL,
  "status" = CASE WHEN "official_status" IS NULL THEN 'submitted' ELSE 'publish_processing' END
WHERE "status" = 'publish_unconfirmed';--> statement-breakpoint
ALTER TABLE "publish_records" ADD CONSTRAINT "publish_records_status_check" CHECK ("publish_records"."status" in ('submitted', 'publish_processing', 'publish_complete', 'publish_failed', 'publish_draft_inbox', 'service_error'));
