-- Intake routes events by endpoints it keeps in memory, and stores an event only while the
-- customer's routes_version still holds the value read with them. Every change that alters where
-- a customer's events go raises it, here, so that no code path can forget to: adding or removing
-- an endpoint, enabling or disabling it, changing its event types. Updates of other columns (the
-- failing streak, keys) leave it alone, so the busy ones cost nothing.
CREATE FUNCTION raise_routes_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE customers SET routes_version = routes_version + 1 WHERE id = OLD.customer_id;
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.customer_id IS DISTINCT FROM OLD.customer_id) THEN
    UPDATE customers SET routes_version = routes_version + 1 WHERE id = NEW.customer_id;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER webhook_endpoints_routes
  AFTER INSERT OR DELETE OR UPDATE OF customer_id, event_types, deleted_at, disabled_at ON webhook_endpoints
  FOR EACH ROW EXECUTE FUNCTION raise_routes_version();
