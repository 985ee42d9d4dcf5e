-- pg_stat_waits_bar: psql bars in eighths of a cell.
SET client_min_messages = warning;  -- same output whether or not an earlier test created it
CREATE EXTENSION IF NOT EXISTS pg_stat_waits;
RESET client_min_messages;
\set VERBOSITY terse

SELECT f, pg_stat_waits_bar(f, 4) AS bar, length(pg_stat_waits_bar(f, 4)) AS cells
  FROM unnest(ARRAY[0, 1.0/32, 2.0/32, 3.0/32, 4.0/32, 5.0/32, 6.0/32, 7.0/32, 0.25, 0.5, 0.999, 1]::float8[]) f;

-- Default width is 20 cells; a whole bar is exactly that wide.
SELECT length(pg_stat_waits_bar(1)) AS full_width, pg_stat_waits_bar(0.5) AS half;

-- 100 % computed as a sum of shares may exceed 1 by rounding: still a full bar.
SELECT pg_stat_waits_bar(0.1 + 0.2 + 0.7, 5) AS rounded_sum;

-- NULL in, NULL out.
SELECT pg_stat_waits_bar(NULL) IS NULL AS null_fraction, pg_stat_waits_bar(0.5, NULL) IS NULL AS null_width;

-- Bad input is refused, not clamped.
SELECT pg_stat_waits_bar(1.5);
SELECT pg_stat_waits_bar(-0.1);
SELECT pg_stat_waits_bar('NaN');
SELECT pg_stat_waits_bar(0.5, 0);
SELECT pg_stat_waits_bar(0.5, 1001);

-- How it reads next to a view (pg_stat_waits_top works the same way).
SELECT v AS value, pg_stat_waits_bar(v / max(v) OVER (), 10) AS bar
  FROM (VALUES (40.0), (25.0), (10.0)) t(v) ORDER BY v DESC;

-- Anyone may draw bars.
SELECT has_function_privilege('public', 'pg_stat_waits_bar(float8, int)', 'EXECUTE') AS public_can_use;
