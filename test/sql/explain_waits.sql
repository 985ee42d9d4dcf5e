-- EXPLAIN (ANALYZE, WAITS): the option's rules and the shape of its output
-- in every format (PostgreSQL 18 and later; earlier servers refuse the
-- option: explain_waits_1.out; 19 names the UNION's subquery otherwise:
-- explain_waits_2.out). Times and counts are masked; the TAP test
-- t/330_explain_waits.pl checks the values.

-- Keeps each node's Timeout/PgSleep (the waits these statements make on
-- purpose), masked; drops other events (catalog reads of a cold cache) and
-- the waits outside nodes, which vary from run to run.
CREATE FUNCTION explain_waits(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    ln text;
BEGIN
    FOR ln IN EXECUTE query LOOP
        CONTINUE WHEN ln ~ 'Waits Outside Nodes:';
        IF ln ~ 'Waits:' THEN
            CONTINUE WHEN ln !~ 'Timeout/PgSleep';
            ln := regexp_replace(ln, 'Waits: .*', 'Waits: Timeout/PgSleep N ms (N calls)');
        END IF;
        RETURN NEXT ln;
    END LOOP;
END
$$;

-- Refused without ANALYZE, as TIMING is.
EXPLAIN (WAITS) SELECT 1;
EXPLAIN (WAITS, ANALYZE false) SELECT 1;
-- Off: EXPLAIN ANALYZE as before.
EXPLAIN (ANALYZE, WAITS false, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT 1;

-- Only the node that slept shows the sleeps: the second branch of the
-- Append, not the first nor the Append or the Aggregate above it.
SELECT explain_waits($q$
EXPLAIN (ANALYZE, WAITS, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM (
  SELECT x FROM (VALUES (1), (2)) a(x)
  UNION ALL
  SELECT y FROM (VALUES (1), (2), (3)) b(y) WHERE pg_sleep(0.01) IS NOT NULL) s
$q$);

-- Structured formats carry every node's list under one key, and the waits
-- outside nodes at plan level.
CREATE FUNCTION explain_json(query text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    j json;
BEGIN
    EXECUTE query INTO j;
    RETURN j::jsonb;
END
$$;
CREATE FUNCTION explain_json_text(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    doc text;
BEGIN
    EXECUTE query INTO doc;
    RETURN QUERY SELECT regexp_split_to_table(doc, E'\n');
END
$$;
WITH p AS (
  SELECT explain_json($q$
    EXPLAIN (ANALYZE, WAITS, FORMAT JSON, COSTS OFF, BUFFERS OFF)
    SELECT count(*) FROM (VALUES (1), (2), (3)) b(y) WHERE pg_sleep(0.01) IS NOT NULL
  $q$) AS j)
SELECT jsonb_typeof(j -> 0 -> 'Waits Outside Nodes') AS outside,
       jsonb_typeof(j -> 0 -> 'Plan' -> 'Waits') AS aggregate_waits,
       jsonb_path_query_array(j, 'strict $[0].Plan.Plans[0].Waits[*]."Wait Event"') ? 'PgSleep' AS scan_slept,
       jsonb_path_query_first(j, 'strict $[0].Plan.Plans[0].Waits[*] ? (@."Wait Event" == "PgSleep")')
         ?& ARRAY['Wait Event Type', 'Wait Event', 'Time', 'Calls'] AS keys,
       (jsonb_path_query_first(j, 'strict $[0].Plan.Plans[0].Waits[*] ? (@."Wait Event" == "PgSleep").Calls'))::int >= 3
         AS three_sleeps
  FROM p;
-- YAML: the same keys (the lines naming them or the sleep).
SELECT ln AS yaml
  FROM explain_json_text($q$
EXPLAIN (ANALYZE, WAITS, FORMAT YAML, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM (VALUES (1), (2)) b(y) WHERE pg_sleep(0.01) IS NOT NULL
$q$) AS ln
 WHERE ln ~ '(Waits|Timeout|PgSleep)';

-- A prepared statement, CREATE TABLE AS: the same.
PREPARE sleepy AS SELECT count(*) FROM (VALUES (1), (2)) b(y) WHERE pg_sleep(0.01) IS NOT NULL;
SELECT explain_waits('EXPLAIN (ANALYZE, WAITS, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) EXECUTE sleepy');
SELECT explain_waits($q$
EXPLAIN (ANALYZE, WAITS, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
CREATE TEMP TABLE slept AS SELECT y FROM (VALUES (1), (2)) b(y) WHERE pg_sleep(0.01) IS NOT NULL
$q$);
SELECT count(*) FROM slept;

-- An error inside the EXPLAIN disarms it: the next plain EXPLAIN ANALYZE
-- shows no waits, the next EXPLAIN (ANALYZE, WAITS) shows its own.
EXPLAIN (ANALYZE, WAITS, COSTS OFF) SELECT 1 / 0;
SELECT explain_waits($q$
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM (VALUES (1), (2)) b(y) WHERE pg_sleep(0.01) IS NOT NULL
$q$);
BEGIN;
SAVEPOINT s;
EXPLAIN (ANALYZE, WAITS, COSTS OFF) SELECT 1 / 0;
ROLLBACK TO SAVEPOINT s;
SELECT explain_waits($q$
EXPLAIN (ANALYZE, WAITS, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM (VALUES (1), (2)) b(y) WHERE pg_sleep(0.01) IS NOT NULL
$q$);
COMMIT;

-- Any user who may run the statement may explain it with its waits; the
-- setting that hands the EXPLAIN to parallel workers is not a user's.
CREATE ROLE regress_explain_waits;
SET ROLE regress_explain_waits;
SELECT explain_waits($q$
EXPLAIN (ANALYZE, WAITS, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM (VALUES (1), (2)) b(y) WHERE pg_sleep(0.01) IS NOT NULL
$q$);
SET pg_stat_waits.explain_token = 5;
RESET ROLE;
DROP ROLE regress_explain_waits;

DROP FUNCTION explain_waits(text);
DROP FUNCTION explain_json(text);
DROP FUNCTION explain_json_text(text);
DEALLOCATE sleepy;
