DROP TABLE "delivery_leases" CASCADE;--> statement-breakpoint
DROP INDEX "deliveries_workflow_key";--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "attempts_made" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "next_attempt_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "lease_until" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "lease_owner" text;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "task_queue" text;--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_initial_key" ON "deliveries" USING btree ("event_id","endpoint_id") WHERE reason = 'initial';--> statement-breakpoint
CREATE INDEX "deliveries_due_idx" ON "deliveries" USING btree ("endpoint_id","next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
-- Deliveries still pending under their own workflows move to their endpoint's queue, due now, with
-- the attempts they already made; their old workflows find them taken over and end without sending.
UPDATE "deliveries" AS d SET "next_attempt_at" = now(), "attempts_made" = (SELECT count(*) FROM "delivery_attempts" a WHERE a."delivery_id" = d."id"), "workflow_id" = 'endpoint-deliveries-' || d."endpoint_id" WHERE d."status" = 'pending';
