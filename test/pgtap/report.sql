-- pg_stat_waits_bar: signature, properties, privileges, and that it agrees
-- with pct from pg_stat_waits_top when that function exists.
BEGIN;
SELECT plan(8);

SELECT has_function('pg_stat_waits_bar', ARRAY['double precision', 'integer']);
SELECT function_returns('pg_stat_waits_bar', ARRAY['double precision', 'integer'], 'text');
SELECT volatility_is('pg_stat_waits_bar', ARRAY['double precision', 'integer'], 'immutable');
SELECT is_strict('pg_stat_waits_bar', ARRAY['double precision', 'integer']);
SELECT ok(has_function_privilege('public', 'pg_stat_waits_bar(float8, int)', 'EXECUTE'), 'PUBLIC may draw bars');
SELECT is(pg_stat_waits_bar(0.5), repeat('█', 10), 'default width is 20 cells');
SELECT throws_ok('SELECT pg_stat_waits_bar(2)', '22023', NULL, 'a fraction above 1 is invalid_parameter_value');
-- Bars over pg_stat_waits_top's pct never error and never exceed the width
-- (skipped while this build has no pg_stat_waits_top; the query is a string
-- so that it is only parsed when the function exists).
SELECT CASE WHEN to_regprocedure('pg_stat_waits_top(interval, integer)') IS NULL
            THEN skip('pg_stat_waits_top is not available in this build', 1)
            ELSE results_eq($$SELECT coalesce(bool_and(length(pg_stat_waits_bar(pct / 100, 30)) <= 30), true)
                                FROM pg_stat_waits_top('1 hour', 100)$$,
                            $$VALUES (true)$$, 'bars over pg_stat_waits_top pct fit their width') END;

SELECT * FROM finish();
ROLLBACK;
