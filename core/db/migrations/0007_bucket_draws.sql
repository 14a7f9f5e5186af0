-- A metering statement draws several tokens at once; "drawn" says how many it gave. "allowed" is no
-- longer written, but the previous release writes it, so it stays (nullable) through a rolling upgrade.
ALTER TABLE "rate_limit_buckets" ALTER COLUMN "allowed" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "rate_limit_buckets" ADD COLUMN "drawn" integer DEFAULT 0 NOT NULL;