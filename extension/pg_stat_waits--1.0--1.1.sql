-- pg_stat_waits 1.0 -> 1.1
\echo Use "ALTER EXTENSION pg_stat_waits UPDATE TO '1.1'" to load this file. \quit

-- Each change below was also made in sql/pg_stat_waits.sql (the fresh install);
-- test/t/040_upgrade.pl compares the two.

-- Tables that never go blind: eviction counters in pg_stat_waits_status.
-- Exact timing per backend type: pg_stat_waits and pg_stat_waits_queries
-- gain a backend_type column. Views over changed functions are dropped and
-- created again, with their grants.
DROP VIEW pg_stat_waits_status;
DROP FUNCTION pg_stat_waits_status_internal();
CREATE FUNCTION pg_stat_waits_status_internal(
    OUT sampler_pid int, OUT sample_period_ms int, OUT samples_taken bigint,
    OUT last_sample_time timestamptz, OUT history_size int, OUT history_used int,
    OUT profile_entries int, OUT profile_max int, OUT profile_dropped bigint, OUT timing bool,
    OUT interposed text[], OUT shmem_bytes bigint, OUT stats_reset timestamptz,
    OUT sampler_lag_ms float8, OUT profile_evicted bigint, OUT buckets_evicted bigint,
    OUT queries_evicted bigint, OUT queries_dropped bigint)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_status_internal';

CREATE VIEW pg_stat_waits_status AS
    SELECT * FROM pg_stat_waits_status_internal();
GRANT SELECT ON pg_stat_waits_status TO PUBLIC;

DROP VIEW pg_stat_waits;
DROP FUNCTION pg_stat_waits_internal();
CREATE FUNCTION pg_stat_waits_internal(
    OUT wait_event_type text, OUT wait_event text, OUT calls bigint,
    OUT total_time float8, OUT mean_time float8, OUT max_time float8, OUT backend_type text)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_internal';

CREATE VIEW pg_stat_waits AS
    SELECT * FROM pg_stat_waits_internal();
GRANT SELECT ON pg_stat_waits TO PUBLIC;

DROP VIEW pg_stat_waits_queries;
DROP FUNCTION pg_stat_waits_queries_internal();
CREATE FUNCTION pg_stat_waits_queries_internal(
    OUT queryid bigint, OUT datid oid, OUT usesysid oid, OUT wait_event_type text,
    OUT wait_event text, OUT calls bigint, OUT total_time float8, OUT backend_type text)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_queries_internal';

CREATE VIEW pg_stat_waits_queries AS
    SELECT * FROM pg_stat_waits_queries_internal();
GRANT SELECT ON pg_stat_waits_queries TO PUBLIC;

-- Test-only functions leave the product: fault injection and the wrapper
-- benchmark are in the test module pg_stat_waits_test. A 1.0 installed by
-- this library never had them (see pg_stat_waits--1.0.sql).
DROP FUNCTION IF EXISTS pg_stat_waits_inject_sampler_fault();
DROP FUNCTION IF EXISTS pg_stat_waits_bench_wrapper(text, bigint);

-- Executions told apart and lock blockers: pg_stat_waits_history gains
-- query_start, blockers and blocker_details; pg_stat_waits_activity gains
-- blockers; pg_stat_waits_execution_profile() is new.
DROP VIEW pg_stat_waits_activity;
DROP FUNCTION pg_stat_waits_activity_internal();
CREATE FUNCTION pg_stat_waits_activity_internal(
    OUT pid int, OUT leader_pid int, OUT backend_type text, OUT datid oid, OUT usesysid oid,
    OUT state text, OUT wait_event_type text, OUT wait_event text, OUT wait_time float8,
    OUT queryid bigint, OUT top_queryid bigint, OUT query_start timestamptz, OUT blockers int[])
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_activity_internal';

CREATE VIEW pg_stat_waits_activity AS
    SELECT * FROM pg_stat_waits_activity_internal();
GRANT SELECT ON pg_stat_waits_activity TO PUBLIC;

DROP VIEW pg_stat_waits_history;
DROP FUNCTION pg_stat_waits_history_internal();
CREATE FUNCTION pg_stat_waits_history_internal(
    OUT sample_time timestamptz, OUT pid int, OUT leader_pid int, OUT backend_type text,
    OUT datid oid, OUT usesysid oid, OUT state text, OUT wait_event_type text, OUT wait_event text,
    OUT queryid bigint, OUT top_queryid bigint, OUT query_start timestamptz, OUT blockers int[],
    OUT blocker_details jsonb)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_history_internal';

CREATE VIEW pg_stat_waits_history AS
    SELECT * FROM pg_stat_waits_history_internal();
GRANT SELECT ON pg_stat_waits_history TO PUBLIC;

CREATE FUNCTION pg_stat_waits_execution_profile(pid int, query_start timestamptz,
    OUT wait_event_type text, OUT wait_event text, OUT samples bigint, OUT est_time float8)
    RETURNS SETOF record
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_execution_profile';

-- Slow executions: the last 1000 top-level runs (exact timing on) that
-- reached pg_stat_waits.capture_min_duration, oldest first. waits is a jsonb
-- array of {wait_event_type, wait_event, calls, time_ms}, heaviest first, at
-- most 8 events and one more row ('Other', 'N other events') summing the
-- rest; blockers a jsonb array of {pid, state, wait_event_type, wait_event,
-- queryid}, the lock blockers the sampler saw during the run. query and
-- queryid are NULL on other users' rows, as in pg_stat_activity.
CREATE FUNCTION pg_stat_waits_executions_internal(
    OUT started timestamptz, OUT ended timestamptz, OUT pid int, OUT datid oid, OUT usesysid oid,
    OUT queryid bigint, OUT query text, OUT elapsed float8, OUT cpu float8, OUT waits jsonb,
    OUT blockers jsonb)
    RETURNS SETOF record
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'pg_stat_waits_executions_internal';

CREATE VIEW pg_stat_waits_executions AS
    SELECT * FROM pg_stat_waits_executions_internal();
GRANT SELECT ON pg_stat_waits_executions TO PUBLIC;
