CREATE TABLE "sign_in_buckets" (
	"bucket_key" text PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sign_in_known_addresses" (
	"key" text PRIMARY KEY NOT NULL,
	"signed_in_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sign_in_buckets_updated_idx" ON "sign_in_buckets" USING btree ("updated_at");--> statement-breakpoint
CREATE INDEX "sign_in_known_addresses_signed_in_idx" ON "sign_in_known_addresses" USING btree ("signed_in_at");