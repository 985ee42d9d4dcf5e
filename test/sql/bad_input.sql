-- Every SQL function with NULL, negative, zero, huge and unknown arguments:
-- a clear error or a documented empty result, never a crash.
CREATE EXTENSION IF NOT EXISTS pg_stat_waits;
\set VERBOSITY terse

-- pg_stat_waits_top(since, n)
SELECT count(*) FROM pg_stat_waits_top(NULL);
SELECT count(*) FROM pg_stat_waits_top('5 min', NULL);
SELECT * FROM pg_stat_waits_top('-5 min');
SELECT * FROM pg_stat_waits_top('0');
SELECT * FROM pg_stat_waits_top('5 min', 0);
SELECT * FROM pg_stat_waits_top('5 min', -1);
SELECT count(*) >= 0 AS answers FROM pg_stat_waits_top('100 years', 2147483647);
SELECT count(*) >= 0 AS answers FROM pg_stat_waits_top('infinity');
-- positive as a whole: '1 day -1 hour' reaches back 23 hours
SELECT count(*) >= 0 AS answers FROM pg_stat_waits_top('1 day -1 hour');
SELECT * FROM pg_stat_waits_top('-1 day 1 hour');
SELECT * FROM pg_stat_waits_top('100000000 years');
SELECT * FROM pg_stat_waits_top('1000000 years');

-- pg_stat_waits_timeline(since, bucket)
SELECT count(*) FROM pg_stat_waits_timeline(NULL);
SELECT count(*) FROM pg_stat_waits_timeline('1 hour', NULL);
SELECT * FROM pg_stat_waits_timeline('1000000 years');
SELECT * FROM pg_stat_waits_timeline('-1 hour');
SELECT * FROM pg_stat_waits_timeline('1 hour', '0 s');
SELECT * FROM pg_stat_waits_timeline('1 hour', '-1 min');
SELECT * FROM pg_stat_waits_timeline('1 hour', '1 month');
SELECT * FROM pg_stat_waits_timeline('1 hour', 'infinity');
SELECT count(*) >= 0 AS answers FROM pg_stat_waits_timeline('100 years', '1 min');
SELECT count(*) >= 0 AS answers FROM pg_stat_waits_timeline('1 hour', '-1 day 25 hours');
SELECT count(*) >= 0 AS answers FROM pg_stat_waits_timeline('1 hour', '36500000 days');
SELECT * FROM pg_stat_waits_timeline('1 hour', '2000000000 days');
SELECT * FROM pg_stat_waits_timeline('1 hour', '106751991 days 2562047 hours');

-- pg_stat_waits_histogram(type, event)
SELECT count(*) FROM pg_stat_waits_histogram(NULL, 'PgSleep');
SELECT count(*) FROM pg_stat_waits_histogram('Timeout', NULL);
SELECT * FROM pg_stat_waits_histogram('Timeout', 'NoSuchEvent');
SELECT * FROM pg_stat_waits_histogram('NoSuchType', 'PgSleep');
SELECT * FROM pg_stat_waits_histogram('', '');
-- a value is quoted in a message, not a megabyte of it
SELECT * FROM pg_stat_waits_histogram(repeat('x', 10485760), repeat('y', 10485760));
SELECT * FROM pg_stat_waits_histogram(repeat('é', 40), 'x');
SELECT count(*) AS buckets FROM pg_stat_waits_histogram('Timeout', 'PgSleep');
SELECT count(*) AS buckets FROM pg_stat_waits_histogram('CPU', 'CPU');
SELECT count(*) AS buckets FROM pg_stat_waits_histogram('Unreported', 'pread');

-- pg_stat_waits_bar(fraction, width)
SELECT pg_stat_waits_bar(NULL) IS NULL AS null_gives_null;
SELECT pg_stat_waits_bar(-0.1);
SELECT pg_stat_waits_bar(1.5);
SELECT pg_stat_waits_bar(0.5, 0);
SELECT pg_stat_waits_bar(0.5, 100000);
SELECT pg_stat_waits_bar('NaN');
SELECT length(pg_stat_waits_bar(0.5, 10)) AS ten_cells;

-- pg_stat_waits_execution_profile(pid, query_start)
SELECT * FROM pg_stat_waits_execution_profile(NULL, now());
SELECT * FROM pg_stat_waits_execution_profile(pg_backend_pid(), NULL);
SELECT * FROM pg_stat_waits_execution_profile(0, now());
SELECT * FROM pg_stat_waits_execution_profile(-5, now());
SELECT * FROM pg_stat_waits_execution_profile(pg_backend_pid(), 'infinity');
SELECT count(*) AS no_such_run FROM pg_stat_waits_execution_profile(pg_backend_pid(), '2000-01-01');

-- pg_stat_waits_bench_wrapper(mode, n), from the test module
CREATE EXTENSION pg_stat_waits_test;
SELECT pg_stat_waits_bench_wrapper('bogus', 10);
SELECT pg_stat_waits_bench_wrapper('off', -1);
SELECT pg_stat_waits_bench_wrapper(NULL, 10) IS NULL AS strict_null;
DROP EXTENSION pg_stat_waits_test;
