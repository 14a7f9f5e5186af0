-- Batched metering draws several tokens per statement; "drawn" says how many were given.
ALTER TABLE "rate_limit_buckets" ADD COLUMN "drawn" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "rate_limit_buckets" DROP COLUMN "allowed";