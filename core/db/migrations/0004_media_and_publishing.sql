CREATE TABLE "publish_records" (
	"id" text PRIMARY KEY NOT NULL,
	"customer_id" text NOT NULL,
	"seat_id" text NOT NULL,
	"track" text NOT NULL,
	"kind" text NOT NULL,
	"channel" text NOT NULL,
	"account_id" text NOT NULL,
	"video_id" text,
	"request" jsonb NOT NULL,
	"draft" boolean DEFAULT false NOT NULL,
	"status" text NOT NULL,
	"official_status" text,
	"share_id" text,
	"post_id" text,
	"reason" text,
	"reason_category" text,
	"submit_started_at" timestamp (3) with time zone,
	"submitted_at" timestamp (3) with time zone,
	"completed_at" timestamp (3) with time zone,
	"workflow_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "publish_records_status_check" CHECK ("publish_records"."status" in ('submitted', 'publish_processing', 'publish_complete', 'publish_failed', 'publish_draft_inbox', 'service_error', 'publish_unconfirmed'))
);
--> statement-breakpoint
CREATE TABLE "videos" (
	"id" text PRIMARY KEY NOT NULL,
	"customer_id" text NOT NULL,
	"seat_id" text NOT NULL,
	"track" text NOT NULL,
	"status" text NOT NULL,
	"source" text NOT NULL,
	"source_url" text,
	"file_name" text,
	"container" text,
	"size_bytes" bigint,
	"sha256" text,
	"storage_key" text,
	"file_id" text,
	"url_issued_at" timestamp (3) with time zone,
	"expires_at" timestamp (3) with time zone,
	"failure_reason" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "videos_track_check" CHECK ("videos"."track" in ('video', 'shop')),
	CONSTRAINT "videos_status_check" CHECK ("videos"."status" in ('uploading', 'processing', 'available', 'failed', 'expired'))
);
--> statement-breakpoint
ALTER TABLE "publish_records" ADD CONSTRAINT "publish_records_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "publish_records" ADD CONSTRAINT "publish_records_seat_id_seats_id_fk" FOREIGN KEY ("seat_id") REFERENCES "public"."seats"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "publish_records" ADD CONSTRAINT "publish_records_video_id_videos_id_fk" FOREIGN KEY ("video_id") REFERENCES "public"."videos"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "videos" ADD CONSTRAINT "videos_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "videos" ADD CONSTRAINT "videos_seat_id_seats_id_fk" FOREIGN KEY ("seat_id") REFERENCES "public"."seats"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "publish_records_customer_idx" ON "publish_records" USING btree ("customer_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "publish_records_share_key" ON "publish_records" USING btree ("track","share_id");--> statement-breakpoint
CREATE INDEX "videos_customer_idx" ON "videos" USING btree ("customer_id","id");