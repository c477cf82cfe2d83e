-- The inbox's raw bodies compressed with lz4 instead of pglz: Postgres spends a third to a half
-- less CPU storing a webhook whose body is over ~2 KB (pretty-printed Stripe events, backend CPU
-- per row in batches of 16: 49-52 against 28-30 µs at 2.2 KB, 87-98 against 45-46 at 4 KB,
-- 131-160 against 88-91 at 7.5 KB), reads it back as fast, and keeps it about a fifth larger until
-- retention prunes it (bench/inbox-compression.mjs, docs/scaling.md). Bodies Postgres does not
-- compress (under ~2 KB) are stored as before.
--
-- Live-safe: metadata only. Rows already stored stay pglz and read as before (Postgres keeps the
-- method per value); new rows are lz4, whichever release writes them. ALTER TABLE holds ACCESS
-- EXCLUSIVE for an instant; lock_timeout keeps it from queueing ingest's inserts behind a long
-- read of the inbox: then this migration fails (lock timeout) and `tally migrate` is run again.
-- A Postgres built without lz4 keeps pglz (a NOTICE says so).
SET LOCAL lock_timeout = '5s';
DO $$
BEGIN
  IF 'lz4' = ANY (SELECT unnest(enumvals) FROM pg_settings WHERE name = 'default_toast_compression') THEN
    ALTER TABLE inbox_events ALTER COLUMN raw_body SET COMPRESSION lz4;
  ELSE
    RAISE NOTICE 'this Postgres has no lz4: inbox_events.raw_body stays pglz';
  END IF;
END $$;
