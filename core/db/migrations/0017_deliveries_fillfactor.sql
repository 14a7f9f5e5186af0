-- A delivery's claim updates only its lease, which no index holds: with room left on its page the
-- update is HOT and writes no index entry. Full pages made every claim write all five indexes.
ALTER TABLE "deliveries" SET (fillfactor = 70);
