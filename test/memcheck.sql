-- Exercised under valgrind memcheck by test/lib/suite_memcheck.sh.
CREATE EXTENSION pg_stat_waits;
SELECT count(*) > 0 AS memcheck_activity_rows FROM pg_stat_waits_activity;
SELECT count(*) AS memcheck_status_rows FROM pg_stat_waits_status;
SET pg_stat_waits.track = 'all';
CREATE TABLE t AS SELECT g AS id FROM generate_series(1, 1000) g;
BEGIN;
SELECT count(*) FROM t;
DECLARE c CURSOR FOR SELECT * FROM t;
FETCH 10 FROM c;
COMMIT;
DO $$ BEGIN PERFORM count(*) FROM t; END $$;
SELECT 1/0;
SAVEPOINT s;
SELECT 'memcheck_done' AS marker;
