CREATE TABLE "prechecks" (
	"id" text PRIMARY KEY NOT NULL,
	"customer_id" text NOT NULL,
	"seat_id" text NOT NULL,
	"track" text NOT NULL,
	"account_id" text NOT NULL,
	"video_id" text NOT NULL,
	"file_id" text NOT NULL,
	"product_id" text NOT NULL,
	"product_title" text NOT NULL,
	"status" text NOT NULL,
	"official_task_id" text,
	"violation" text,
	"quality" text,
	"issues" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"reason" text,
	"quota_day" text NOT NULL,
	"workflow_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone,
	CONSTRAINT "prechecks_status_check" CHECK ("prechecks"."status" in ('submitted', 'processing', 'passed', 'failed', 'service_error'))
);
--> statement-breakpoint
ALTER TABLE "videos" ADD COLUMN "publish_record_id" text;--> statement-breakpoint
ALTER TABLE "prechecks" ADD CONSTRAINT "prechecks_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prechecks" ADD CONSTRAINT "prechecks_seat_id_seats_id_fk" FOREIGN KEY ("seat_id") REFERENCES "public"."seats"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prechecks" ADD CONSTRAINT "prechecks_video_id_videos_id_fk" FOREIGN KEY ("video_id") REFERENCES "public"."videos"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "prechecks_customer_idx" ON "prechecks" USING btree ("customer_id","id");--> statement-breakpoint
CREATE INDEX "prechecks_quota_idx" ON "prechecks" USING btree ("track","account_id","quota_day");