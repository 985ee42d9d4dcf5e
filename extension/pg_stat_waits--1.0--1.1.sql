-- pg_stat_waits 1.0 -> 1.1
\echo Use "ALTER EXTENSION pg_stat_waits UPDATE TO '1.1'" to load this file. \quit

-- Each change below is also in pg_stat_waits--1.1.sql (the fresh install);
-- the upgrade test compares the two.

-- Test-only functions leave the product: fault injection and the wrapper
-- benchmark are in the test module pg_stat_waits_test.
DROP FUNCTION pg_stat_waits_inject_sampler_fault();
DROP FUNCTION pg_stat_waits_bench_wrapper(text, bigint);
