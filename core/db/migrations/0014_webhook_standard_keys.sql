ALTER TABLE "webhook_endpoints" ADD COLUMN "standard_key" text;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "previous_standard_key" text;