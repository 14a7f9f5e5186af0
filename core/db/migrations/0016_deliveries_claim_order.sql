ALTER TABLE "delivery_attempts" DROP CONSTRAINT "delivery_attempts_delivery_id_deliveries_id_fk";
--> statement-breakpoint
DROP INDEX "deliveries_due_idx";--> statement-breakpoint
CREATE INDEX "deliveries_due_idx" ON "deliveries" USING btree ("endpoint_id","next_attempt_at","id") WHERE status = 'pending';