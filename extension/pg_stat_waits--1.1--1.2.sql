-- pg_stat_waits 1.1 -> 1.2
\echo Use "ALTER EXTENSION pg_stat_waits UPDATE TO '1.2'" to load this file. \quit

-- The change below was also made in sql/pg_stat_waits.sql (the fresh install);
-- test/t/040_upgrade.pl compares the two.

-- pg_stat_waits_status gains cpu_count: the number of CPUs the server may
-- run on, the line average active sessions are read against. The view over
-- the changed function is dropped and created again, with its grant.
DROP VIEW pg_stat_waits_status;
DROP FUNCTION pg_stat_waits_status_internal();
CREATE FUNCTION pg_stat_waits_status_internal(
    OUT sampler_pid int, OUT sample_period_ms int, OUT samples_taken bigint,
    OUT last_sample_time timestamptz, OUT history_size int, OUT history_used int,
    OUT profile_entries int, OUT profile_max int, OUT profile_dropped bigint, OUT timing bool,
    OUT interposed text[], OUT shmem_bytes bigint, OUT stats_reset timestamptz,
    OUT sampler_lag_ms float8, OUT profile_evicted bigint, OUT buckets_evicted bigint,
    OUT queries_evicted bigint, OUT queries_dropped bigint, OUT cpu_count int)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_status_internal';

CREATE VIEW pg_stat_waits_status AS
    SELECT * FROM pg_stat_waits_status_internal();
GRANT SELECT ON pg_stat_waits_status TO PUBLIC;
