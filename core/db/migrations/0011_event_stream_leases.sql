CREATE TABLE "event_stream_leases" (
	"id" text PRIMARY KEY NOT NULL,
	"customer_id" text NOT NULL,
	"credential" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "event_stream_leases_customer_idx" ON "event_stream_leases" USING btree ("customer_id");--> statement-breakpoint
CREATE INDEX "event_stream_leases_expires_idx" ON "event_stream_leases" USING btree ("expires_at");--> statement-breakpoint
-- Leases are renewed every few seconds while streams are open and mean nothing after a crash (the
-- streams they counted are gone with it), so the table skips the write-ahead log like the buckets.
ALTER TABLE "event_stream_leases" SET UNLOGGED;
