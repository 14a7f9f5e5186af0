-- Rate-limit buckets are rewritten on every API request. They are disposable (after a crash they
-- simply refill), so the table skips the write-ahead log: a request's commit then no longer waits
-- for a WAL flush while holding its key's bucket row, which otherwise serialises a key's requests.
ALTER TABLE "rate_limit_buckets" SET UNLOGGED;
