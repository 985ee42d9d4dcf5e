-- pg_stat_waits_bar: signature, properties, privileges, and that it agrees
-- with pct from pg_stat_waits_top.
BEGIN;
SELECT plan(9);

SELECT has_function('pg_stat_waits_bar', ARRAY['double precision', 'integer']);
SELECT function_returns('pg_stat_waits_bar', ARRAY['double precision', 'integer'], 'text');
SELECT volatility_is('pg_stat_waits_bar', ARRAY['double precision', 'integer'], 'immutable');
SELECT is_strict('pg_stat_waits_bar', ARRAY['double precision', 'integer']);
SELECT ok(has_function_privilege('public', 'pg_stat_waits_bar(float8, int)', 'EXECUTE'), 'PUBLIC may draw bars');
SELECT is(pg_stat_waits_bar(0.5), repeat('█', 10), 'default width is 20 cells');
SELECT throws_ok('SELECT pg_stat_waits_bar(2)', '22023', NULL, 'a fraction above 1 is invalid_parameter_value');
-- Bars over pg_stat_waits_top's pct never error and never exceed the width.
-- A sleep first, so that the sampler (10 ms) has rows for the check to
-- cover: with no rows the check would pass vacuously, so it is asserted too.
SELECT pg_sleep(0.3);
SELECT cmp_ok((SELECT count(*)::int FROM pg_stat_waits_top('1 hour', 100)), '>', 0,
              'pg_stat_waits_top has rows to draw bars for');
SELECT results_eq($$SELECT bool_and(length(pg_stat_waits_bar(pct / 100, 30)) <= 30)
                    FROM pg_stat_waits_top('1 hour', 100)$$,
                  $$VALUES (true)$$, 'bars over pg_stat_waits_top pct fit their width');

SELECT * FROM finish();
ROLLBACK;
