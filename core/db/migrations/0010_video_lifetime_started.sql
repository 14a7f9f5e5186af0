-- Records made available before this column existed start with it null: the workers' expiry
-- repair asks Temporal for each one's lifetime workflow once (starting it where none runs) and
-- then marks it.
ALTER TABLE "videos" ADD COLUMN "lifetime_started_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "videos_lifetime_unconfirmed_idx" ON "videos" USING btree ("url_issued_at") WHERE "videos"."status" = 'available' and "videos"."track" = 'video' and "videos"."lifetime_started_at" is null;--> statement-breakpoint
CREATE INDEX "videos_available_expiry_idx" ON "videos" USING btree ("expires_at") WHERE "videos"."status" = 'available' and "videos"."track" = 'video';